#!/bin/bash
# End-to-end blame (ctest e2e.<program>): build a program from this folder
# with ppw-cc -O2, run it (sampled for real), and check that `ppw-blame
# report` ranks first the variable VAR that the hot function HOT computes:
#
#   - VAR's inclusive blame is within 1 point of the top variable's (ties
#     are expected: a struct and its hot field, a pointer parameter and the
#     actual it is bound to);
#   - by the program's structure every sample in HOT's own code (not in
#     the libraries it calls: libomp's loop set-up) computes what HOT stores
#     into VAR (directly, or through the pointer parameter bound to it), so
#     VAR's samples are at least those, less the ones at lines that name
#     nothing (line 0, a prologue; 0.6% seen) at p = 1% and 4 sd
#     (docs/testing.md, "Sampled numbers");
#   - HOT holds at least share_floor(99%, n) of the samples in the program's
#     own code (the innermost frame in the binary: libomp's, libc's and
#     libppw's share depends on the machine), the rest being each program's
#     initialisation and printing, under 0.1% of its iterations (at each
#     case below).
#
# For omp_array, also the names (exact, whatever the sampling): the outlined
# loop is "main [omp parallel for, omp_array.c:LINE]" in `code`, LINE that
# of its pragma; a variable declared in the loop is main's, in that
# construct's context; and no output names compiler-made functions or
# shows libppw's frames (test/lib/names.sh).
#
# Each run prints its numbers, pass or fail.
#
#   check_e2e.sh PROGRAM BUILD_DIR
set -uo pipefail
program=$1 build=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
lib=$here/../lib
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ppw-e2e-$program.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

# An ASan-built plugin cannot load into clang, which is not ASan-built.
if nm -D --undefined-only "$build/lib/ppw.so" | grep -q __asan_; then
    echo "SKIP: the plugin is ASan-built" >&2
    exit 77
fi

# expected variable (name, declaring function), the function of the hot
# loop, and MORE: the program's argument for 4x its default work.
case $program in
struct_field) # update() writes s->energy[] on every iteration, s bound to &sim;
    # init: 4,096 stores into sim.mass against 60,000 x 4,096 updates
    var=sim func=main hot=update flags=() more=240000 ;;
omp_array) # field[i] = f(field[i]) in the parallel loop; init: calloc
    var=field func=main hot=main.omp_outlined_debug__ flags=(-fopenmp) more=12000 ;;
pthread_arg) # each worker stores its sum into job->result, job bound to &jobs[k]; init: none
    var=jobs func=main hot=worker flags=(-lpthread) more=600000000 ;;
inlined) # accumulate(), inlined into main, adds into histogram[]; init: 100,000
    # keys against 10,000 x 100,000 additions
    var=histogram func=main hot=accumulate flags=() more=40000 ;;
*) echo "unknown program $program" >&2; exit 2 ;;
esac

"$build/bin/ppw-cc" -O2 "$here/$program.c" -o "$program" "${flags[@]}" ||
    { echo "FAIL: cannot build $program" >&2; exit 1; }
# Passive waits: on a loaded 2-core machine, libomp's spinning barrier waits
# would otherwise take a large and variable share of the samples.  Two
# threads: on a machine with many cores, omp_array's 200,000-element loop
# would be split so thin that fork and join take most of its time.
# Enough samples: the floors above need HOT's own samples to tell 99% from
# a half lost (samples_needed(99, 50) is 1); 20 leave a margin.  Fewer, and
# the program runs again with 4x its work (MORE), then the test skips.
run() {
    rm -rf "$tmp/run"
    OMP_WAIT_POLICY=passive OMP_NUM_THREADS=2 PPW_OUTPUT=$tmp/run ./"$program" "$@" >out.txt ||
        { echo "FAIL: $program failed" >&2; exit 1; }
    "$build/bin/ppw-blame" report run --binary "./$program" --format json --top 50 >report.json ||
        { echo "FAIL: ppw-blame report: $(cat report.json)" >&2; exit 1; }
    "$build/bin/ppw-blame" dump run --what samples --format json >dump.json 2>dump.err ||
        { echo "FAIL: ppw-blame dump: $(cat dump.err)" >&2; exit 1; }
    own=$(jq --arg bin "$tmp/$program" '[.samples[] | select(.stack[0].module == $bin)] | length' \
        dump.json)
}
run
if [ "$own" -lt 20 ]; then
    echo "e2e.$program: $own samples in the program's own code; again with 4x the work ($more)"
    run "$more"
    [ "$own" -ge 20 ] ||
        { echo "SKIP: $own samples in the program's own code even with 4x the work" >&2; exit 77; }
