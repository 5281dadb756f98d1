#!/bin/bash
# Thread imbalance end to end (ctest e2e.imbalance_threads): build
# imbalance_threads.c with ppw-cc -O2 and run it sampled, once with one
# thread doing 3x the other's work and once balanced.  `ppw-blame imbalance`
# must give the top variable max/mean ~1.5 (3/(1+3)*2) and name the heavier
# thread, and < 1.15 for the balanced control; `report --thread T` must hold
# only thread T's samples (the light thread never blames the heavy job's
# array, jobs[].a).
#
#   check_imbalance.sh BUILD_DIR
set -uo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ppw-e2e-imbalance.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
blame=$build/bin/ppw-blame

if nm -D --undefined-only "$build/lib/ppw.so" | grep -q __asan_; then
    echo "SKIP: the plugin is ASan-built" >&2
    exit 77
fi
fail() { echo "FAIL: $*" >&2; exit 1; }

"$build/bin/ppw-cc" -O2 "$here/imbalance_threads.c" -o prog -lpthread || fail "cannot build"
PPW_OUTPUT=$tmp/heavy ./prog 3 >out.txt || fail "the 3x run failed"
PPW_OUTPUT=$tmp/even ./prog 1 >>out.txt || fail "the balanced run failed"

"$blame" imbalance heavy --binary ./prog --format json >heavy.json ||
    fail "imbalance: $(cat heavy.json)"
# The heavier thread: the one with the most samples.
heavy=$(jq '[.threads, .thread_samples] | transpose | max_by(.[1]) | .[0]' heavy.json)
light=$(jq '[.threads, .thread_samples] | transpose | min_by(.[1]) | .[0]' heavy.json)
ok=$(jq --argjson h "$heavy" '(.threads | length) == 2 and
    (.variables[0] | .name == "jobs" and .function == "main" and
     .max_over_mean >= 1.3 and .max_over_mean <= 1.7 and .max_thread == $h)' heavy.json)
[ "$ok" = true ] || fail "3x run: expected jobs (main) first with max/mean in [1.3, 1.7] on thread \
$heavy; got: $(jq -c '{threads, thread_samples, top: .variables[0]}' heavy.json)"
"$blame" imbalance heavy --binary ./prog >heavy.txt || fail "imbalance text"
grep -q '^ *1\.[3-7][0-9] .* jobs@main' heavy.txt || fail "text: $(cat heavy.txt)"

"$blame" imbalance even --binary ./prog --format json >even.json || fail "imbalance: even"
ok=$(jq '.variables[0].max_over_mean < 1.15' even.json)
[ "$ok" = true ] || fail "balanced run: max/mean $(jq '.variables[0].max_over_mean' even.json) >= 1.15"

# --thread: the light thread's report holds its samples only, and not the
# heavy job's array.
"$blame" report heavy --binary ./prog --thread "$light" --format json --top 0 >light.json ||
    fail "report --thread: $(cat light.json)"
ok=$(jq --argjson t "$light" --slurpfile h heavy.json '.thread == $t and
    .total_samples == ($h[0].thread_samples[$h[0].threads | index($t)]) and
    ([.variables[] | select(.name == "jobs[].a")] | length == 0) and
    .variables[0].name == "jobs"' light.json)
[ "$ok" = true ] || fail "report --thread $light: $(jq -c '{thread, total_samples, v: [.variables[0:4][].name]}' light.json)"
"$blame" code heavy --binary ./prog --thread "$heavy" --format json >code.json ||
    fail "code --thread: $(cat code.json)"
[ "$(jq --argjson t "$heavy" '.thread == $t' code.json)" = true ] || fail "code --thread"
"$blame" report heavy --binary ./prog --thread 999 >/dev/null 2>err.txt
[ $? = 1 ] || fail "report --thread 999 should fail with status 1"

jq -r '"e2e.imbalance_threads: jobs max/mean \(.variables[0].max_over_mean * 100 | floor / 100) on thread \(.variables[0].max_thread)"' heavy.json
jq -r '"e2e.imbalance_threads: balanced max/mean \(.variables[0].max_over_mean * 100 | floor / 100)"' even.json
