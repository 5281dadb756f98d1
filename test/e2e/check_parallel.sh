#!/bin/bash
# Parallel programs end to end (ctest e2e.par_<program>): build a pthread or
# OpenMP program from this folder with ppw-cc -O2, run it sampled for real on
# 2 threads, and check the three answers a user reads:
#
#  1. data-centric (`report`): the variable the parallel code computes,
#     declared in main, ranks first (within 1 point of the top, as in
#     check_e2e.sh) with at least MIN% inclusive blame: the blame crossed the
#     spawn (outlined function, task body, start routine) back to the
#     parent's variable;
#  2. code-centric (`code --flat`): the function holding the hot loop has
#     the most self samples and at least CODE_MIN% inclusive, and main is on
#     >= 99% of the stacks (the worker stacks are glued to it);
#  3. contexts (`dump`): of the samples in a spawned context (a worker
#     thread, or a spawn tag), >= 99% reach main *through a spawn record*
#     (a glued frame of main that comes from a spawn), >= 10% of all samples
#     were taken on threads other than the main thread (so unglued workers
#     would fail the test), and >= 50% have the spawn kind the program makes
#     (KIND, at least NKIND times in the chain: two nested parallel regions,
#     explicit tasks).
#
#   check_parallel.sh PROGRAM BUILD_DIR
set -uo pipefail
program=$1 build=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ppw-e2e-par-$program.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
blame=$build/bin/ppw-blame
fail() { echo "FAIL: $program: $*" >&2; exit 1; }

# An ASan-built plugin cannot load into clang, which is not ASan-built.
if nm -D --undefined-only "$build/lib/ppw.so" | grep -q __asan_; then
    echo "SKIP: the plugin is ASan-built" >&2
    exit 77
fi

# Expected variable (name, declaring function) and its minimum inclusive %;
# the function of the hot loop and its minimum inclusive %; the spawn kind
# expected in the worker samples' chains and how many times.  Blame goes to
# what the sampled code writes, never to what it only reads.
args=() env=()
case $program in
pthread_arg) # the workers write their results through the struct argument
    var=jobs min=90 hot=worker code_min=90 kind=pthread nkind=1 flags=(-lpthread)
    args=(300000000) ;;
omp_reduction) # a and b are only read; every product is added into sum
    var=sum min=75 hot=main.omp_outlined_debug__ code_min=75 kind=omp-parallel nkind=1
    flags=(-fopenmp) ;;
omp_collapse) # each pixel's iterations end in image[y][x] = k
    var=image min=85 hot=main.omp_outlined_debug__ code_min=85 kind=omp-parallel nkind=1
    flags=(-fopenmp) ;;
omp_nested) # field, shared through both outlined levels, is written in the inner loop
    var=field min=90 hot=main.omp_outlined_debug__.omp_outlined_debug__ code_min=90
    kind=omp-parallel nkind=2 flags=(-fopenmp) env=(OMP_MAX_ACTIVE_LEVELS=2) ;;
omp_tasks) # the leaf tasks write values[] through their firstprivate copy of the pointer
    var=values min=90 hot=fill code_min=90 kind=omp-task nkind=1 flags=(-fopenmp) ;;
omp_taskloop) # each task of the taskloop writes its block of out (shared)
    var=out min=90 hot=.omp_outlined. code_min=90 kind=omp-task nkind=1 flags=(-fopenmp) ;;
omp_sections) # each section ends by storing its sum into a field of result
    var=result min=90 hot=main.omp_outlined_debug__ code_min=90 kind=omp-parallel nkind=1
    flags=(-fopenmp) ;;
*) echo "unknown program $program" >&2; exit 2 ;;
esac

"$build/bin/ppw-cc" -O2 "$here/$program.c" -o "$program" "${flags[@]}" || fail "cannot build"
# Passive waits: on a loaded 2-core machine, libomp's spinning barrier waits
# would otherwise take a large and variable share of the samples.
env OMP_WAIT_POLICY=passive OMP_NUM_THREADS=2 "${env[@]}" PPW_OUTPUT="$tmp/run" \
    ./"$program" "${args[@]}" >out.txt || fail "the program failed"

# 1. Data-centric.
"$blame" report run --binary "./$program" --format json --top 50 >report.json ||
    fail "ppw-blame report: $(cat report.json)"
ok=$(jq --arg v "$var" --argjson min "$min" '
    ([.variables[].inclusive] | max) as $top
    | [.variables[] | select(.name == $v and .function == "main") | .inclusive] | first // -1
    | . >= $min and . >= $top - 1' report.json)
[ "$ok" = true ] || fail "expected $var (main) first with >= $min% inclusive; got: $(
    jq -c '[.total_samples, (.variables[0:5][] | [.name, .function, .inclusive])]' report.json)"
incl=$(jq --arg v "$var" '[.variables[] | select(.name == $v and .function == "main")][0].inclusive
    | floor' report.json)

# 2. Code-centric.
"$blame" code run --binary "./$program" --flat --top 0 --format json >code.json ||
    fail "ppw-blame code: $(cat code.json)"
ok=$(jq --arg hot "$hot" --argjson min "$code_min" '
    (.functions | max_by(.self)) as $top
    | ([.functions[] | select(.function == "main")][0].inclusive // -1) >= 99
      and $top.function == $hot and $top.inclusive >= $min' code.json)
[ "$ok" = true ] || fail "expected main >= 99% and $hot with the most self samples and >= \
$code_min% inclusive; got: $(jq -c '[.functions[0:6][] | [.function, .inclusive, .self]]' code.json)"
hot_incl=$(jq --arg hot "$hot" '[.functions[] | select(.function == $hot)][0].inclusive | floor' \
    code.json)

# 3. Contexts.
"$blame" dump run --what all --format json >dump.json 2>dump.err ||
    fail "ppw-blame dump: $(cat dump.err)"
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
ok=$(jq '.spawned > 0 and .reach >= 0.99 * .spawned and .off_main >= 0.1 * .total and
    .kind >= 0.5 * .spawned' contexts.json)
[ "$ok" = true ] || fail "expected >= 99% of the spawned samples to reach main through a spawn, \
>= 10% of all on other threads, >= 50% with $nkind x $kind; got: $(jq -c . contexts.json)"

jq -r --arg p "$program" --arg v "$var" --arg incl "$incl" --arg hot "$hot" --arg hi "$hot_incl" '
    "e2e.par_\($p): \($v) (main) \($incl)%, \($hot) \($hi)% of \(.total) samples; " +
    "\(.reach)/\(.spawned) spawned samples reach main through a spawn, \(.off_main) on workers"' \
    contexts.json
