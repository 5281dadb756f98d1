#!/bin/bash
# check_memcheck.sh BUILD_DIR CLANG: the pass's own memory safety.  ASan
# cannot be loaded into clang, so opt runs the plugin under valgrind's
# memcheck (invalid accesses, uninitialised reads, definite leaks) over the
# test programs, analysis and GASP instrumentation.  Skipped (77) when
# valgrind is absent.
set -euo pipefail
build=$1 clang=$2
here=$(cd "$(dirname "$0")" && pwd)
command -v valgrind >/dev/null || { echo "SKIP: valgrind not installed"; exit 77; }
opt=$(dirname "$clang")/opt-19
[ -x "$opt" ] || opt=$(command -v opt-19)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for case_name in fig33 fields torture omp_task pthread_struct pointer_swap gasp_calls; do
    cflags=$(sed -n 's/^# cflags: //p' "$here/$case_name.expect" 2>/dev/null || true)
    # shellcheck disable=SC2086
    "$clang" -g -O0 -Xclang -disable-llvm-passes -S -emit-llvm $cflags "$here/$case_name.c" \
        -o "$work/$case_name.ll"
    if ! PPW_PASS_OPTIONS=inst-functions valgrind -q --error-exitcode=9 --leak-check=full \
        --errors-for-leak-kinds=definite "$opt" -load-pass-plugin="$build/lib/ppw.so" \
        -passes=ppw,ppw-instrument -disable-output \
        "$work/$case_name.ll" 2>"$work/vg.log"; then
        echo "FAIL [$case_name]: memcheck errors"; cat "$work/vg.log"; status=1
    fi
done
[ $status -eq 0 ] && echo "PASS [memcheck]"
exit $status
