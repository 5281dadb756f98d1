#!/bin/bash
# check_ssa.sh BUILD_DIR CLANG: variables named only by dbg.value (after
# SROA has put them in registers, as when ppw runs later through opt) are
# still found, with their blame sets, and a pointer parameter written
# through stays an exit variable.
set -euo pipefail
build=$1 clang=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
opt=$(dirname "$clang")/opt-19
[ -x "$opt" ] || opt=$(command -v opt-19)
"$clang" -g -O0 -Xclang -disable-O0-optnone -S -emit-llvm "$here/fig33.c" -o "$work/f.ll"
grep -q 'dbg.declare\|#dbg_declare' "$work/f.ll"
"$opt" -load-pass-plugin="$build/lib/ppw.so" -passes='function(sroa),ppw' -verify-each \
    "$work/f.ll" -o "$work/f.bc"
"$clang" -c "$work/f.bc" -o "$work/f.o"
"$build/bin/ppw-blame" static "$work/f.o" --function foo >"$work/out.txt"
status=0
for pattern in 'var i kind=local .*lines=7,9 exclusive=9( |$)' \
    'var temp kind=local .*lines=7,9,10 exclusive=10( |$)' \
    'var med kind=local .*lines=8 ' \
    'var x kind=param .*exit=yes .*exclusive=12,14 param=0'; do
    grep -Eq -- "$pattern" "$work/out.txt" || { echo "FAIL: no line matches: $pattern"; status=1; }
done
[ $status -eq 0 ] && echo "PASS [ssa]" || cat "$work/out.txt"
exit $status
