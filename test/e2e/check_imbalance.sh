#!/bin/bash
# Thread imbalance end to end (ctest e2e.imbalance_threads): build
# imbalance_threads.c with ppw-cc -O2 and run it sampled, once with one
# thread doing 3x the other's work and once balanced.  `ppw-blame imbalance`
# must give the top variable, jobs (main), the max/mean the work gives and
# name the heavier thread; `report --thread T` must hold only thread T's
# samples.
#
# The expected max/mean, from first principles (docs/testing.md, "Sampled
# numbers"): jobs is blamed by every sample of both threads' work() (each
# thread writes its job through arg), and samples come at a rate per CPU
# second, so the heavier thread's share of jobs' samples is its share p of
# the two work() calls' CPU time, and max/mean = 2p.  For a work ratio R, p
# would be R/(R+1) (1.5 for R = 3, 1.0 for the control) if equal work took
# equal CPU time; on this loaded VM it does not (the control's split was
# 59:41 once, the SMT sibling and the cache busy with other guests' work),
# so each thread measures its own work's CPU time (CLOCK_THREAD_CPUTIME_ID,
# the clock the sampler's task clock counts) and p is taken from that.  The
# bounds allow sampling noise, 2 * 4 sd(p, n), n being the samples the run
# got, and 2% for the samples at the work's edges (thread start and end).
# A control whose measured split is beyond 60:40 cannot be told from an
# imbalance by any tool: the test is skipped, saying so.
#
#   check_imbalance.sh BUILD_DIR
set -uo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
lib=$here/../lib
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
# 180,000 repetitions: about 0.5 s of CPU per thread in the control, some
# 1,000 samples, where 4 sd of max/mean is 0.13 (at 330 samples it was 0.22,
# beyond the 0.15 that separates 1.0 from a real imbalance).
PPW_OUTPUT=$tmp/heavy ./prog 3 >out.txt 2>heavy.cpu || fail "the 3x run failed"
PPW_OUTPUT=$tmp/even ./prog 1 180000 >>out.txt 2>even.cpu || fail "the balanced run failed"

# cpu_share FILE: the heavier thread's share of the work's CPU time, as the
# program measured it ("cpu MAIN_NS PTHREAD_NS").
cpu_share() {
    awk '$1 == "cpu" { t = $2 + $3; if (t > 0) printf "%.6f\n", ($2 > $3 ? $2 : $3) / t }' "$1"
}
# bounds SHARE FILE: the [low, high] max/mean of jobs when the heavier
# thread's CPU share is SHARE, from FILE's samples (the derivation above).
bounds() {
    jq -L "$lib" --argjson p "$1" 'include "sampling";
        (.thread_samples | add) as $n
        | {n: $n, cpu_share: $p, expect: (2 * $p),
           low: (2 * $p * 0.98 - 2 * sampling_z * share_sd($p; $n)),
           high: (2 * $p * 1.02 + 2 * sampling_z * share_sd($p; $n))}' "$2"
}
heavy_share=$(cpu_share heavy.cpu) even_share=$(cpu_share even.cpu)
[ -n "$heavy_share" ] && [ -n "$even_share" ] ||
    fail "the program did not say its CPU times: $(cat heavy.cpu even.cpu)"
awk -v p="$even_share" 'BEGIN { exit !(p > 0.6) }' &&
    { echo "SKIP: the balanced control's equal work took $even_share of the CPU time on one thread" \
        "(this VM ran the two threads at different speeds): nothing can tell it from an imbalance" >&2
      exit 77; }

"$blame" imbalance heavy --binary ./prog --format json >heavy.json ||
    fail "imbalance: $(cat heavy.json)"
