#!/bin/bash
# Parallel programs end to end (ctest e2e.par_<program>): build a pthread or
# OpenMP program from this folder with ppw-cc -O2, run it sampled for real on
# 2 threads, and check the three answers a user reads.  Every threshold
# follows docs/testing.md ("Sampled numbers"); the numbers each run got are
# printed whether it passes or not.
#
#  1. data-centric (`report`): the variable VAR the parallel code computes,
#     declared in main, ranks first (within 1 point of the top, as in
#     check_e2e.sh), and the blame crossed the spawn (outlined function,
#     task body, start routine) back to it: by the program's structure
#     every sample in the hot function HOT's own code (not in the libraries
#     it calls) computes what HOT stores into VAR, so VAR's samples are at
#     least those, less the ones at lines that name nothing (line 0, a
#     prologue: 0.6% seen) at p = 1% and 4 sd.  Unglued workers would leave
#     VAR with the main thread's half of HOT's samples.
#  2. code-centric (`code --flat`): HOT, under the name users see (SHOWN:
#     an outlined function is its source function and construct, "main [omp
#     parallel for, omp_reduction.c:19]", the line the pragma's), has the
#     most self samples, and of the
#     samples in the program's own code (the innermost frame in the binary,
#     not in libomp, libc or libppw, whose share depends on the machine: 1
#     to 16% seen) HOT's are at least share_floor(99%, n): each program's
#     initialisation and verification loops are under 0.2% of its
#     iterations (said at each case), rounded up to 1% for the outlined
#     wrappers' own code.  main is on >= 99% of the stacks: only start-up
#     before main and exit after it are not, about 2 samples of 1,300.
#  3. contexts (`dump`): of the samples in a spawned context (a worker
#     thread, or a spawn tag), >= 99% reach main *through a spawn record*
#     (a glued frame of main that comes from a spawn; gluing is not
#     sampled, the 1% is a thread's first instructions before its spawn
#     record is known), >= 50 samples were taken on threads other than the
#     main thread (so that unglued workers would fail the test; a dynamic
#     schedule lets a loaded machine starve a worker, so the test runs
#     again with 4x the work, then skips), and >= 50% have the spawn kind
#     the program makes (KIND, at least NKIND times in the chain: two
#     nested parallel regions, explicit tasks; nearly all the work is in
#     them).
#
#  4. names (test/lib/names.sh): no output of any view or export, in any
#     format, names compiler-made functions or shows libppw's frames.
#
#   check_parallel.sh PROGRAM BUILD_DIR
set -uo pipefail
program=$1 build=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
lib=$here/../lib
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ppw-e2e-par-$program.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
blame=$build/bin/ppw-blame
fail() { echo "FAIL: $program: $*" >&2; exit 1; }
skip() { echo "SKIP: $program: $*" >&2; exit 77; }

# An ASan-built plugin cannot load into clang, which is not ASan-built.
if nm -D --undefined-only "$build/lib/ppw.so" | grep -q __asan_; then
    echo "SKIP: the plugin is ASan-built" >&2
    exit 77
fi

# Expected variable (declared in main) and the function of the hot loop
# (as the dump names it, and SHOWN, as the views show it);
# the spawn kind expected in the worker samples' chains and how many times;
# ARGS scales the work (the default for each program when empty), MORE is 4x
# it.  Blame goes to what the sampled code writes, never to what it only
# reads.  "init" is the share of the program's own iterations outside HOT.
args=() more=() env=()
# shown PRAGMA [CONSTRUCT]: main's outlined code as the views show it, "main
# [omp CONSTRUCT, PROGRAM.c:LINE]", LINE that of "#pragma omp PRAGMA"
shown() {
    echo "main [omp ${2:-$1}, $program.c:$(grep -n "^#pragma omp $1\( \|\$\)" "$here/$program.c" |
        head -1 | cut -d: -f1)]"
}
case $program in
pthread_arg) # the workers write their results through the struct argument; init: none
    var=jobs hot=worker shown=worker kind=pthread nkind=1 flags=(-lpthread)
    args=(300000000) more=(1200000000) ;;
