#!/bin/bash
# check_nodebug.sh BUILD_DIR CLANG: functions without debug info are
# skipped with one warning per translation unit, and a unit compiled
# without -g at all still compiles, warns once, and runs unchanged.  The
# intrinsic wrappers of clang's own headers (static, always_inline,
# __nodebug__) are no user code: a unit using them gets no warning.
set -euo pipefail
build=$1 clang=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
plugin=$build/lib/ppw.so

"$clang" -g -O0 -fpass-plugin="$plugin" -c "$here/nodebug.c" -o "$work/a.o" 2>"$work/a.log"
if [ "$(grep -c 'ppw: warning:' "$work/a.log")" != 1 ] ||
    ! grep -q '2 functions without debug info' "$work/a.log"; then
    echo "FAIL: expected one warning naming 2 functions, got:"; cat "$work/a.log"; status=1
fi
"$build/bin/ppw-blame" static "$work/a.o" >"$work/a.txt"
grep -q '^function visible' "$work/a.txt" || { echo "FAIL: visible not analysed"; status=1; }
if grep -q 'hidden_' "$work/a.txt" | grep -q '^function'; then
    echo "FAIL: a function without debug info was exported"; status=1
fi

"$clang" -O2 -fpass-plugin="$plugin" "$here/nodebug.c" -o "$work/b" 2>"$work/b.log"
[ "$(grep -c 'ppw: warning:' "$work/b.log")" = 1 ] ||
    { echo "FAIL: expected one warning without -g:"; cat "$work/b.log"; status=1; }
"$work/b" || { echo "FAIL: program built without -g misbehaves"; status=1; }
if "$build/bin/ppw-blame" static "$work/b" >"$work/b.txt" 2>&1; then
    echo "FAIL: ppw-blame found graphs in a unit without debug info"; status=1
fi
for level in -O0 -O2; do
    "$clang" -g $level -fpass-plugin="$plugin" "$here/intrinsics.c" -o "$work/i" 2>"$work/i.log"
    if grep -q 'ppw: warning:' "$work/i.log"; then
        echo "FAIL: $level: a warning for clang's intrinsic wrappers:"; cat "$work/i.log"; status=1
    fi
    [ "$("$work/i")" = 10 ] || { echo "FAIL: $level: intrinsics.c printed $("$work/i")"; status=1; }
    "$build/bin/ppw-blame" static "$work/i" --function sum_pairs >"$work/i.txt" 2>&1 ||
        { echo "FAIL: $level: sum_pairs not analysed: $(head -3 "$work/i.txt")"; status=1; }
done
[ $status -eq 0 ] && echo "PASS [nodebug]"
exit $status