bounds "$heavy_share" heavy.json >heavy.bounds
# The heavier thread: the one with the most samples.
heavy=$(jq '[.threads, .thread_samples] | transpose | max_by(.[1]) | .[0]' heavy.json)
light=$(jq '[.threads, .thread_samples] | transpose | min_by(.[1]) | .[0]' heavy.json)
echo "e2e.imbalance_threads: 3x run: jobs max/mean $(jq '.variables[0].max_over_mean' heavy.json) \
on thread $(jq '.variables[0].max_thread' heavy.json), allowed $(jq -c . heavy.bounds)"
ok=$(jq --argjson h "$heavy" --slurpfile b heavy.bounds '(.threads | length) == 2 and
    (.variables[0] | .name == "jobs" and .function == "main" and
     .max_over_mean >= $b[0].low and .max_over_mean <= $b[0].high and .max_thread == $h)' heavy.json)
[ "$ok" = true ] || fail "3x run: expected jobs (main) first with max/mean in the bounds on thread \
$heavy; got: $(jq -c '{threads, thread_samples, top: .variables[0]}' heavy.json)"
"$blame" imbalance heavy --binary ./prog >heavy.txt || fail "imbalance text"
grep -q "^ *$(jq '.variables[0].max_over_mean * 100 | round / 100' heavy.json | \
    awk '{printf "%.2f", $1}') .* jobs@main" heavy.txt || fail "text: $(cat heavy.txt)"

"$blame" imbalance even --binary ./prog --format json >even.json || fail "imbalance: even"
bounds "$even_share" even.json >even.bounds
echo "e2e.imbalance_threads: balanced: max/mean $(jq '.variables[0].max_over_mean' even.json), \
allowed $(jq -c . even.bounds)"
ok=$(jq --slurpfile b even.bounds '.variables[0].max_over_mean <= $b[0].high and
    .variables[0].max_over_mean >= $b[0].low and $b[0].high < 1.5' even.json)
[ "$ok" = true ] || fail "balanced run: max/mean $(jq '.variables[0].max_over_mean' even.json) \
outside the bounds, or the bounds do not separate it from a 3x imbalance"

# --thread: the light thread's report holds its samples only (its total is
# the thread's count in imbalance).  work() on that thread writes
# job->a[i] through arg, which the call binds to &jobs[0]: the field path
# survives the move up, so every sample in work()'s loops blames main's
# jobs[].a and jobs (exact: the store's line is in job->a's blame set, and
# so are the loop headers, by implicit transfer).  A sample elsewhere in
# work() need not: its clock reads (start, and the store to cpu_ns, which
# is jobs[].cpu_ns) and its prologue: a few microseconds of the run, which
# caught one sample that blamed no variable in a fresh clone's ASan run on
# a VM whose syscalls trap to the host.
"$blame" report heavy --binary ./prog --thread "$light" --format json --top 0 >light.json ||
    fail "report --thread: $(cat light.json)"
"$blame" lines heavy --binary ./prog --thread "$light" --top 0 --format json >light_lines.json ||
    fail "lines --thread: $(cat light_lines.json)"
loop_first=$(grep -n 'for (long r = 0; r < job->reps; r++)' "$here/imbalance_threads.c" | cut -d: -f1)
loop_last=$(grep -n 'job->a\[i\] = job->a\[i\]' "$here/imbalance_threads.c" | cut -d: -f1)
[ -n "$loop_first" ] && [ -n "$loop_last" ] || fail "cannot find work()'s loop in the source"
outside=$(jq --argjson lo "$loop_first" --argjson hi "$loop_last" '.total_samples -
    ([.lines[] | select(.function == "work" and .line >= $lo and .line <= $hi) | .self_samples]
     | add // 0)' light_lines.json)
ok=$(jq --argjson t "$light" --argjson outside "$outside" --slurpfile h heavy.json '.thread == $t and
    .total_samples == ($h[0].thread_samples[$h[0].threads | index($t)]) and
    ([.variables[] | select(.name == "jobs[].a" and .function == "main") | .samples] | add // 0)
        >= .total_samples - $outside and
    (.variables[0].name | IN("jobs", "jobs[].a"))' light.json)
[ "$ok" = true ] || fail "report --thread $light: $(jq -c --argjson o "$outside" '{thread, total_samples, outside_work: $o, v: [.variables[0:6][] | [.name, .samples]]}' light.json)"
"$blame" code heavy --binary ./prog --thread "$heavy" --format json >code.json ||
    fail "code --thread: $(cat code.json)"
[ "$(jq --argjson t "$heavy" '.thread == $t' code.json)" = true ] || fail "code --thread"
"$blame" report heavy --binary ./prog --thread 999 >/dev/null 2>err.txt
[ $? = 1 ] || fail "report --thread 999 should fail with status 1"
echo "e2e.imbalance_threads: thread $light: $(jq -c '.total_samples' light.json) samples, \
$outside outside work()'s loops"