omp_reduction) # a and b are only read; every product is added into sum
    # init: 100k iterations filling a and b against 10000 x 100k in the
    # loop (0.001%), and their first touch: 400 page faults, at up to 12 us
    # each in a VM about 5 ms, 0.4% of the run
    var=sum hot=main.omp_outlined_debug__ shown=$(shown "parallel for")
    kind=omp-parallel nkind=1 flags=(-fopenmp) more=(40000) ;;
omp_collapse) # each pixel's iterations end in image[y][x] = k
    # init: the final sum over 120,000 pixels against their escape-time
    # iterations (mostly thousands each): under 0.1%
    var=image hot=main.omp_outlined_debug__ shown=$(shown "parallel for")
    kind=omp-parallel nkind=1 flags=(-fopenmp) more=(64000) ;;
omp_nested) # field, shared through both outlined levels, is written in the inner loop
    # init: none (calloc)
    var=field hot=main.omp_outlined_debug__.omp_outlined_debug__ shown=$(shown "parallel for")
    kind=omp-parallel nkind=2 flags=(-fopenmp) env=(OMP_MAX_ACTIVE_LEVELS=2) more=(240000) ;;
omp_tasks) # the leaf tasks write values[] through their firstprivate copy of the pointer
    # init: the splitting tasks, 64 of them over 131,072 x 2000 iterations
    var=values hot=fill shown=fill kind=omp-task nkind=1 flags=(-fopenmp) more=(8000) ;;
omp_taskloop) # each task of the taskloop writes its block of out (shared)
    # init: none (calloc)
    var=out hot=.omp_outlined. shown=$(shown taskloop) kind=omp-task nkind=1 flags=(-fopenmp)
    more=(4800) ;;
omp_sections) # each section ends by storing its sum into a field of result
    # init: none.  clang lowers sections to a worksharing loop over them,
    # which is all the static graph sees: "omp parallel for".
    var=result hot=main.omp_outlined_debug__ shown=$(shown "parallel sections" "parallel for")
    kind=omp-parallel nkind=1 flags=(-fopenmp) more=(4000000000) ;;
*) echo "unknown program $program" >&2; exit 2 ;;
esac

"$build/bin/ppw-cc" -O2 "$here/$program.c" -o "$program" "${flags[@]}" || fail "cannot build"
# Passive waits: on a loaded 2-core machine, libomp's spinning barrier waits
# would otherwise take a large and variable share of the samples.
run() {
    rm -rf "$tmp/run"
    env OMP_WAIT_POLICY=passive OMP_NUM_THREADS=2 "${env[@]}" PPW_OUTPUT="$tmp/run" \
        ./"$program" "$@" >out.txt || fail "the program failed"
    "$blame" dump run --what all --format json >dump.json 2>dump.err ||
        fail "ppw-blame dump: $(cat dump.err)"
}
# worker_samples: the samples taken on threads other than the main thread.
worker_samples() { jq '[.samples[] | select(.thread != 0)] | length' dump.json; }
run "${args[@]}"
if [ "$(worker_samples)" -lt 50 ]; then
    echo "e2e.par_$program: $(worker_samples) samples on workers; again with ${more[*]}"
    run "${more[@]}"
    [ "$(worker_samples)" -ge 50 ] ||
        skip "the machine gave the workers $(worker_samples) samples (50 needed) even with 4x the work"
fi

# 1. Data-centric.
"$blame" report run --binary "./$program" --format json --top 50 >report.json ||
    fail "ppw-blame report: $(cat report.json)"
"$blame" code run --binary "./$program" --flat --top 0 --format json >code.json ||
    fail "ppw-blame code: $(cat code.json)"
