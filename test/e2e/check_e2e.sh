#!/bin/bash
# End-to-end blame (ctest e2e.<program>): build a program from this folder
# with ppw-cc -O2, run it (sampled for real), and check that `ppw-blame
# report` ranks the variable that clearly dominates first: its inclusive
# blame is at least MIN percent and within 1 point of the top variable's
# (ties are expected: a struct and its hot field, a pointer parameter and
# the actual it is bound to).
#
#   check_e2e.sh PROGRAM BUILD_DIR
set -uo pipefail
program=$1 build=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ppw-e2e-$program.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

# An ASan-built plugin cannot load into clang, which is not ASan-built.
if nm -D --undefined-only "$build/lib/ppw.so" | grep -q __asan_; then
    echo "SKIP: the plugin is ASan-built" >&2
    exit 77
fi

# expected variable (name, declaring function) and minimum inclusive %.
case $program in
struct_field) var=sim func=main min=90 flags=() ;;
omp_array) var=field func=main min=40 flags=(-fopenmp) ;; # see OMP_WAIT_POLICY below
pthread_arg) var=jobs func=main min=90 flags=(-lpthread) ;;
inlined) var=histogram func=main min=75 flags=() ;;
*) echo "unknown program $program" >&2; exit 2 ;;
esac

"$build/bin/ppw-cc" -O2 "$here/$program.c" -o "$program" "${flags[@]}" ||
    { echo "FAIL: cannot build $program" >&2; exit 1; }
# Passive waits: on a loaded 2-core machine, libomp's spinning barrier waits
# would otherwise take a large and variable share of the samples.
OMP_WAIT_POLICY=passive PPW_OUTPUT=$tmp/run ./"$program" >out.txt ||
    { echo "FAIL: $program failed" >&2; exit 1; }
"$build/bin/ppw-blame" report run --binary "./$program" --format json --top 50 >report.json ||
    { echo "FAIL: ppw-blame report: $(cat report.json)" >&2; exit 1; }
ok=$(jq --arg v "$var" --arg f "$func" --argjson min "$min" '
    ([.variables[].inclusive] | max) as $top
    | [.variables[] | select(.name == $v and .function == $f) | .inclusive] | first // -1
    | . >= $min and . >= $top - 1' report.json)
if [ "$ok" != true ]; then
    echo "FAIL: expected $var ($func) first with >= $min% inclusive; got:" >&2
    jq -c '.total_samples, [.variables[0:5][] | {name, function, inclusive}]' report.json >&2
    exit 1
fi
jq -r --arg v "$var" '"e2e.'"$program"': \($v) \([.variables[] | select(.name == $v)][0].inclusive | floor)% of \(.total_samples) samples"' report.json