fi
jq -L "$lib" --arg v "$var" --arg f "$func" --arg hot "$hot" --arg bin "$tmp/$program" \
    --slurpfile report report.json 'include "sampling";
    def in_hot: any(.stack[]; .function == $hot or any(.source[]; .function == $hot));
    [.samples[] | select(.stack[0].module == $bin)] as $own
    | ([$own[] | select(in_hot)] | length) as $hot_own
    | ([$report[0].variables[].inclusive] | max) as $top
    | ([$report[0].variables[] | select(.name == $v and .function == $f)][0]
       // {samples: -1, inclusive: -1}) as $var
    | {n: (.samples | length), var_samples: $var.samples, var_pct: $var.inclusive, top_pct: $top,
       hot_samples: $hot_own,
       var_floor: ($hot_own * 0.99 - sampling_z * ($hot_own * 0.01 * 0.99 | sqrt) | floor),
       own_code: ($own | length),
       hot_share_of_own: (if ($own | length) > 0 then 100 * $hot_own / ($own | length) else 0 end),
       hot_floor: share_floor(99; $own | length)}
    | .ok = (.var_pct >= .top_pct - 1 and .var_samples >= .var_floor and .hot_samples > 0
             and .hot_share_of_own >= .hot_floor)' dump.json >check.json ||
    { echo "FAIL: cannot read the report and the samples" >&2; exit 1; }
echo "e2e.$program: $var ($func) $(jq -c 'del(.ok)' check.json)"
if [ "$(jq .ok check.json)" != true ]; then
    echo "FAIL: expected $var ($func) first, blamed by all but 1% of $hot's samples, and $hot \
with 99% of the program's own samples; the top variables:" >&2
    jq -c '[.variables[0:5][] | {name, function, samples, inclusive}]' report.json >&2
    exit 1
fi

[ "$program" = omp_array ] || exit 0
line=$(grep -n '^#pragma omp parallel for' "$here/$program.c" | cut -d: -f1)
shown="main [omp parallel for, $program.c:$line]"
"$build/bin/ppw-blame" code run --binary "./$program" --format json >code.json ||
    { echo "FAIL: ppw-blame code: $(cat code.json)" >&2; exit 1; }
jq -e --arg s "$shown" --argjson line "$line" '.tree[0] | .function == "main" and
    any(.children[]; .function == $s and .call_line == $line)' code.json >/dev/null ||
    { echo "FAIL: code: no '$shown' called from main at line $line: \
$(jq -c '[.tree[0].children[] | {function, call_line}]' code.json)" >&2; exit 1; }
jq -e --arg s "$shown" '[.variables[] | select(.context // "" | endswith("> " + $s))] |
    length > 0 and all(.function == "main")' report.json >/dev/null ||
    { echo "FAIL: report: the variables of the loop are not main's in '$shown': \
$(jq -c '[.variables[] | {name, function, context}]' report.json)" >&2; exit 1; }
echo "e2e.$program: code and report name the loop '$shown'"
failures=0
fail() { echo "FAIL: $program: $*" >&2; failures=$((failures + 1)); }
. "$lib/names.sh"
source_names_only "$build/bin/ppw-blame" run "./$program"
# The commands that read the run alone name its GASP regions: built with
# --inst-functions and traced, the outlined loop is a region too, named
# from its linkage name (not sampled: every call is measured).
"$build/bin/ppw-cc" -O2 --inst-functions "$here/$program.c" -o inst "${flags[@]}" ||
    fail "cannot build with --inst-functions"
OMP_WAIT_POLICY=passive OMP_NUM_THREADS=2 PPW_MODE=profile,trace PPW_OUTPUT=$tmp/inst-run \
    ./inst 30 >out.txt || fail "the --inst-functions build failed"
for cmd in "profile" "profile --format json" "profile --format csv" "intrusion" \
    "intrusion --format json" "intrusion --format csv" "analyze" "analyze --format json" \
    "export --to chrome"; do
    # shellcheck disable=SC2086
    "$build/bin/ppw-blame" $cmd inst-run >names.txt 2>&1 || fail "ppw-blame $cmd: $(cat names.txt)"
    ! grep -q 'omp_outlined\|_debug__\|\.omp_task_entry' names.txt ||
        fail "ppw-blame $cmd names compiler-made functions: $(grep -m1 omp_ names.txt)"
done
grep -q "main \[omp parallel, $program.c:$line\]" names.txt ||
    fail "the chrome trace has no region 'main [omp parallel, $program.c:$line]'"
[ "$failures" -eq 0 ] || exit 1