jq -L "$lib" --arg v "$var" --arg hot "$hot" --arg bin "$tmp/$program" \
    --slurpfile dump dump.json 'include "sampling";
    ([.variables[].inclusive] | max) as $top
    | ([$dump[0].samples[] | select(.stack[0].module == $bin and any(.stack[];
          .function == $hot or any(.source[]; .function == $hot)))] | length) as $h
    | ([.variables[] | select(.name == $v and .function == "main")][0] // {samples: -1, inclusive: -1})
    | {n: ($dump[0].samples | length), var_samples: .samples, var_pct: .inclusive, top_pct: $top,
       hot_own_samples: $h, floor: ($h * 0.99 - sampling_z * ($h * 0.01 * 0.99 | sqrt) | floor)}
    | .ok = (.var_pct >= .top_pct - 1 and .var_samples >= .floor and .hot_own_samples > 0)' \
    report.json >data.json || fail "cannot read the report"
echo "e2e.par_$program: data: $(jq -c 'del(.ok)' data.json)"
[ "$(jq .ok data.json)" = true ] || fail "expected $var (main) first and blamed by all but 1% of \
$hot's samples; the top: $(jq -c '[.variables[0:5][] | [.name, .function, .samples, .inclusive]]' \
    report.json)"

# 2. Code-centric.
jq -L "$lib" --arg hot "$hot" --arg shown "$shown" --slurpfile dump dump.json \
    --arg bin "$tmp/$program" '
    include "sampling";
    [$dump[0].samples[] | select(.stack[0].module == $bin)] as $own_samples
    | ($own_samples | length) as $own
    | ([$own_samples[] | select(any(.stack[]; .function == $hot or any(.source[]; .function == $hot)))] | length) as $hot_own
    | (.functions | max_by(.self)) as $top
    | {n: .total_samples, own_code: $own, hot_in_own: $hot_own, top_self: $top.function,
       hot_share_of_own: (if $own > 0 then 100 * $hot_own / $own else 0 end),
       floor: share_floor(99; $own),
       main_pct: ([.functions[] | select(.function == "main")][0].inclusive // -1)}
    | .ok = (.main_pct >= 99 and .top_self == $shown and .hot_share_of_own >= .floor)' \
    code.json >codecheck.json || fail "cannot read the code view"
echo "e2e.par_$program: code: $(jq -c 'del(.ok)' codecheck.json)"
[ "$(jq .ok codecheck.json)" = true ] || fail "expected main >= 99%, and $shown with the most self \
samples and at least the floor of the program's own samples; got: $(jq -c \
    '[.functions[0:6][] | [.function, .samples, .inclusive, .self]]' code.json)"

# 3. Contexts.
jq --arg kind "$kind" --argjson nkind "$nkind" '
    (.spawns | map({key: (.tag | tostring), value: .}) | from_entries) as $spawns
    | [.samples[] | select(.thread != 0 or .spawn_tag != 0)
       | {thread, reaches_main,
          via_spawn: any(.glued[]; .function == "main" and .spawn != null),
          kinds: (if .spawn_tag == 0 then 0 else
                  [$spawns[.spawn_tag | tostring].chain[] | select($spawns[tostring].kind == $kind)]
                  | length end)}] as $spawned
    | {total: (.samples | length), spawned: ($spawned | length),
       off_main: ([$spawned[] | select(.thread != 0)] | length),
       reach: ([$spawned[] | select(.reaches_main and .via_spawn)] | length),
       kind: ([$spawned[] | select(.kinds >= $nkind)] | length)}' dump.json >contexts.json ||
    fail "cannot read the dump"
echo "e2e.par_$program: contexts: $(jq -c . contexts.json)"
ok=$(jq '.spawned > 0 and .reach >= 0.99 * .spawned and .off_main >= 50 and
    .kind >= 0.5 * .spawned' contexts.json)
[ "$ok" = true ] || fail "expected >= 99% of the spawned samples to reach main through a spawn, \
>= 50 on other threads, >= 50% with $nkind x $kind"

# 4. Names.
. "$lib/names.sh"
source_names_only "$blame" run "./$program"
