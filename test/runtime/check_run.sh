#!/bin/bash
# End-to-end runtime tests (ctest runtime.<case>): build a test program
# from programs/ against libppw, run it, and check the run directory with
# `ppw-blame dump --format json` and jq.
#
#   check_run.sh CASE BUILD_DIR
#
# Programs are built with the CMake cache's clang (OpenMP needs libomp's
# OMPT) and linked to libppw directly; cases that need the pass build with
# ppw-cc.  Exit 77 means skipped (with the reason on stderr).
set -uo pipefail
case_=$1 build=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
programs=$here/programs
clang=$(sed -n 's/^PPW_CLANG:FILEPATH=//p' "$build/CMakeCache.txt")
blame=$build/bin/ppw-blame
lib=$build/lib
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ppw-runtime-$case_.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
check() { # check DESCRIPTION JQ_BOOLEAN_EXPR FILE [JQ_ARGS...]; status 1 when it failed
    local what=$1 expr=$2 file=$3
    shift 3
    [ "$(jq -r "$@" "$expr" "$file")" = true ] ||
        { fail "$what ($expr on $file: $(jq -c "$@" "$expr" "$file" 2>&1 | head -c 300))"; return 1; }
}
skip() { echo "SKIP: $*" >&2; exit 77; }

# Sampled numbers (docs/testing.md, "Sampled numbers: the tolerance rule"):
# each check derives what it expects from the program and allows Z = 4 sd
# through test/lib/sampling.jq.  Facts these derivations share:
# - The sampler fires after each period P (1 ms of CPU, +-5% jitter) of the
#   perf task clock.  Each sample's signal and handler, up to the re-arm,
#   add to its interval (about 50 us here; about 300 us in threads that
#   yield, as libomp's waiting workers do), and a preempted thread's task
#   clock runs ahead of its CPU time (up to 1.22 samples per CPU ms beside
#   other jobs), never ahead of the wall clock.
# - So a count is expected from a thread's CPU time over its CPU time per
#   sample, its mean weight: that holds both effects, on any machine.
# - A sample's weight is the thread's CPU time since the previous sample
#   (the first: since the arming), on the clock the end record reads after
#   the sampler stopped.  Before the arming, each thread runs unsampled
#   start-up code: at most s0, the CPU time of a whole run of `cpu_spin 0`
#   (measure_s0), which also bounds the samples a program takes outside its
#   own code (start-up, exit, the dynamic linker).
src=$(cd "$here/../.." && pwd)
sampling_defs='include "sampling";
def of($t): [.samples[] | select(.thread == $t)];
def cpu($t): [.threads[] | select(.index == $t) | .cpu_ns] | add // 0;
def wsum: map(.weight) | add // 0;
def wmax: map(.weight) | max // 0;
def in_stack($f): any(.stack[]; .function == $f);
def period: .run.metric.period;
def ms: . / 1e5 | round / 10;
def r1: . * 10 | round / 10;
# The CPU time per sample of these samples (their mean weight); none: the
# longest period (1.05 P) and a quarter of P for the re-arm.
def per_sample($p): if length > 0 then wsum / length else 1.3 * $p end;
# A count n expected to be lambda, asserted at count_floor(lambda); when
# that is below 1, the run is too short to tell (skip).
def at_least($n; $lambda; $from):
    {ok: ($n >= count_floor($lambda)), n: $n, expected: ($lambda | r1),
     threshold: (count_floor($lambda) | r1), from: $from,
     skip: (if count_floor($lambda) < 1 then "\($lambda | r1) samples expected: too few to tell" else null end)};
# The samples of threads $ts expected from their CPU time after the
# start-up: sum of (cpu - s0) / (CPU time per sample), each thread its own.
def sampled_threads($ts; $s0): period as $p | . as $d
    | ([$ts[] as $t | ([($d | cpu($t)) - $s0, 0] | max) / ($d | of($t) | per_sample($p))] | add)
      as $lambda
    | at_least([$ts[] as $t | $d | of($t) | length] | add; $lambda;
        "sum over threads \($ts) of (cpu - s0 \($s0 | ms) ms) / their CPU ms per sample");
# Each of threads $ts sampled as its CPU time after the start-up says; a
# thread whose expected count does not reach 1 at 4 sd cannot tell (skip).
def each_sampled($ts; $s0): period as $p | . as $d
    | [$ts[] as $t | ($d | of($t)) as $s
       | (([($d | cpu($t)) - $s0, 0] | max) / ($s | per_sample($p))) as $lambda
       | {thread: $t, n: ($s | length), expected: ($lambda | r1), threshold: (count_floor($lambda) | r1)}]
    | {ok: all(.[]; .n >= .threshold), each: .,
       skip: (if any(.[]; .threshold < 1) then "a thread has too little CPU time to expect a sample" else null end),
       from: "each thread: count_floor((cpu - s0 \($s0 | ms) ms) / its CPU ms per sample)"};
# A share (percent) of n samples expected to be at least (most) pct.
def share_at_least($k; $n; $pct; $from):
    {ok: ($n > 0 and 100 * $k / $n >= share_floor($pct; $n)), n: $n, observed: ($k | r1),
     share: (if $n > 0 then 100 * $k / $n | r1 else null end), expected: ($pct | r1),
     threshold: (share_floor($pct; $n) | r1), from: $from};
def share_at_most($k; $n; $pct; $from):
    {ok: ($n > 0 and 100 * $k / $n <= share_ceil($pct; $n)), n: $n, observed: $k,
     share: (if $n > 0 then 100 * $k / $n | r1 else null end), expected: ($pct | r1),
     threshold: (share_ceil($pct; $n) | r1), from: $from};
'

# sampled DESCRIPTION FILE FILTER [JQ_ARGS...]: a sampled check.  FILTER
# (after $sampling_defs) yields an object: ok, and the numbers its verdict
# used, which are printed whether it passes or fails; with a skip reason,
# the case ends in SKIP (77) unless something failed.
skipped=
sampled() {
    local what=$1 file=$2 filter=$3 out why
    shift 3
    out=$(jq -c -L "$src/test/lib" "$@" "$sampling_defs $filter" "$file" 2>&1)
    echo "  sampled: $what: $(jq -c 'del(.ok, .skip)' <<<"$out" 2>/dev/null || echo "$out")"
    why=$(jq -r '.skip // empty' <<<"$out" 2>/dev/null)
    [ -z "$why" ] || { skipped="$what: $why"; return 0; }
    [ "$(jq -r .ok <<<"$out" 2>/dev/null)" = true ] || { fail "$what: $out"; return 1; }
}

# spent_in DESCRIPTION FILE THREAD FUNCTION SECONDS: THREAD spent at least
# SECONDS of CPU time in FUNCTION (spin_for's clock says so), so its
# samples with FUNCTION on the stack are expected to be that over the
# thread's CPU time per sample.  Fails for samples lost, or whose stacks
# miss the function.  (At about 1.03 ms per sample here, each use below had
# 33 to 80 samples to spare over its threshold.)
spent_in() {
    sampled "$1" "$2" 'period as $p | (of($t) | per_sample($p)) as $per
        | at_least([of($t)[] | select(in_stack($f))] | length; $sec * 1e9 / $per;
            "\($sec) s of CPU in \($f)() over \($per / 1e3 | round) us per sample (thread \($t))")' \
        --argjson t "$3" --arg f "$4" --argjson sec "$5"
}

# measure_s0: s0, the CPU time (ns) of `cpu_spin 0` under ppw: libppw's
# start-up, the program's and the exit, without work; the larger of two
# runs (7 to 12.5 ms here, in both trees, at loads up to 10).
measure_s0() {
    local i
    [ -x cpu_spin ] || build cpu_spin
    s0=0
    for i in 1 2; do
        run_ppw s0-$i ./cpu_spin 0
        dump s0-$i run || exit 1
        s0=$(jq --argjson s0 "$s0" '[.threads[0].cpu_ns, $s0] | max' s0-$i.run.json)
    done
}

# build NAME [flags...]: programs/NAME.c linked with libppw -> ./NAME,
# and without ppw -> ./NAME.plain.
build() {
    local name=$1
    shift
    "$clang" -g -O2 "$programs/$name.c" -o "$name.plain" -lpthread "$@" ||
        { echo "cannot build $name" >&2; exit 1; }
    "$clang" -g -O2 "$programs/$name.c" -o "$name" -lpthread "$@" \
        -L"$lib" -Wl,-rpath,"$lib" -lppw -Wl,--build-id ||
        { echo "cannot build $name with libppw" >&2; exit 1; }
}

# run_ppw DIR CMD...: run with PPW_OUTPUT=DIR; stdout to DIR.out, status to DIR.rc
run_ppw() {
    local dir=$1
    shift
    PPW_OUTPUT=$tmp/$dir "$@" >"$dir.out" 2>"$dir.err"
    echo $? >"$dir.rc"
}

dump() { # dump DIR WHAT -> DIR.WHAT.json
    "$blame" dump "$1" --format json --what "$2" >"$1.$2.json" ||
        { fail "ppw-blame dump $1 --what $2: $(head -3 "$1.$2.json")"; return 1; }
}

# same_behaviour NAME ARGS...: identical stdout and exit status with and
# without ppw.
same_behaviour() {
    local name=$1
    shift
    "./$name.plain" "$@" >plain.out 2>/dev/null
    local want=$?
    run_ppw same "./$name" "$@"
    [ "$(cat same.rc)" = "$want" ] || fail "$name: exit status $(cat same.rc) with ppw, $want without"
    cmp -s plain.out same.out || fail "$name: stdout differs with ppw: $(diff plain.out same.out | head -5)"
    [ ! -s same.err ] || fail "$name: ppw wrote to stderr: $(head -3 same.err)"
}

# weights_cover DESCRIPTION FILE TAIL_NS: thread 0's weights add up to its
# CPU time from the arming to its last sample: cpu - 2 s0 - tail <= sum <=
# cpu.  s0 bounds the start-up before the arming (twice: its CPU time
# varies by a third between runs with the load); TAIL_NS bounds the CPU
# time after the last sample, which ended without one.  Fails for weights
# that are the nominal period (5% short of the CPU time here, or over it
# when the thread is preempted) or that miss part of the thread's time.
weights_cover() {
    sampled "$1" "$2" '(cpu(0)) as $cpu | (of(0) | wsum) as $w
        | {ok: ($w <= $cpu and $w >= $cpu - 2 * $s0 - $tail), n: (of(0) | length),
           weights_ms: ($w | ms), cpu_ms: ($cpu | ms), threshold_ms: ($cpu - 2 * $s0 - $tail | ms),
           from: "cpu - 2 s0 (\($s0 | ms) ms) - tail (\($tail | ms) ms) <= weights <= cpu"}' \
        --argjson s0 "$s0" --argjson tail "$3"
}

case_rate() {
    build cpu_spin
    measure_s0
    run_ppw r ./cpu_spin 0.8
    dump r all || return
    check "metric is a CPU-time sampler, 1 ms" \
        '.run.metric.period == 1000000 and .run.metric.unit == "ns"' r.all.json
    check "the run finished" '.finished == true' r.all.json
    # One sample per period P of CPU time: of the 0.8 s after the start-up,
    # n = (cpu - s0) / P, fewer by the re-arm delay (n = 0.95 cpu / P here;
    # allowed: a quarter of P), more when preempted, but the task clock never
    # outruns the thread's wall-clock life (start to end record):
    #   n >= count_floor((cpu - s0) / (1.05 P + P/4)), n <= count_ceil(life / (0.95 P)).
    # Fails for a sampler that records nothing or a third of its samples,
    # ticks at 4 ms (the POSIX timer) or a period 1.5x too long, and (on a
    # quiet machine, where life = cpu) 1.3x too short.  Here, at loads of 4
    # to 10 and beside unit.cli_calibrate: n = 747 to 833 against about
    # [510, 1050 or more].
    sampled "one sample per ms of CPU time" r.all.json \
        'period as $p | (of(0) | length) as $n | (.threads[0] | .end_ns - .start_ns) as $life
         | ((cpu(0) - $s0) / (1.3 * $p)) as $lo | ($life / (0.95 * $p)) as $hi
         | {ok: ($n >= count_floor($lo) and $n <= count_ceil($hi)), n: $n, cpu_ms: (cpu(0) | ms),
            life_ms: ($life | ms), per_cpu_ms: ($n / (cpu(0) / 1e6) * 1000 | round / 1000),
            threshold: [(count_floor($lo) | r1), (count_ceil($hi) | r1)],
            from: "count_floor((cpu - s0 \($s0 | ms) ms) / 1.3 P), count_ceil(life / 0.95 P)"}' \
        --argjson s0 "$s0"
    # The tail: the period after the last sample (at most 1.05 P) and its
    # re-arm delay, which the longest interval seen holds over its own
    # period (at least 0.95 P): the longest weight plus 0.1 P.  Here the
    # weights were 787 to 792 ms of 800, the threshold 776 to 784.
    weights_cover "sample weights add up to the CPU time" r.all.json \
        "$(jq '.run.metric.period as $p | [.samples[] | select(.thread == 0) | .weight] | (max // 0) + 0.1 * $p' r.all.json)"
}

# Stacks of cpu_spin (one thread, 0.5 s) and threads (four, 0.3 s in
# all).  A walk that fails stops short of the thread's root, and a sample
# whose walk lost the leaf does not start at the interrupted PC: either
# shows in most samples.  What may legitimately lack them:
# - samples outside main, or whose walk is skipped (the dynamic linker's
#   lookups): start-up, exit and lazy binding, at most s0 of CPU, so an
#   expected share of at most s0 / (the weights' sum);
# - samples without a leaf PC: only those taken while libppw walks the
#   stack for a spawn record (ppw_sampler_take_deferred: at most 4 per
#   walk, one walk per pthread_create).
# Here (28 runs of each, loads 4 to 10): not one sample incomplete, outside
# main or without its leaf PC, against thresholds of 3.9% to 8.6%.
case_stacks() {
    build cpu_spin
    build threads
    measure_s0
    run_ppw s1 ./cpu_spin 0.5
    run_ppw s2 ./threads
    local d walks
    for d in s1 s2; do
        dump $d all || return
        # Enough samples for the shares below: each thread's CPU time after
        # the start-up over its CPU time per sample.
        sampled "$d: sampled" $d.all.json 'sampled_threads([.threads[].index]; $s0)' --argjson s0 "$s0"
        local other='(100 * $s0 / ([.samples[].weight] | add)) as $e | (.samples | length) as $n'
        sampled "$d: complete stacks (to the thread's root)" $d.all.json \
            "$other | share_at_most([.samples[] | select(.complete | not)] | length; \$n; \$e;
                \"incomplete: at most start-up and exit, s0 \\(\$s0 | ms) ms of the weights\")" \
            --argjson s0 "$s0"
        sampled "$d: stacks reach main" $d.all.json \
            "$other | share_at_most([.samples[] | select(.reaches_main | not)] | length; \$n; \$e;
                \"outside main: at most start-up and exit, s0 \\(\$s0 | ms) ms of the weights\")" \
            --argjson s0 "$s0"
        walks=$(jq '(.threads | length) - 1' $d.all.json)
        sampled "$d: leaf frames are exact PCs" $d.all.json \
            '[.samples[] | select(.flags | index("leaf_pc") | not)] | length
             | {ok: (. <= 4 * $walks), n: ., threshold: (4 * $walks),
                from: "at most 4 deferred samples per spawn walk, \($walks) walks"}' \
            --argjson walks "$walks"
    done
    # inner() is all cpu_spin does, but for its loop's clock reads (whose
    # samples end in clock_gettime or the vDSO under main) and the start-up
    # and exit (s0).  Fails when the leaf is lost (samples in outer or main).
    # Here 99.6% to 100%, against 95.6% to 96.3%.
    sampled "cpu_spin samples are in inner()" s1.all.json \
        '(100 - 100 * $s0 / ([.samples[].weight] | add)) as $e | (.samples | length) as $n
         | [.samples[] | select(.stack[0].function == "inner"
             or any(.stack[:3][]; .function == "clock_gettime"))] | length
         | share_at_least(.; $n; $e; "inner() or its loop'"'"'s clock reads: all but s0 (\($s0 | ms) ms) of the weights")' \
        --argjson s0 "$s0"
}

# A thread's stack table holds 3072 stacks (runtime/sampler.c), then starts
# again, and samples go on naming stacks by the ids written since.
# many_stacks.c visits 4096 call paths in order, 5 times over, and every
# sample of its leaf names one path by the left()/right() frames of its
# stack; with the exact leaf PC, each path makes several stacks, so the
# table starts again many times (19,552 stacks for 19,759 samples here).
# Samples are in time order: the paths they name only go up, but where a
# pass starts again, at most 4 times.  Fails when a sample names a stack
# other than its own (38 such steps back with each stored id one less),
# or when the table cannot start again (an endless probe).
case_stack_table() {
    build many_stacks
    ./many_stacks.plain >plain.out
    PPW_PERIOD=100us run_ppw st ./many_stacks
    [ "$(cat st.rc)" = 0 ] || { fail "status $(cat st.rc)"; return; }
    cmp -s plain.out st.out || fail "the output changed: $(cat st.out)"
    dump st run || return
    check "more stacks written than the table holds" '.threads[0].stacks > 3072' st.run.json
    "$blame" dump st --what samples >st.samples.txt || { fail "dump st --what samples"; return; }
    awk '
        function flush(   k, p) {
            if (n < 14 || f[0] != "spin_leaf" || f[13] != "main")
                return
            for (k = 0; k < 12; k++)
                if (f[12 - k] == "right") p += 2 ^ k
                else if (f[12 - k] != "left") return
            print p + 0
        }
        /^sample / { flush(); n = 0; keep = $2 == "thread=0"; next }
        /^  #/ && keep && n < 20 { f[n++] = $3 }
        END { flush() }' st.samples.txt >paths.txt
    local decoded distinct back
    decoded=$(wc -l <paths.txt)
    distinct=$(sort -u paths.txt | wc -l)
    back=$(awk 'NR > 1 && $1 < prev { n++ } { prev = $1 } END { print n + 0 }' paths.txt)
    echo "  stack_table: $decoded samples in the leaf, $distinct distinct paths, $back steps back"
    [ "$decoded" -ge 2000 ] || fail "too few samples in the leaf to tell: $decoded"
    [ "$back" -le 4 ] || fail "samples name paths out of order: $back steps back (at most 4: the passes)"
}

case_pthreads() {
    build threads
    same_behaviour threads
    local launch
    launch=$(date +%s%N)
    run_ppw p ./threads
    dump p all || return
    check "four threads, all ended" '(.threads | length) == 4 and ([.threads[] | .ended] | all)' p.all.json
    # schedstat's wait counts from the thread's creation, which precedes
    # its start record (by the wait for its first time slice, a long one
    # under load, and for main by exec and the dynamic linker): so it is
    # bounded by the time since the shell started the program, not by the
    # thread's recorded life.
    check "each thread's run-queue wait is known (schedstat) and below its time since launch" \
        '.run.info as $i | [.threads[] | .runqueue_ns != null
         and .runqueue_ns < $i.start_real_ns + (.end_ns - $i.start_mono_ns) - $launch] | all' \
        p.all.json --argjson launch "$launch"
    # Workers: crunch() for 60M iterations each, its CPU time in their end
    # records.  Fails for workers whose sampler is not armed or stops.
    # Here 227 to 259 samples, 77 to 84 over the threshold.
    measure_s0
    sampled "workers were sampled" p.all.json 'sampled_threads([.threads[].index | select(. != 0)]; $s0)' \
        --argjson s0 "$s0"
    check "every worker sample glues to main through a pthread spawn record" \
        '[.samples[] | select(.thread != 0) | .reaches_main and (.glue_error == null)] | all' p.all.json
    check "worker contexts are pthread spawns from main" \
        '[.spawns[] | .kind == "pthread" and (.frames | map(.function) | index("main") != null)] | all' \
        p.all.json
}

case_openmp() {
    build omp_nested -fopenmp
    same_behaviour omp_nested
    run_ppw o ./omp_nested
    dump o all || return
    # Workers (libomp's pool and the nested teams) burn CPU in the loops
    # and in libomp's spin-waits: all of it sampled (at about 1.3 ms of CPU
    # per sample here: a thread that yields has a longer re-arm delay).
    # Here 135 to 458 samples, 65 to 101 over the threshold.
    measure_s0
    sampled "OpenMP workers were sampled" o.all.json \
        'sampled_threads([.threads[].index | select(. != 0)]; $s0)' --argjson s0 "$s0"
    check "every worker sample reaches main" \
        '[.samples[] | select(.thread != 0) | .reaches_main] | all' o.all.json
    check "parallel-region and task spawn records exist" \
        '[.spawns[] | .kind] | (index("omp-parallel") != null and index("omp-task") != null)' o.all.json
    check "nested regions chain to an enclosing region" \
        '[.spawns[] | select(.kind == "omp-parallel" and .parent_tag != 0)] | length > 0' o.all.json
    check "recursive tasks fold into a few contexts (not one per task)" \
        '[.spawns[] | select(.kind == "omp-task")] | length < 200' o.all.json
    # Each of the 3 workers of the nested teams runs the same 20M-iteration
    # loop as thread 0 (k0 samples there), the pool worker half of sweep():
    # a few hundred samples here.  Asks for one: fails when no worker stack
    # reaches the program's code.
    sampled "samples in worker code name the outlined function" o.all.json \
        'def prog: any(.stack[].function | strings; test("omp_outlined|sweep|nested|fib"));
         ([.samples[] | select(.thread != 0 and prog)] | length) as $k
         | {ok: ($k >= 1), n: ([.samples[] | select(.thread != 0)] | length), observed: $k, threshold: 1,
            k0: ([.samples[] | select(.thread == 0 and any(.stack[].function | strings; test("^nested[.]omp_outlined_debug")))] | length),
            from: "existence: about 3 k0 in the nested loop alone"}'
}

# One region from four call paths (programs/region_paths.c), built with
# frame pointers (as ppw-cc builds: the chain cache finds contexts again)
# and without (the cache's check against a full walk rejects every chain):
# either way exactly four parallel contexts, one per path, each naming its
# own caller.  A cache keyed on less than the whole chain would give the
# later paths the first one's context, and fewer records.
case_region_paths() {
    local b
    for b in fp nofp; do
        local flags=(-fopenmp -fno-omit-frame-pointer)
        [ $b = nofp ] && flags=(-fopenmp -fomit-frame-pointer)
        build region_paths "${flags[@]}"
        same_behaviour region_paths 100
        OMP_NUM_THREADS=2 run_ppw r$b ./region_paths 400
        [ "$(cat r$b.rc)" = 0 ] || { fail "$b: region_paths failed: $(cat r$b.err)"; return; }
        dump r$b all || return
        check "$b: four parallel contexts, one per call path" \
            '[.spawns[] | select(.kind == "omp-parallel")] | length == 4' r$b.all.json
        check "$b: their callers are step_u, step_v and two lines of main" \
            '[.spawns[] | select(.kind == "omp-parallel") | .frames[1] | "\(.function):\(.source[0].line)"]
             | (unique | length == 4) and (map(split(":")[0]) | sort == ["main", "main", "step_u", "step_v"])' \
            r$b.all.json || jq -c '[.spawns[] | select(.kind == "omp-parallel") | .frames[0:2]]' r$b.all.json >&2
    done
}

# OpenMP regions without OMPT (programs/omp_fork.c, runtime/omp_fork.c): a
# ppw-cc build that creates no explicit task has its regions recorded by
# libppw's __kmpc_fork_call, and libomp gets no OMPT tool.  Both ways
# (PPW_OMPT=auto, and always for OMPT's reference) must give the program's
# output and exit status, and the same contexts: wide_step's region (20
# arguments: libomp's __kmp_invoke_microtask), nested_step's, the region
# nested in it (its parent), and main's (no argument; errno set before it
# is printed after it); main's samples between the regions in its own.  Worker samples in a region's body must glue to the
# function that opened it; none of libppw's functions may show in a user
# view.  With explicit tasks, OMPT is used.
case_omp_fork() {
    plugin_loadable || skip "an ASan-built plugin cannot load into clang"
    "$clang" -g -O2 -fopenmp "$programs/omp_fork.c" -o omp_fork.plain ||
        { fail "cannot build omp_fork"; return; }
    ppw_cc omp_fork -fopenmp
    OMP_NUM_THREADS=2 ./omp_fork.plain >plain.out
    local want=$? mode expect
    for mode in auto always; do
        expect="spawn contexts by libppw's __kmpc_fork_call, no OMPT tool"
        [ $mode = always ] && expect="OMPT: PPW_OMPT=always"
        OMP_NUM_THREADS=2 PPW_OMPT=$mode PPW_VERBOSE=1 run_ppw f-$mode ./omp_fork.inst
        [ "$(cat f-$mode.rc)" = "$want" ] || fail "$mode: exit status $(cat f-$mode.rc), $want without ppw"
        cmp -s plain.out f-$mode.out || fail "$mode: stdout differs: $(diff plain.out f-$mode.out | head -3)"
        grep -qF "OpenMP regions: $expect" f-$mode.err ||
            fail "$mode: stderr does not say '$expect': $(grep 'OpenMP regions' f-$mode.err)"
        dump f-$mode all || return
        check "$mode: four parallel contexts, named by their callers' lines" \
            '[.spawns[] | select(.kind == "omp-parallel") | "\(.frames[0].function):\(.frames[0].source[0].line)"]
             | sort == ["main:101", "nested_step.omp_outlined:48", "nested_step:45", "wide_step:31"]' \
            f-$mode.all.json
        check "$mode: the nested region's context chains to nested_step's" \
            '[.spawns[] | select(.kind == "omp-parallel")] as $s
             | ($s[] | select(.frames[0].function == "nested_step") | .tag) as $outer
             | [$s[] | select(.frames[0].function == "nested_step.omp_outlined") | .parent_tag] == [$outer]' \
            f-$mode.all.json
        check "$mode: every worker sample reaches main" \
            '[.samples[] | select(.thread != 0) | .reaches_main] | all' f-$mode.all.json
        # The ring sampler reads main's samples of serial_step later, most
        # often inside the next region (the regions' changes of context
        # note when each context ended): about 40 of them, every one in
        # main's own context; and those in wide_step's body in a region's.
        check "$mode: main's samples between regions in its own context, in a region's body in the region's" \
            '[.samples[] | select(.thread == 0)] as $main
             | ([$main[] | select(any(.stack[]; .function == "serial_step"))]
                | length > 0 and all(.spawn_tag == 0))
               and ([$main[] | select(any(.stack[]; .function // "" | startswith("wide_step.omp_outlined")))]
                | length > 0 and all(.spawn_tag != 0))' f-$mode.all.json
        local body
        for body in wide_step nested_step; do
            check "$mode: worker samples in $body's region glue to $body" \
                '[.samples[] | select(.thread != 0 and (.glued[0].function // "" | startswith($f + ".omp_outlined")))]
                 | length > 0 and all(any(.glued[]; .function == $f))' f-$mode.all.json --arg f $body
        done
        local view
        for view in report code; do
            "$blame" $view f-$mode >view.txt 2>&1 || fail "$mode: ppw-blame $view: $(head -3 view.txt)"
            ! grep -q "ppw_\|libppw" view.txt || fail "$mode: libppw in the $view view: $(grep "ppw_\|libppw" view.txt | head -3)"
        done
        # The folded stacks mark libppw's own time "[libppw]"; the fork's
        # stand-in is the program's call, its trampoline libomp's.
        "$blame" export f-$mode --to folded -o - >view.txt 2>&1 || fail "$mode: export: $(head -3 view.txt)"
        ! grep -q "ppw_fork" view.txt || fail "$mode: ppw_fork in folded stacks: $(grep ppw_fork view.txt | head -3)"
    done
    ppw_cc omp_fork -fopenmp -DWITH_TASK
    OMP_NUM_THREADS=2 PPW_VERBOSE=1 run_ppw t ./omp_fork.inst 2
    grep -q "OpenMP regions: OMPT: the executable imports __kmpc_omp_task_alloc" t.err ||
        fail "with tasks: stderr does not say OMPT for the tasks: $(grep 'OpenMP regions' t.err)"
    OMP_NUM_THREADS=2 PPW_OMPT=sometimes run_ppw bad ./omp_fork.inst 1
    [ "$(grep -c PPW_OMPT bad.err)" = 1 ] || fail "PPW_OMPT=sometimes: not one line naming it: $(cat bad.err)"
    [ "$(cat bad.rc)" = 0 ] || fail "PPW_OMPT=sometimes: exit status $(cat bad.rc)"
}

# Any call site may go quiet, not only allocation sites (programs/lock_sites.c):
# 2 threads x 200,000 lock/unlock pairs at one site, throttled after 1000
# timed calls per thread (PPW_THROTTLE_CALLS) and then sampled 1 in 100
# (PPW_THROTTLE_SAMPLE_USEC=0: the spacing does not grow with the site's
# rate), the rest never reaching libppw.  Each sampled call stands for
# the window of calls it closes, spacing uniform in [50, 150): about 1990
# per thread, whose mean is 100 +- 29/sqrt(1990) = 0.65 (sd), so the
# recorded mean rounds to 95..105 with 7 sd to spare.  The estimate is
# exact but for each thread's last window, counted half (at most 75
# calls off), and the mean's rounding (0.5 x 1990): 400,000 within 2%.
# The rare site (200 calls of about 50 us) is exact.
case_lock_sites() {
    plugin_loadable || skip "an ASan-built plugin cannot load into clang"
    "$clang" -g -O2 -fopenmp "$programs/lock_sites.c" -o lock_sites.plain -lpthread ||
        { echo "cannot build lock_sites" >&2; exit 1; }
    ppw_cc lock_sites -fopenmp
    ./lock_sites.plain >plain.out
    local lock unlock rare
    lock=$(site_line lock_sites "count lock") unlock=$(site_line lock_sites "count unlock")
    rare=$(site_line lock_sites "rare lock")
    PPW_THROTTLE_CALLS=1000 PPW_THROTTLE_SAMPLE=100 PPW_THROTTLE_SAMPLE_USEC=0 \
        run_ppw k ./lock_sites.inst
    cmp -s plain.out k.out || fail "the output changed under ppw: $(cat k.out), plain: $(cat plain.out)"
    "$blame" profile k --format json >k.json || { fail "ppw-blame profile"; return; }
    check "the count sites are sampled 1 in 100 after 1000 timed calls" \
        "$profile_sites [site($lock), site($unlock)] | map(length == 1
            and .[0].sample_period >= 95 and .[0].sample_period <= 105
            and .[0].sampled_calls > 1000 and .[0].estimated) | all" k.json
    check "their estimated calls are 400,000 within 2%" \
        "$profile_sites [site($lock)[0].calls, site($unlock)[0].calls] | map(. > 392000 and . < 408000) | all" \
        k.json
    check "the rare site is exact, never throttled" \
        "$profile_sites (site($rare) | length == 0) and exact($rare) == 200" k.json
    # PPW_MODE=none: every site closes at its first call; the same output.
    PPW_MODE=none run_ppw n ./lock_sites.inst
    cmp -s plain.out n.out || fail "the output changed under ppw (PPW_MODE=none)"
}

case_behaviour() {
    build behaviour
    same_behaviour behaviour
    grep -q "errno kept: yes" same.out || fail "errno not preserved"
    grep -q "EINTR" same.out && fail "an interrupted read leaked EINTR"
}

# 10,000 short-lived threads, 50 at a time: every one is recorded and ended
# (about 4 s on an idle machine here, against 0.7 s without ppw: each
# thread creates, preallocates and trims its samples file).
case_churn() {
    build churn
    same_behaviour churn 10000
    dump same run || return
    check "10001 threads recorded, each with an end record" \
        '(.threads | length) == 10001 and ([.threads[] | .ended] | all)
         and ([.threads[] | .index] | unique | length) == 10001' same.run.json
    check "the run finished" '.finished == true' same.run.json
}

# dl_churn: dlopen/dlclose thousands of times while two threads are sampled
# every 100 us.  A walk in the handler of the thread holding the dynamic
# linker's lock used to deadlock with another thread's walk; the handler now
# keeps that thread's PC alone (UNWALKED).  Bounded by timeout: a hang fails.
case_dl_churn() {
    "$clang" -shared -fPIC -O2 "$programs/dl_churn_lib.c" -o "$tmp/libchurn.so" ||
        { echo "cannot build libchurn.so" >&2; exit 1; }
    build dl_churn -ldl
    PPW_PERIOD=100us PPW_OUTPUT=$tmp/dl timeout 120 ./dl_churn "$tmp/libchurn.so" 3000 >dl.out 2>dl.err
    local rc=$?
    [ $rc = 0 ] || { fail "dl_churn: status $rc (124: hung): $(head -3 dl.err)"; return; }
    grep -q "opened all" dl.out || fail "dl_churn output: $(cat dl.out)"
    dump dl all || return
    # All three threads, the churning one too (its samples in the dynamic
    # linker keep their PC alone).  Fails for a sampler that stops or loses
    # samples during the churn.  Here 3,000 to 6,700 samples, 340 to 460
    # over the threshold.
    measure_s0
    sampled "the threads were sampled during the churn" dl.all.json \
        'sampled_threads([.threads[].index]; $s0)' --argjson s0 "$s0"
}

case_fork() {
    build forker
    same_behaviour forker
    run_ppw f ./forker
    local child
    child=$(ls -d "$tmp"/f-fork-* 2>/dev/null | head -1)
    [ -n "$child" ] || { fail "the fork()ed child wrote no directory of its own"; return; }
    dump f run || return
    "$blame" dump "$child" --format json --what all >child.json || { fail "child dir unreadable"; return; }
    check "the child's run says it was forked" '.run.info.parent_fork == true' child.json
    spent_in "the child has its own samples, in work()" child.json 0 work 0.2
    check "the child's pid differs" "(.pid != $(jq .pid f.run.json))" child.json
}

# killed_by SIGNAL DIR: runs ./forever, sends SIGNAL once it has used 1 s
# of CPU time, checks the status a shell sees (128 + signal, as without
# ppw) and that every sample older than the durability bound survived.
killed_by() {
    local sig=$1 dir=$2 pid ticks hz rc i
    hz=$(getconf CLK_TCK)
    PPW_OUTPUT=$tmp/$dir ./forever &
    pid=$!
    # CPU time, not wall time: under load 1.5 s of wall time gave it a
    # fraction of that.  At most 2 minutes, then whatever it has.
    for ((i = 0; i < 1200; i++)); do
        ticks=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
        [ "$ticks" -ge "$hz" ] && break
        sleep 0.1
    done
    ticks=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
    kill -s "$sig" $pid
    wait $pid 2>/dev/null
    rc=$?
    [ $rc = $((128 + $(kill -l "$sig"))) ] || fail "$sig: status $rc"
    dump "$dir" all || return
    # Everything committed before the signal is readable: the weights reach
    # the CPU time read just before it (utime + stime, truncated to ticks),
    # less the start-up before the arming (2 s0, as in weights_cover) and
    # two intervals (the longest plus 0.1 P, each): the sample in progress
    # when the signal came may be lost (the durability bound, one record).
    # Here the weights were 15 to 28 ms above the threshold (about 1 s).
    sampled "$sig: samples older than the bound survived" "$dir.all.json" \
        'period as $p | (of(0) | wsum) as $w | (2 * (of(0) | wmax) + 0.2 * $p) as $tail
         | ($cpu - 2 * $s0 - $tail) as $bound
         | {ok: ($w >= $bound), n: (of(0) | length), weights_ms: ($w | ms), cpu_read_ms: ($cpu | ms),
            threshold_ms: ($bound | ms), from: "cpu read - 2 s0 (\($s0 | ms) ms) - 2 intervals (\($tail | ms) ms)"}' \
        --argjson cpu "$((ticks * 1000000000 / hz))" --argjson s0 "$s0"
    check "$sig: the run is marked as not finished" '.finished == false' "$dir.all.json"
}

case_kill() {
    build forever
    measure_s0
    killed_by KILL k
}

# SIGTERM with its default action: no handler, no destructor, like SIGKILL.
case_sigterm() {
    build forever
    measure_s0
    killed_by TERM term
}

# crash.c dies after 0.4 s of CPU time, of SIGSEGV or abort(): the same
# death (shell status 139 and 134) and stdout as without ppw, and the run
# directory holds the samples taken before the fault.
case_crash() {
    build crash
    local how want rc
    for how in segv abort; do
        (ulimit -c 0; exec ./crash.plain $how >plain.out 2>/dev/null)
        want=$?
        (ulimit -c 0; PPW_OUTPUT=$tmp/c-$how exec ./crash $how >c-$how.out 2>c-$how.err)
        rc=$?
        [ $rc = $want ] || fail "$how: status $rc with ppw, $want without"
        case $how in segv) [ $want = 139 ] ;; abort) [ $want = 134 ] ;; esac ||
            fail "$how: unexpected status $want without ppw"
        cmp -s plain.out c-$how.out || fail "$how: stdout differs: $(diff plain.out c-$how.out)"
        [ ! -s c-$how.err ] || fail "$how: ppw wrote to stderr: $(head -3 c-$how.err)"
        dump c-$how run || continue
        dump c-$how all || continue
        check "$how: the run is marked as not finished" '.finished == false' c-$how.run.json
        # About 385 samples expected, 308 asked; 380 to 414 here.
        spent_in "$how: the samples before the fault are there, in burn()" c-$how.all.json 0 burn 0.4
        # burn() ran 0.4 s of CPU after the arming, and every sample
        # taken before the fault is on disk but for the durability bound
        # (one record), so the weights reach 0.4 s less two intervals (the
        # longest plus the jitter's 0.1 P, each): that record and the tail
        # after the last sample.  Fails if the samples of the end of the
        # run were lost.  Here 399.1 to 400.3 ms, the threshold about 397.6.
        sampled "$how: their weights add up to the 0.4 s burned" c-$how.all.json \
            'period as $p | (of(0) | wsum) as $w | (2 * (of(0) | wmax) + 0.2 * $p) as $tail
             | {ok: ($w >= 0.4e9 - $tail), n: (of(0) | length), weights_ms: ($w | ms),
                threshold_ms: (0.4e9 - $tail | ms), from: "0.4 s - 2 intervals \($tail | ms) ms"}'
    done
}

# Deaths under the ring sampler (docs/runtime.md, "Samples at a fatal
# signal"): a thread's last samples wait in its ring, up to 16 periods, so
# ppw's handler stands in for each fatal signal left at SIG_DFL and saves
# the rings, and so does _exit.  Then the same bounds as runtime.crash and
# runtime.sigterm ask of the signal sampler (one record).  Without the
# stand-ins the weights fell 5 to 16 ms short of them.  The programs, built
# by ppw-cc (the ring sampler needs its frame pointers), still read SIG_DFL
# and die as the plain builds do.
case_ring_death() {
    build crash
    "$build/bin/ppw-cc" -O2 -g "$programs/crash.c" -o crash_ring ||
        { fail "cannot build crash with ppw-cc"; return; }
    "$build/bin/ppw-cc" -O2 -g "$programs/forever.c" -o forever_ring ||
        { fail "cannot build forever with ppw-cc"; return; }
    local how want rc
    for how in segv abort _exit; do
        (ulimit -c 0; exec ./crash.plain $how >plain.out 2>/dev/null)
        want=$?
        (ulimit -c 0; PPW_SAMPLER=ring PPW_OUTPUT=$tmp/r-$how exec ./crash_ring $how >r-$how.out 2>r-$how.err)
        rc=$?
        [ $rc = $want ] || fail "$how: status $rc with ppw, $want without"
        cmp -s plain.out r-$how.out || fail "$how: stdout differs: $(diff plain.out r-$how.out)"
        [ ! -s r-$how.err ] || fail "$how: ppw wrote to stderr: $(head -3 r-$how.err)"
        dump r-$how all || continue
        jq -e '.run.metric.reason | test("ring buffer")' r-$how.all.json >/dev/null ||
            skip "the ring sampler is not available here: $(jq -r .run.metric.reason r-$how.all.json)"
        check "$how: the run is marked as not finished" '.finished == false' r-$how.all.json
        # burn() ran 0.4 s of CPU after the arming; as in runtime.crash.
        sampled "$how: the ring's samples are saved, up to the 0.4 s burned" r-$how.all.json \
            'period as $p | (of(0) | wsum) as $w | (2 * (of(0) | wmax) + 0.2 * $p) as $tail
             | {ok: ($w >= 0.4e9 - $tail), n: (of(0) | length), weights_ms: ($w | ms),
                threshold_ms: (0.4e9 - $tail | ms), from: "0.4 s - 2 intervals \($tail | ms) ms"}'
    done
    measure_s0
    mv forever_ring forever
    # (not SIGINT: a background job of a script ignores it)
    export PPW_SAMPLER=ring
    killed_by TERM term
    killed_by HUP hup
    unset PPW_SAMPLER
    check "SIGTERM: under the ring sampler" '.run.metric.reason | test("ring buffer")' term.all.json
}

# fork() then exec, from a program whose fork()ed child is sampled until
# it execs: of an instrumented program (crash.c, dying of abort()) and of a
# plain one, ten times (a sampling signal pending across execve used to
# kill the new program in about 1 run in 4).
case_fork_exec() {
    build forkexec
    build crash
    build cpu_spin
    ulimit -c 0
    ./forkexec.plain ./crash.plain abort >plain.out 2>/dev/null
    run_ppw fe ./forkexec ./crash abort
    [ "$(cat fe.rc)" = 0 ] || fail "forkexec: status $(cat fe.rc)"
    grep -qx "child signal 6" fe.out || fail "the exec'd child did not die of abort(): $(cat fe.out)"
    cmp -s plain.out fe.out || fail "stdout differs: $(diff plain.out fe.out)"
    [ ! -s fe.err ] || fail "ppw wrote to stderr: $(head -3 fe.err)"
    dump fe all || return
    check "the parent's run is intact: finished, one thread" \
        '.finished == true and (.threads | length) == 1' fe.all.json
    spent_in "the parent's run is sampled, in work()" fe.all.json 0 work 0.1
    # The exec'd program found PPW_OUTPUT's directory taken: fe.1.
    [ -d fe.1 ] || { fail "the exec'd instrumented child wrote no run directory: $(ls)"; return; }
    dump fe.1 all || return
    check "the exec'd child's own run: crash abort, not finished, not a fork" \
        '(.run.argv == ["./crash", "abort"]) and .finished == false and .run.info.parent_fork == false' \
        fe.1.all.json
    spent_in "the exec'd child's own run is sampled, in burn()" fe.1.all.json 0 burn 0.4
    local child
    child=$(ls -d fe-fork-* 2>/dev/null | head -1)
    [ -n "$child" ] || { fail "no run directory of the fork()ed child before exec"; return; }
    dump "$child" run || return
    check "the fork()ed child's directory (before exec) is readable, same pid as the exec'd run" \
        ".run.info.parent_fork == true and .pid == $(jq .pid fe.1.all.json)" "$child.run.json"
    local i
    for i in 1 2 3 4 5 6 7 8 9 10; do
        run_ppw fp$i ./forkexec ./cpu_spin.plain 0.02
        grep -qx "child exit 0" fp$i.out || { fail "run $i: the plain exec'd child: $(cat fp$i.out)"; break; }
    done
}

# Recursion 10,000 deep, sampled at the bottom: stacks keep their innermost
# PPW_MAX_FRAMES frames and are marked truncated; then fully instrumented
# (a GASP entry and exit per call): the call stack of measure.c grows,
# callpaths stay bounded, and ppw-blame reads both runs.
case_deep() {
    build deep
    same_behaviour deep 10000 0.3
    dump same all || return
    # Main spins 0.3 s in bottom(), 10,000 frames down: those samples are
    # expected from 0.3 s over its CPU time per sample, each cut to 256
    # frames from bottom() up (its leaf, or the vDSO's clock read under it)
    # and marked truncated.  Fails for stacks that overflow, are not marked
    # or lose their innermost frames.  Here 282 to 303, the threshold 222
    # (1% to 4% of them under the vDSO's clock_gettime).
    sampled "deep stacks are cut at max_frames and marked truncated" same.all.json \
        'period as $p | (of(0) | per_sample($p)) as $per
         | at_least([of(0)[] | select((.flags | index("truncated") != null) and (.stack | length) == 256
             and any(.stack[:3][]; .function == "bottom") and .stack[255].function == "descend")] | length;
             0.3e9 / $per; "0.3 s of CPU in bottom() over \($per / 1e3 | round) us per sample")' ||
        echo "  thread 0's samples by innermost function, flags and depth:" \
            "$(jq -c '[.samples[] | select(.thread == 0) | [.stack[0].function, .flags, (.stack | length)]]
                      | group_by(.) | map([.[0], length])' same.all.json | head -c 1500)" >&2
    check "the thread started at the bottom: its spawn stack truncated too, its samples glued" \
        '([.spawns[] | select(.kind == "pthread" and (.flags | index("truncated") != null)
           and (.frames | length) == 256)] | length) == 1
         and ([.samples[] | select(.thread == 1)] | all(.glue_error == null))' same.all.json
    # The thread spins a quarter of main's time, 0.075 s, in bottom(): about
    # 72 samples expected, 38 asked; 69 to 74 here.
    spent_in "the thread started at the bottom was sampled" same.all.json 1 bottom 0.075
    plugin_loadable || { echo "ppw-cc part skipped: an ASan-built plugin cannot load into clang" >&2; return; }
    # ppw-blame report and code need the blame section of a ppw-cc build.
    ppw_cc deep
    mv deep.inst deep.default
    run_ppw d-default ./deep.default 10000 0.3
    "$blame" report d-default >report.txt 2>report.err ||
        fail "ppw-blame report on truncated stacks: $(head -3 report.err)"
    "$blame" code d-default >code.txt 2>code.err ||
        fail "ppw-blame code on truncated stacks: $(head -3 code.err)"
    grep -q bottom code.txt || fail "ppw-blame code does not show bottom(): $(head -5 code.txt)"
    ppw_cc deep --inst-functions
    ./deep.plain 10000 0.3 >plain.out
    local mode
    for mode in profile trace; do
        PPW_MODE=$mode run_ppw d-$mode ./deep.inst 10000 0.3
        [ "$(cat d-$mode.rc)" = 0 ] || fail "$mode: status $(cat d-$mode.rc): $(head -3 d-$mode.err)"
        cmp -s plain.out d-$mode.out || fail "$mode: stdout differs"
    done
    "$blame" profile d-profile --format json >prof.json || { fail "ppw-blame profile"; return; }
    check "descend() timed 10,000 times, bottom() twice (once in the thread)" \
        '([.rows[] | select(.name == "descend") | .calls] | add) == 10000 and
         ([.rows[] | select(.name == "bottom") | .calls] | add) == 2' prof.json
    "$blame" report d-profile >/dev/null 2>report.err || fail "ppw-blame report (instrumented): $(head -3 report.err)"
    "$blame" code d-profile >code.txt 2>code.err || fail "ppw-blame code (instrumented): $(head -3 code.err)"
    dump d-trace all || return
    check "trace mode: 10,000 starts and ends of descend()" \
        '[.trace[] | select(.name == "descend")] | (map(select(.event == "start")) | length) == 10000
         and (map(select(.event == "end")) | length) == 10000' d-trace.all.json
}

# Threads that block every signal keep their mask and finish; one is still
# asleep, signals blocked, when main returns: the exit must not wait for it.
case_sigblock() {
    build sigblock
    ./sigblock.plain >plain.out
    PPW_OUTPUT=$tmp/sb timeout 60 ./sigblock >sb.out 2>sb.err
    local rc=$?
    [ $rc = 0 ] || { fail "status $rc (124: hung at exit): $(head -3 sb.err)"; return; }
    grep -qx "mask kept: yes" sb.out || fail "a thread's signal mask changed: $(cat sb.out)"
    cmp -s plain.out sb.out || fail "stdout differs: $(diff plain.out sb.out)"
    [ ! -s sb.err ] || fail "ppw wrote to stderr: $(head -3 sb.err)"
    dump sb all || return
    check "three threads recorded, the sleeper ended at exit" \
        '(.threads | length) == 3 and ([.threads[] | .ended] | all) and .finished == true' sb.all.json
    spent_in "main sampled, in work()" sb.all.json 0 work 0.3
    # The worker blocked every signal through pthread_sigmask: its mask
    # reads back as it set it (above), and it is sampled all the same
    # (signals.c), nothing significant lost in any thread.  (Its index is
    # 1 or 2: the threads number themselves as they start.)
    local worker
    worker=$(jq '.threads[] | select(.start_function == "blocked_worker") | .index' sb.all.json)
    spent_in "the worker that blocked every signal sampled, in work()" sb.all.json "$worker" work 0.3
    check "no thread lost samples" '[.threads[].lost.significant] | any | not' sb.all.json
}

# System calls that a signal interrupts whatever SA_RESTART says
# (nanosleep, clock_nanosleep, sem_timedwait) and futex waits, in threads
# sampled all the time: the program sees no EINTR, with either sampler
# (eintr.c prints its counts of EINTR, all 0 without ppw).
case_eintr() {
    build eintr
    ./eintr.plain >plain.out
    grep -q "nanosleep 0, clock_nanosleep 0, sem_wait 0, sem_timedwait 0, pthread_mutex_lock 0, poll 0, usleep 0" \
        plain.out || { fail "EINTR without ppw: $(cat plain.out)"; return; }
    local run
    for run in e1 e2 et; do
        if [ $run = et ]; then
            PPW_SAMPLER=timer run_ppw $run ./eintr
        else
            run_ppw $run ./eintr
        fi
        [ "$(cat $run.rc)" = 0 ] || fail "$run: status $(cat $run.rc)"
        cmp -s plain.out $run.out || fail "$run: EINTR leaked: $(cat $run.out)"
        [ ! -s $run.err ] || fail "$run: ppw wrote to stderr: $(head -3 $run.err)"
    done
    # Every thread but main (which only waits) burns 40 ms of CPU time or
    # more between its blocking calls: each is expected to have its CPU time
    # over its CPU time per sample, at least 10 at 4 sd.  Fails when a
    # blocked thread's sampler is not armed, so its calls were never
    # interrupted.  Here each thread had 29 samples or more above its
    # threshold (15 to 160).
    dump e1 all || return
    measure_s0
    sampled "the blocked threads were sampled" e1.all.json \
        'each_sampled([.threads[].index | select(. != 0)]; $s0)' --argjson s0 "$s0"
}

# lost_once NAME: the run's stderr holds exactly one line, about lost output.
lost_once() {
    [ "$(wc -l <"$1.err")" = 1 ] || fail "$1: want one line on stderr, got: $(head -5 "$1.err")"
    grep -q "output lost\|not measured" "$1.err" || fail "$1: unclear message: $(cat "$1.err")"
}

# The run directory on a full disk: a 4 KiB tmpfs (run.ppw's first page
# fits, no thread's file does; threads.c) and a 192 KiB one that 20 us samples
# fill during the run (cpu_spin.c, 1.6 s); then a 72 KiB RLIMIT_FSIZE.
# Each time ppw says so once on stderr, the program's stdout and status are
# unchanged (no SIGXFSZ), and what was written before is readable.
case_disk_full() {
    [ "$(id -u)" = 0 ] || skip "not root: cannot mount a tmpfs"
    build threads
    build cpu_spin
    local rc
    ./threads.plain >threads.plain.out
    ./cpu_spin.plain 1.6 >spin.plain.out
    mkdir tiny small
    mount -t tmpfs -o size=4k ppw-tiny tiny 2>/dev/null || skip "cannot mount a tmpfs here"
    # 192 KiB: run.ppw's first page, and the samples file grows into the
    # rest, 128 KiB and then as much as fits: about 14,000 samples of 12 to
    # 14 bytes, half of what 1.6 s gives at 20 us asked on a VM where a
    # sample costs 50 to 120 us of CPU time (0.8 s gave 11,400 there, too
    # few for a margin).
    if mount -t tmpfs -o size=192k ppw-small small 2>/dev/null; then
        PPW_OUTPUT=$tmp/tiny/run ./threads >tiny.out 2>tiny.err
        rc=$?
        PPW_BUFFER=64K PPW_PERIOD=20us PPW_OUTPUT=$tmp/small/run ./cpu_spin 1.6 >small.out 2>small.err
        echo "$rc $?" >tmpfs.rc
        cp -r small/run small-run
        umount small
    fi
    umount tiny
    [ -f tmpfs.rc ] || { fail "cannot mount the second tmpfs"; return; }
    [ "$(cat tmpfs.rc)" = "0 0" ] || fail "status changed on a full disk: $(cat tmpfs.rc)"
    cmp -s threads.plain.out tiny.out || fail "4K tmpfs: stdout changed"
    cmp -s spin.plain.out small.out || fail "192K tmpfs: stdout changed"
    lost_once tiny
    lost_once small
    dump small-run all || return
    # Not sampled numbers but space: what fits beside run.ppw (about 10,000
    # samples), against the 1.6 s of CPU time over the CPU time per sample
    # (about 20,000 here).
    sampled "samples were recorded until the disk was full, then counted as lost" small-run.all.json \
        '(.samples | length) as $n | .threads[0].dropped.no_space as $lost
         | {ok: ($n > 1000 and $lost > 0), n: $n, no_space: $lost, threshold: [1000, 1],
            from: "the space left, against 1.6 s / \(of(0) | wsum / length / 1e3 | round) us per sample"}'
    lost_accounted small-run disk_full
    # 4 KiB: run.ppw's first page fits, the samples file's does not (issue
    # 18: "0 samples ... no variable is blamed", and nothing said why).
    mkdir mid
    if mount -t tmpfs -o size=4k ppw-mid mid 2>/dev/null; then
        PPW_OUTPUT=$tmp/mid/run ./cpu_spin 0.3 >mid.out 2>mid.err
        echo $? >mid.rc
        cp -r mid/run mid-run
        umount mid
        [ "$(cat mid.rc)" = 0 ] || fail "4K tmpfs: status $(cat mid.rc)"
        ./cpu_spin.plain 0.3 >spin03.plain.out
        cmp -s spin03.plain.out mid.out || fail "4K tmpfs: stdout changed"
        dump mid-run all && lost_accounted mid-run no_file
    else
        fail "cannot mount the second 4K tmpfs"
    fi
    # The limit is per file, and above what run.ppw holds: the samples
    # file reaches 72 KiB (64 KiB reserved, then what fits) after about 5,900
    # samples (12 to 14 bytes each), half of what 1.6 s gives at 20 us
    # asked on a VM where a sample costs 70 to 120 us of CPU time and the
    # ring overflows at that period (about 11,800 taken).  152 KiB over
    # 0.8 s, sized when a sample took 30 bytes, held every sample of a
    # slow run: nothing was lost, nothing said.
    (ulimit -f 72; PPW_BUFFER=64K PPW_PERIOD=20us PPW_OUTPUT=$tmp/fsize exec ./cpu_spin 1.6 \
        >fsize.out 2>fsize.err)
    rc=$?
    [ $rc = 0 ] || fail "RLIMIT_FSIZE: status $rc (153: SIGXFSZ)"
    cmp -s spin.plain.out fsize.out || fail "RLIMIT_FSIZE: stdout changed"
    lost_once fsize
    dump fsize all || return
    sampled "RLIMIT_FSIZE: samples until the limit, then counted as lost" fsize.all.json \
        '(.samples | length) as $n | .threads[0].dropped.no_space as $lost
         | {ok: ($n > 1000 and $lost > 0), n: $n, no_space: $lost, threshold: [1000, 1],
            from: "the limit, against 1.6 s / \(of(0) | wsum / length / 1e3 | round) us per sample"}'
    lost_accounted fsize disk_full
}

# lost_accounted RUN CAUSE: thread 0 of RUN (dumped as RUN.all.json) lost
# samples, and the accounting says so: significant, CAUSE among the causes,
# and the lost count between two independent bounds, within 10%
# (docs/ppw-blame.md, "Lost samples").  At least the periods of CPU time
# no recorded sample's weight covers (the thread's CPU time from the
# arming, lost.expected periods, less the recorded weights); at most one
# sample a period less the samples recorded.  The two differ when a
# recorded sample covers more than a period, as at a 20 us period whose
# handler takes 35 us (then signals also come late: the reader counts
# those too, so the count lies between): on a 192 KiB tmpfs, 15,800
# periods in 10,100 recorded samples, 23,700 lost, bounds 23,700 and 29,400.
lost_accounted() {
    jq -c '.threads[0] | {cpu_ns, lost}' "$1.all.json" | sed "s/^/  $1: /"
    check "$1: the lost samples are accounted for ($2)" \
        '([.samples[] | select(.thread == 0) | .weight] | add // 0) as $w
         | .run.metric.period as $p | .threads[0]
         | (.lost.expected - $w / $p) as $least | (.lost.expected - .lost.recorded) as $most
         | .lost.significant and (.lost.causes | index($c) != null)
           and .lost.lost >= 0.9 * $least and .lost.lost <= 1.1 * $most' "$1.all.json" --arg c "$2"
}

# dl_churn with an instrumented library (ppw-cc -shared -fPIC): GASP events
# from code that is unloaded and loaded again 2,000 times while two threads
# are sampled every 100 us, throttled (dt) or not (di: throttling off, so
# that the 16,000 calls of leaf are all counted); then a fork()ed child,
# which names every region seen, the unloaded ones included.
case_dl_inst() {
    plugin_loadable || skip "an ASan-built plugin cannot load into clang"
    "$build/bin/ppw-cc" -O2 -shared -fPIC --inst-functions "$programs/dl_inst_lib.c" \
        -o "$tmp/libinst.so" 2>cc.err || { echo "ppw-cc -shared failed: $(cat cc.err)" >&2; exit 1; }
    ppw_cc dl_churn -ldl
    measure_s0
    local run
    for run in di dt; do
        if [ $run = dt ]; then export PPW_THROTTLE_CALLS=100 PPW_THROTTLE_USEC=1000; else
            export PPW_THROTTLE_CALLS=0; fi
        PPW_PERIOD=100us PPW_OUTPUT=$tmp/$run timeout 120 ./dl_churn.inst "$tmp/libinst.so" 2000 \
            >$run.out 2>$run.err
        local rc=$?
        [ $rc = 0 ] || { fail "$run: status $rc (124: hung): $(head -3 $run.err)"; continue; }
        [ "$(cat $run.out)" = "$(printf 'opened all\nvalues right\nchild ok')" ] ||
            fail "$run: output: $(cat $run.out)"
        [ ! -s $run.err ] || fail "$run: ppw wrote to stderr: $(head -3 $run.err)"
        dump $run all || continue
        sampled "$run: the threads were sampled during the churn" $run.all.json \
            'sampled_threads([.threads[].index]; $s0)' --argjson s0 "$s0"
        "$blame" profile $run --format json >$run.prof.json || { fail "$run: ppw-blame profile"; continue; }
        "$blame" report $run >/dev/null 2>report.err || fail "$run: ppw-blame report: $(head -3 report.err)"
        local fork
        fork=$(ls -d $run-fork-* 2>/dev/null | head -1)
        [ -n "$fork" ] && dump "$fork" run || { fail "$run: the fork()ed child's run"; continue; }
        check "$run: the child names the library's regions" \
            '[.run.regions[] | .name] | (index("leaf") != null and index("dl_churn_value") != null)' \
            "$fork.run.json"
    done
    unset PPW_THROTTLE_CALLS PPW_THROTTLE_USEC
    check "every call of the library's functions was counted" \
        '([.rows[] | select(.name == "dl_churn_value") | .calls] | add) >= 2000
         and ([.rows[] | select(.name == "leaf") | .calls] | add) == 8 * ([.rows[] | select(.name == "dl_churn_value") | .calls] | add)' \
        di.prof.json
    check "leaf() throttled after 100 calls, wherever the library was loaded" \
        '[.throttled[] | select(.name == "leaf") | .calls_before] | length > 0 and all(. == 100)' dt.prof.json
    # Each load (at one of a few addresses: one region each) sets the
    # library's switches again: the first call of a throttled leaf() clears
    # its switch, so about one call per load reaches libppw, not all 8.
    # dl_churn_value() is throttled 100 loads later than leaf().
    check "a reloaded library's throttled function stops calling libppw again" \
        '([.throttled[] | select(.name == "leaf") | .calls_after] | add) as $leaf
         | [.throttled[] | select(.name == "dl_churn_value")] as $v
         | $leaf <= 2 * (($v | map(.calls_after) | add) + 100 * ($v | length))' dt.prof.json
}

case_unwritable() {
    build threads
    PPW_OUTPUT=/proc/ppw-cannot-write-here ./threads >u.out 2>u.err
    local rc=$?
    ./threads.plain >u.plain 2>/dev/null
    [ $rc -eq $? ] || fail "exit status changed"
    cmp -s u.out u.plain || fail "stdout changed"
    [ "$(wc -l <u.err)" -eq 1 ] || fail "expected one line on stderr, got: $(cat u.err)"
    grep -q "cannot create the output directory" u.err || fail "unclear message: $(cat u.err)"
}

# hostile: symbolic links planted in the run directory, pointing outside
# it, where thread 1's files and thread 0's profile will be created.  ppw
# must not follow them (the victim stays as it was), must say which files it
# could not create, and ppw-blame must refuse the links by name rather than
# read the victim as part of the run.
case_hostile() {
    "$clang" -g -O2 -I"$here/../../include" "$programs/hostile.c" -o hostile.plain -lpthread
    "$clang" -g -O2 -I"$here/../../include" "$programs/hostile.c" -o hostile -lpthread \
        -L"$lib" -Wl,-rpath,"$lib" -lppw -Wl,--build-id
    echo "the victim's own bytes" >victim
    cp victim victim.orig
    ./hostile.plain "$tmp/h" "$tmp/victim" >plain.out
    local want=$?
    PPW_MODE=profile,trace run_ppw h ./hostile "$tmp/h" "$tmp/victim"
    [ "$(cat h.rc)" = "$want" ] || fail "exit status $(cat h.rc) with ppw, $want without"
    cmp -s plain.out h.out || fail "stdout differs: $(diff plain.out h.out | head -5)"
    cmp -s victim victim.orig || fail "ppw wrote through a planted link: the victim now has $(wc -c <victim) bytes"
    [ "$(find "$tmp/h" -type l | wc -l)" = 4 ] || fail "the planted links were replaced: $(ls -l "$tmp/h")"
    "$blame" dump h --format json --what run >h.err.json 2>h.blame.err &&
        fail "ppw-blame read a run holding planted links"
    grep -q "symbolic link" h.blame.err || fail "unclear message for a planted link: $(cat h.blame.err)"
    find "$tmp/h" -type l -delete
    dump h all || return
    check "run.ppw notes each of the 4 files ppw could not create" \
        '[.run.notes[] | .message | select(test("cannot create (t1.(samples|events|profile)|t0.profile).ppw"))] | length == 4' \
        h.all.json
    # spin() may be inlined into main: main's 0.2 s of it.
    spent_in "thread 0 was still sampled" h.all.json 0 main 0.2
}

# env: every runtime variable with a value out of its range or of the
# wrong kind.  The program runs as without ppw; each variable gets one line
# on stderr naming it and what it expects; the defaults are used.
case_env() {
    build cpu_spin
    ./cpu_spin.plain 0.1 >plain.out
    local bad=(PPW_PERIOD=5us PPW_JITTER=51 PPW_MAX_FRAMES=2000 PPW_MODE=fast PPW_SAMPLER=hw
               PPW_SIGNAL=SIGSEGV PPW_CALLPATH=11 PPW_THROTTLE_CALLS=-1
               PPW_THROTTLE_USEC=99999999 PPW_BUFFER=1K PPW_VERBOSE=maybe PPW_SAMPLE=2
               PPW_DISABLE=perhaps)
    env "${bad[@]}" PPW_OUTPUT="$tmp/e" ./cpu_spin 0.1 >e.out 2>e.err
    local rc=$?
    [ $rc = 0 ] || fail "status $rc with bad variables"
    cmp -s plain.out e.out || fail "stdout changed: $(diff plain.out e.out | head -3)"
    local kv name
    for kv in "${bad[@]}"; do
        name=${kv%%=*}
        [ "$(grep -c "^ppw: $kv: expected " e.err)" = 1 ] ||
            fail "$kv: expected one clear line on stderr, got: $(grep -- "$name" e.err)"
    done
    [ "$(wc -l <e.err)" = ${#bad[@]} ] || fail "other lines on stderr: $(cat e.err)"
    PPW_PERIOD=99999999999999999999999s PPW_OUTPUT="$tmp/o" ./cpu_spin 0.1 >o.out 2>o.err
    grep -q "^ppw: PPW_PERIOD=.*: expected a period" o.err || fail "an overflowing period: $(cat o.err)"
    dump e run || return
    check "the defaults were used" \
        '.run.metric.period == 1000000 and .run.metric.jitter_pct == 5 and .run.metric.max_frames == 256
         and .run.config.callpath_depth == 10 and .run.config.throttle_calls == 10000
         and .run.config.throttle_ns == 10000 and (.run.config.modes | index("sample") != null)' e.run.json
}

# PPW_SAMPLER=ring (docs/runtime.md, "The ring sampler"): the kernel's call
# chains into a ring buffer per thread, read on the thread, with the first
# frames unwound again from their call-frame information wherever the frame
# pointers skipped one.  programs/ring_leaf.c, built by ppw-cc (which keeps
# frame pointers and marks the program so), has three kinds of such code:
# - recurse(): DEPTH + 1 = 13 activations, the innermost looping before its
#   shrink-wrapped prologue pushes %rbp: the kernel's chain from %rbp starts
#   at the 12th, so only the repair gives a sample in the loop all 13;
# - smooth() calls exp(), memmove from shift(): libm and libc keep no frame
#   pointers, so the kernel's chain goes from the leaf to smooth's or
#   shift's caller; the repair puts smooth and shift back;
# - smooth() again in every thread of an OpenMP team: the same in workers,
#   whose samples also reach main through the region's spawn record;
# - by_value(), qsort's comparator, called from glibc's merge sort about 17
#   deep: beneath it the saved frame pointer is glibc's, so the kernel's
#   chain ends or goes astray; only an unwind through the whole merge sort
#   (48 frames and 4 KiB of stack at most) reaches sort_keys and main.
# Every sample that should have the frame has it after the repair, but a
# few: a leaf in a PLT stub, on an instruction without call-frame
# information (about 1% here).  The checks ask for 90% of at least 50
# samples each (about 300, 250, 200, 150 and 100 here; the team's part got
# 42-49 on a machine whose libm has an FMA exp, before it was made 2.5x
# longer): with the repair broken, they see 0% (the comparator: 2% by
# chance).
case_ring() {
    "$build/bin/ppw-cc" -O2 -g -fopenmp "$programs/ring_leaf.c" -lm -o ring_leaf ||
        { fail "cannot build ring_leaf with ppw-cc"; return; }
    "$clang" -g -O2 -fopenmp "$programs/ring_leaf.c" -lm -o ring_leaf.plain ||
        { fail "cannot build ring_leaf"; return; }
    "./ring_leaf.plain" >plain.out 2>/dev/null
    OMP_NUM_THREADS=2 PPW_SAMPLER=ring run_ppw r ./ring_leaf
    [ "$(cat r.rc)" = 0 ] && cmp -s plain.out r.out || fail "ring_leaf: not the plain build's output and status"
    dump r all || return
    jq -e '.run.metric.reason | test("ring buffer")' r.all.json >/dev/null ||
        skip "the ring sampler is not available here: $(jq -r .run.metric.reason r.all.json)"
    share() { # share DESCRIPTION SELECT HAS: of the samples SELECT picks, HAS holds for 90%
        check "$1" "[.samples[] | select($2)] as \$s | (\$s | length) >= 50 and
                    ([\$s[] | select($3)] | length) >= 0.9 * (\$s | length)" r.all.json ||
            jq -c "[.samples[] | select($2)] | {n: length, holding: [.[] | select($3)] | length,
                    seen: (map([.stack[].function] | .[0:4]) | group_by(.) | map({k: .[0], n: length})
                    | sort_by(-.n) | .[0:3])}" r.all.json >&2
    }
    local fn='[.stack[].function | strings]'
    share "samples in the recursion's loop have its 13 activations" \
        '.thread == 0 and .stack[0].function == "recurse"' \
        "$fn | map(select(. == \"recurse\")) | length == 13"
    share "samples in exp (libm) keep smooth, its caller" \
        ".thread == 0 and ($fn | index(\"main.omp_outlined\") == null) and ($fn | any(test(\"exp\")))" \
        "$fn | index(\"smooth\") != null"
    share "samples in qsort's callback keep qsort's caller and main" \
        '.thread == 0 and .stack[0].function == "by_value"' \
        "($fn | index(\"sort_keys\") != null) and ($fn | index(\"main\") != null)"
    # glibc's merge sort copies with memcpy too (13 of 85 such samples on
    # an AVX-512 machine): those are the comparator's case, not shift's.
    share "samples in memmove (libc) keep shift, its caller" \
        ".thread == 0 and ($fn | any(test(\"^__mem(move|cpy)\"))) and ($fn | any(test(\"^msort|qsort|sort_keys\")) | not)" \
        "$fn | index(\"shift\") != null"
    share "worker samples in exp keep smooth and the region, and reach main" \
        ".thread != 0 and ($fn | any(test(\"exp\")))" \
        "($fn | index(\"smooth\") != null) and ($fn | index(\"main.omp_outlined\") != null) and .reaches_main"
    # Weights are the thread's CPU time, as with signals.  The task clock
    # falls behind it in a thread that sleeps and wakes all the time: the
    # sleeper of eintr.c (nanosleep in a loop) counted 266 of its 399 ms
    # here, 0.67.  Each reading of the ring scales its samples to the CPU
    # time that passed since the one before: 313 of 315 ms.  Asks for 0.85
    # of the CPU time after the start-up s0, less two periods of tail.
    "$build/bin/ppw-cc" -O2 -g "$programs/eintr.c" -o eintr -lpthread ||
        { fail "cannot build eintr with ppw-cc"; return; }
    PPW_SAMPLER=ring run_ppw e ./eintr
    dump e all || return
    measure_s0
    check "the sleeper's weights add up to its CPU time" \
        '.run.metric.period as $p | [.threads[] | select(.start_function == "sleeper")] as $s
         | ($s | length) == 1 and ([.samples[] | select(.thread == $s[0].index) | .weight] | add) as $w
         | $w >= 0.85 * ($s[0].cpu_ns - $s0) - 2 * $p and $w <= $s[0].cpu_ns + $p' e.all.json \
        --argjson s0 "$s0"
    # fork() without exec: the kernel copies no perf buffer into the child,
    # which arms rings of its own and samples its 0.2 s of work.
    "$build/bin/ppw-cc" -O2 -g "$programs/forker.c" -o forker ||
        { fail "cannot build forker with ppw-cc"; return; }
    PPW_SAMPLER=ring run_ppw f ./forker
    grep -q "child exit 3" f.out || fail "forker under the ring sampler: $(cat f.out f.err)"
    local child
    child=$(ls -d "$tmp"/f-fork-* 2>/dev/null | head -1)
    if [ -z "$child" ]; then
        fail "the fork()ed child wrote no run directory"
    else
        "$blame" dump "$child" --format json --what all >fc.all.json || fail "dump $child"
        check "the fork()ed child sampled its work with a ring of its own" \
            '(.run.metric.reason | test("ring buffer")) and
             ([.samples[] | select(any(.stack[]; .function == "work"))] | length) >= 50' fc.all.json
    fi
    # Not built by ppw's pass: no mark, so no ring, but signals, and why.
    build cpu_spin
    PPW_SAMPLER=ring run_ppw s ./cpu_spin 0.2
    dump s all || return
    check "a program without the pass's mark is sampled with signals, and the metric says why" \
        '(.run.metric.reason | test("frame pointers")) and (.samples | length > 0)' s.all.json
}

case_timer() {
    build cpu_spin
    measure_s0
    PPW_SAMPLER=timer run_ppw t ./cpu_spin 0.6
    dump t all || return
    check "POSIX CPU timer chosen on request" '.run.metric.name == "CLOCK_THREAD_CPUTIME_ID"' t.all.json
    # The timer fires at the first scheduler tick that finds the thread
    # running past its period: on a quiet machine, the CPU time after the
    # last sample is under P plus one tick (10 ms at HZ=100, the slowest
    # Linux ticks); under load, a thread running in slices shorter than a
    # tick misses ticks at random, and its intervals (22 to 170 samples in
    # 0.6 s here) are memoryless at worst, so the last one outlasts
    # 10.4 mean intervals with the chance of 4 sd (ln(1 / 3.2e-5) = 10.4).
    weights_cover "weights add up to the CPU time" t.all.json \
        "$(jq '.run.metric.period as $p | [.samples[] | select(.thread == 0) | .weight]
               | [$p + 10000000, 10.4 * (if length > 0 then add / length else $p end)] | max' t.all.json)"
    PPW_SAMPLER=off run_ppw n ./cpu_spin 0.2
    dump n all || return
    check "PPW_SAMPLER=off records no samples" '.samples | length == 0' n.all.json
}

case_exports() {
    local want got
    want=$(sed -n 's/^ *\([a-zA-Z_][a-zA-Z0-9_]*\);$/\1/p' "$here/../../runtime/libppw.map" | sort)
    got=$(nm -D --defined-only "$lib/libppw.so" | awk '{ print $3 }' | sort)
    # The MPI wrappers exist only when libppw was built with mpi.h.
    echo "$got" | grep -qx MPI_Init || want=$(echo "$want" | grep -v '^MPI_')
    [ "$want" = "$got" ] || fail "exports differ from libppw.map: $(diff <(echo "$want") <(echo "$got"))"
}

case_nonroot() {
    [ "$(id -u)" -eq 0 ] || skip "not root: the unprivileged case is the normal one here"
    command -v setpriv >/dev/null || skip "setpriv missing"
    build cpu_spin
    chmod 755 "$tmp"
    chmod -R a+rX "$tmp"
    mkdir -m 777 "$tmp/nr"
    (cd "$tmp/nr" && setpriv --reuid=65534 --regid=65534 --clear-groups \
        env PPW_OUTPUT="$tmp/nr/run" "$tmp/cpu_spin" 0.4 >/dev/null)
    dump nr/run all || return
    measure_s0
    sampled "an unprivileged user is sampled too" nr/run.all.json 'sampled_threads([0]; $s0)' \
        --argjson s0 "$s0"
}

# Lost samples (faults.c): a program that blocks, ignores or takes the
# sampling signal, or closes or dup2s onto ppw's descriptors, after 0.1 s
# of its 0.4 s of CPU time.  The derivation: 0.3 s of CPU time after the
# fault is 300 periods of 1 ms.
# - The sampler survives every fault a program makes through the C library
#   (descriptors.c, signals.c): nothing significant is lost (under 20
#   samples or 10% of the expected count), and the program reads back
#   exactly what it set (the mask, the disposition; its own handler runs
#   once, for its own raise, never for ppw's timer): the output, which
#   prints all that, equals the plain build's.
# - A mask set by the system call itself (raw) cannot be seen: the run's
#   accounting (dump's per-thread `lost`) must say so: lost = CPU time /
#   period less the samples recorded, within 10%, flagged significant,
#   with the cause the runtime saw at the thread's end (signal_blocked).
case_lost() {
    build faults
    local mode cause
    for mode in none close dup block ignore handle raw; do
        ./faults.plain $mode >plain.out
        run_ppw l-$mode ./faults $mode
        [ "$(cat l-$mode.rc)" = 0 ] || { fail "$mode: status $(cat l-$mode.rc)"; continue; }
        cmp -s plain.out l-$mode.out ||
            fail "$mode: the output changed: $(cat l-$mode.out), plain: $(cat plain.out)"
        dump l-$mode run || continue
        cause=
        [ $mode != raw ] || cause=signal_blocked
        jq -c '.threads[0] | {cpu_ns, samples_recorded, lost}' l-$mode.run.json |
            sed "s/^/  $mode: /"
        if [ -z "$cause" ]; then
            # A few samples may be dropped and counted (one pending at the
            # thread's teardown, on a loaded machine: 4 of 402 once in the
            # suite), never lost to the mode's own cause.
            check "$mode: nothing significant lost" \
                '.threads[0].lost | .significant == false and (.causes - ["dropped"]) == []' \
                l-$mode.run.json
        else
            check "$mode: lost = CPU time / period - recorded, within 10%, for $cause" \
                '.threads[0] | (.lost.expected - .lost.recorded) as $gap
                 | .lost.significant and (.lost.causes | index($c) != null)
                   and ((.lost.lost - $gap) | fabs) <= 0.1 * $gap' \
                l-$mode.run.json --arg c "$cause"
        fi
    done
    check "handle: sampling moved off the signal the program took, and a note says so" \
        '[.run.notes[].message | select(test("sampling moved to"))] | length == 1' l-handle.run.json
    # The views say it too (a ppw-cc build: the report needs blame graphs).
    plugin_loadable || { echo "report part skipped: an ASan-built plugin cannot load into clang" >&2; return; }
    ppw_cc faults
    run_ppw lr ./faults.inst raw
    "$blame" report lr >report.txt 2>report.err || { fail "report: $(head -3 report.err)"; return; }
    grep -q '^warning: samples lost: thread 0 had .* the thread blocked the sampling signal$' \
        report.txt || fail "report: no lost-samples warning: $(head -4 report.txt)"
    "$blame" code lr --format json >code.json || { fail "code --format json"; return; }
    check "code's JSON: the thread's lost object" \
        '.lost[0] | .thread == 0 and .significant and (.causes == ["signal_blocked"])' code.json
}

# Environment: run.ppw records the settings of a parallel run, never the
# rest (a token, a key), unless PPW_RECORD_ENV=all.
case_environment() {
    build cpu_spin
    SECRET_TOKEN=hunter2 OMP_NUM_THREADS=3 run_ppw e1 ./cpu_spin 0
    dump e1 run || return
    check "allow-list: OMP_NUM_THREADS and PATH kept, SECRET_TOKEN left out and counted" \
        '.run.env | (index("OMP_NUM_THREADS=3") != null) and (map(startswith("PATH=")) | any)
         and (map(startswith("SECRET_TOKEN")) | any | not)' e1.run.json
    check "the variables left out are counted" '.run.env_left_out > 0' e1.run.json
    grep -rq hunter2 e1 && fail "the secret is somewhere in the run directory"
    SECRET_TOKEN=hunter2 PPW_RECORD_ENV=all run_ppw e2 ./cpu_spin 0
    dump e2 run || return
    check "PPW_RECORD_ENV=all records everything" \
        '.run.env | index("SECRET_TOKEN=hunter2") != null' e2.run.json
}

# site_line PROGRAM LABEL: the line of programs/PROGRAM.c marked /* site: LABEL */
site_line() { grep -n "/\* site: $2 \*/" "$programs/$1.c" | cut -d: -f1; }
# jq definitions over a profile's JSON: site(L) the throttled entries of the
# call site at line L, exact(L) the calls timed there.
profile_sites='def site($l): [.throttled[] | select(.line == $l)];
               def exact($l): [.rows[] | select(.line == $l) | .calls] | add;'

# ppw_cc NAME [flags...]: programs/NAME.c through ppw-cc -> ./NAME.inst
ppw_cc() {
    local name=$1
    shift
    "$build/bin/ppw-cc" -O2 "$@" "$programs/$name.c" -o "$name.inst" -lpthread 2>cc.err ||
        { echo "ppw-cc failed: $(cat cc.err)" >&2; exit 1; }
}

plugin_loadable() { ! nm -D --undefined-only "$lib/ppw.so" | grep -q __asan_; }

# libppw adds no block to the program's heap (runtime/leaf.c, spawn.c):
# its own memory is mmap'd, so glibc's counts of bytes in use and held
# (programs/heap.c prints them at four points) are the same to the byte
# with ppw on and off.  The two runs' environments have the same size
# (PPW_DISABLE=0 and =1): libomp copies the environment into its heap.
# Before, libunwind's address space for the leaf repair put 26 KiB in the
# main arena before main, and a thread's start block, malloc'd by its
# creator and freed by the thread, left the creator's chunk in the new
# thread's tcache; bench/runtime/alloc.c then consolidated its arenas
# three to fourteen times as often.  Under both samplers, on 2 threads.
case_heap() {
    plugin_loadable || skip "an ASan-built plugin cannot load into clang"
    ppw_cc heap -fopenmp
    local sampler
    for sampler in ring perf; do
        OMP_NUM_THREADS=2 PPW_SAMPLER=$sampler PPW_DISABLE=1 run_ppw off-$sampler ./heap.inst
        OMP_NUM_THREADS=2 PPW_SAMPLER=$sampler PPW_DISABLE=0 run_ppw on-$sampler ./heap.inst
        [ "$(cat on-$sampler.rc) $(cat off-$sampler.rc)" = "0 0" ] ||
            { fail "$sampler: exit status $(cat on-$sampler.rc) on, $(cat off-$sampler.rc) off"; continue; }
        [ -d on-$sampler ] && [ ! -e off-$sampler ] ||
            fail "$sampler: a run directory with ppw on only, not: $(ls -d on-* off-* 2>&1)"
        [ "$(grep -c "in use" on-$sampler.out)" = 4 ] || fail "$sampler: not four counts: $(cat on-$sampler.out)"
        cmp -s off-$sampler.out on-$sampler.out ||
            fail "$sampler: the heap differs with ppw: $(diff off-$sampler.out on-$sampler.out | head -6)"
    done
}

case_modes() {
    plugin_loadable || skip "an ASan-built plugin cannot load into clang"
    build calls
    ppw_cc calls --inst-functions
    ./calls.plain >plain.out
    for mode in profile trace none; do
        PPW_MODE=$mode run_ppw m-$mode ./calls.inst
        cmp -s plain.out m-$mode.out || fail "PPW_MODE=$mode changed the output"
    done
    "$blame" profile m-profile --format json >prof.json || { fail "ppw-blame profile"; return; }
    # Entry counts are exact, summed over callpaths.
    local counts='def calls($f): [.rows[] | select(.name == $f) | .calls] | add;'
    jq -e '.' prof.json >/dev/null || { fail "profile JSON unreadable"; return; }
    check "leaf() counted 1000 times" "$counts calls(\"leaf\") == 1000" prof.json
    check "middle() counted 10 times" "$counts calls(\"middle\") == 10" prof.json
    check "rec() counted 10 times (recursion)" "$counts calls(\"rec\") == 10" prof.json
    check "main() counted once" "$counts calls(\"main\") == 1" prof.json
    # Throttling: a tiny function stops being timed after N calls, and the
    # compiled code stops calling libppw (its enable switch is cleared).
    PPW_THROTTLE_CALLS=100 PPW_THROTTLE_USEC=1000 run_ppw m-thr ./calls.inst
    "$blame" profile m-thr --format json >thr.json || { fail "ppw-blame profile (throttled)"; return; }
    check "leaf() throttled after exactly 100 calls, then no more calls into libppw" \
        '[.throttled[] | select(.name == "leaf") | .calls_before == 100 and .calls_after == 0] == [true]' \
        thr.json
    check "middle() is not throttled" '[.throttled[] | select(.name == "middle")] | length == 0' thr.json
    dump m-trace all || return
    check "trace mode: 1000 START and 1000 END events of leaf()" \
        '[.trace[] | select(.name == "leaf")] | (map(select(.event == "start")) | length) == 1000
         and (map(select(.event == "end")) | length) == 1000' m-trace.all.json
    check "trace mode writes no profile" '[.threads[] | .files.profile] | all(. == null)' m-trace.all.json
    dump m-profile all || return
    check "profile mode writes no trace" '.trace | length == 0' m-profile.all.json
    dump m-none all || return
    # calls.c runs for well under a period: no sample is expected, but
    # the sampler is armed, its samples file open.
    check "PPW_MODE=none: no profile, no trace, the sampler still on" \
        '(.trace | length == 0) and ([.threads[] | .files.profile] | all(. == null))
         and .run.metric.source != "none" and .threads[0].files.samples != null' \
        m-none.all.json
}

# Allocation sites sampled after throttling (docs/runtime.md, "Allocation
# sites").  alloc_sites.c makes exactly 400,000 calls at its node malloc
# and node free sites (ITEMS 2000 x ROUNDS 200) in 2 OpenMP threads, and
# 200 at each of its table sites.  With PPW_THROTTLE_SAMPLE=100 and
# PPW_THROTTLE_SAMPLE_USEC=0 a hot site is timed in full for its first
# 1000 calls (PPW_THROTTLE_ALLOC_CALLS) on the thread that throttles it,
# then about 1 call in 100 on either thread, at random spacing uniform in
# [50, 150): about 4,000 sampled calls, whose mean window is 100 +- 0.5
# (sd): 95..105 once rounded.  Each stands for the window it closes, so
# the estimate is exact but for each thread's last window (counted half,
# at most 75 off) and the mean's rounding (0.5 a sampled call): 400,000
# within 2%.  The table sites stay exact.
#
# With the spacing free to grow (PPW_THROTTLE_SAMPLE_USEC, 250 us by
# default), a thread times a site's calls about 250 us apart: the node
# loops make 1000 calls a round per thread in tens of microseconds, a few
# million calls a second even under ASan, so the mean window is well over
# 200 (about rate x 250 us).  The estimate is exact but for each thread's
# last window, counted half, which is sized by the thread's latest rate:
# under load that can be several times the mean window (which the first
# windows of about 100 calls pull down).  Run alone, one thread was within
# half a mean window (5 runs); two threads here were within 2.5 in 42 of
# 44 runs, 3.2 in one, and under ASan with a CPU hog beside them up to
# 9.2 (6% of 400,000), before the spacing's growth was capped at twofold
# a window; with the cap, within 0.7% in 12 runs beside a CPU hog.  A
# weight lost or not added would put it off by orders of magnitude; the
# check allows 10%.
case_alloc() {
    plugin_loadable || skip "an ASan-built plugin cannot load into clang"
    "$clang" -g -O2 -fopenmp "$programs/alloc_sites.c" -o alloc_sites.plain ||
        { echo "cannot build alloc_sites" >&2; exit 1; }
    ppw_cc alloc_sites -fopenmp
    OMP_NUM_THREADS=2 ./alloc_sites.plain >plain.out
    local node_malloc node_free table_calloc table_free
    node_malloc=$(site_line alloc_sites "node malloc") node_free=$(site_line alloc_sites "node free")
    table_calloc=$(site_line alloc_sites "table calloc")
    table_free=$(site_line alloc_sites "table free")
    OMP_NUM_THREADS=2 PPW_THROTTLE_SAMPLE=100 PPW_THROTTLE_SAMPLE_USEC=0 run_ppw a ./alloc_sites.inst
    cmp -s plain.out a.out || fail "the output changed under ppw"
    "$blame" profile a --format json >a.json || { fail "ppw-blame profile"; return; }
    check "the node sites are sampled 1 in 100 after 1000 timed calls" \
        "$profile_sites [site($node_malloc), site($node_free)] | map(length == 1
            and .[0].sample_period >= 95 and .[0].sample_period <= 105
            and .[0].sampled_calls > 1000 and .[0].calls_before >= 1000 and .[0].estimated) | all" a.json
    check "their estimated calls are 400,000 within 2%" \
        "$profile_sites [site($node_malloc)[0].calls, site($node_free)[0].calls]
            | map(. > 392000 and . < 408000) | all" a.json
    OMP_NUM_THREADS=2 PPW_THROTTLE_SAMPLE=100 run_ppw g ./alloc_sites.inst
    cmp -s plain.out g.out || fail "the output changed under ppw (spacing by time)"
    "$blame" profile g --format json >g.json || { fail "ppw-blame profile (spacing by time)"; return; }
    check "spacing by time: the node sites' windows grow past 200" \
        "$profile_sites [site($node_malloc), site($node_free)] | map(length == 1
            and .[0].sample_period > 200 and .[0].estimated) | all" g.json
    check "spacing by time: their estimated calls are 400,000 within 10%" \
        "$profile_sites [site($node_malloc)[0].calls, site($node_free)[0].calls]
            | map(. > 360000 and . < 440000) | all" g.json
    check "the table sites are exact, never throttled" \
        "$profile_sites (site($table_calloc) + site($table_free) | length == 0)
            and exact($table_calloc) == 200 and exact($table_free) == 200" a.json
    check "the run records the sampling settings" \
        '.run.config.throttle_sample == 100 and .run.config.throttle_alloc_calls == 1000' \
        <("$blame" dump a --format json --what run)
    # Sampling off: a throttled site's gate closes, so its calls stop
    # reaching libppw: nothing is counted or sampled after the thread that
    # throttled it closed it (the other thread's calls in flight at that
    # moment are at most a few hundred).
    OMP_NUM_THREADS=2 PPW_THROTTLE_SAMPLE=0 run_ppw q ./alloc_sites.inst
    cmp -s plain.out q.out || fail "the output changed under ppw (sampling off)"
    "$blame" profile q --format json >q.json || { fail "ppw-blame profile (sampling off)"; return; }
    check "sampling off: throttled node sites go quiet" \
        "$profile_sites [site($node_malloc), site($node_free)] | map(length == 1 and .[0].sampled_calls == 0
            and .[0].calls_after < 1000 and .[0].calls < 3000) | all" q.json
    # PPW_MODE=none: nothing measures events, the output is the same.
    OMP_NUM_THREADS=2 PPW_MODE=none run_ppw n ./alloc_sites.inst
    cmp -s plain.out n.out || fail "the output changed under ppw (PPW_MODE=none)"
    # libppw's frames in no user view: with every call sent to libppw
    # (PPW_THROTTLE_SAMPLE=1: throttled calls are counted, one by one) and
    # 10x the rounds, 8M events at about 50 ns or more put a third of the
    # run's samples or more in libppw's frames, which every view must cut
    # (test/lib/names.sh); none sampled would leave nothing to check.
    OMP_NUM_THREADS=2 PPW_THROTTLE_SAMPLE=1 run_ppw f ./alloc_sites.inst 2000
    . "$here/../lib/names.sh"
    source_names_only "$blame" f ./alloc_sites.inst
    [ -n "$names_ppw" ] || fail "no sample in libppw's frames: nothing was checked"
}

case_user_events() {
    "$clang" -g -O2 -I"$here/../../include" "$programs/user_events.c" -o user_events.plain
    "$clang" -g -O2 -I"$here/../../include" "$programs/user_events.c" -o user_events \
        -L"$lib" -Wl,-rpath,"$lib" -lppw -Wl,--build-id
    ./user_events.plain >plain.out
    grep -q "id none" plain.out || fail "without libppw the API must be inert: $(cat plain.out)"
    PPW_MODE=profile,trace run_ppw ue ./user_events
    grep -q "id given" ue.out || fail "ppw_create_event gave no id: $(cat ue.out)"
    dump ue all || return
    check "the user region is named and traced with its formatted description" \
        '[.trace[] | select(.name == "solve" and .event == "start") | .description]
         == ["iteration 0 of three", "iteration 1 of three", "iteration 2 of three"]' ue.all.json
    # 0.2 s of CPU time spun with measurement off: each sample due then is
    # dropped as paused, about 0.2 s over the CPU time per sample of the
    # samples taken (0.06 s of the rest).  Fails if pausing drops nothing
    # or the sampler stops.  Here 191 to 200, the threshold about 137.
    sampled "ppw_control(0) pauses samples: about 200 dropped as paused" ue.all.json \
        'period as $p | (of(0) | per_sample($p)) as $per
         | at_least(.threads[0].dropped.paused; 0.2e9 / $per;
             "0.2 s of CPU paused over \($per / 1e3 | round) us per sample")'
    "$blame" profile ue --format json >ue.prof.json || { fail "ppw-blame profile"; return; }
    check "three timed calls of the user region" \
        '[.rows[] | select(.name == "solve") | .calls] | add == 3' ue.prof.json
}

case_mpi() {
    command -v mpirun >/dev/null && command -v mpicc >/dev/null || skip "mpirun/mpicc not installed"
    nm -D --defined-only "$lib/libppw.so" | grep -qw MPI_Init ||
        skip "libppw was built without mpi.h (no MPI wrappers)"
    export OMPI_MCA_rmaps_base_oversubscribe=1
    local mpirun=(mpirun --oversubscribe -np 4)
    [ "$(id -u)" -ne 0 ] || mpirun+=(--allow-run-as-root)
    # mpicc's own compiler (gcc on Debian): a program naming MPI_COMM_WORLD
    # then holds a copy of the handle's object (a copy relocation), which
    # libppw must use instead of libmpi's unused original.
    mpicc -g -O2 "$programs/mpi_ring.c" -o mpi_ring.plain ||
        { echo "cannot build mpi_ring" >&2; exit 1; }
    mpicc -g -O2 "$programs/mpi_ring.c" -o mpi_ring \
        -L"$lib" -Wl,-rpath,"$lib" -lppw -Wl,--build-id ||
        { echo "cannot build mpi_ring with libppw" >&2; exit 1; }
    readelf -r mpi_ring | grep -q 'R_X86_64_COPY.*ompi_mpi_comm_world' ||
        echo "note: mpi_ring has no copy relocation of ompi_mpi_comm_world" >&2
    readelf -d "$lib/libppw.so" | grep -q 'NEEDED.*libmpi' && fail "libppw must not link libmpi"
    mkdir plain job
    (cd plain && "${mpirun[@]}" ../mpi_ring.plain >../plain.out 2>../plain.err) ||
        { fail "uninstrumented mpi_ring failed: $(head -3 plain.err)"; return; }
    (cd job && "${mpirun[@]}" ../mpi_ring >../mpi.out 2>../mpi.err)
    local rc=$?
    [ "$rc" = 0 ] || fail "mpi_ring with ppw: exit status $rc: $(head -3 mpi.err)"
    cmp -s plain.out mpi.out || fail "stdout differs with ppw: $(diff plain.out mpi.out | head -5)"
    [ -z "$(ls plain)" ] || fail "the uninstrumented run wrote files: $(ls plain)"
    local jobs
    jobs=$(ls -d job/ppw-mpi_ring-* 2>/dev/null)
    [ "$(echo "$jobs" | grep -c .)" = 1 ] && [ "$(ls job | wc -l)" = 1 ] ||
        { fail "want one job directory, got: $(ls job)"; return; }
    local runs
    runs=$(ls "$jobs" | grep -E '^r[0-9]+-.+-[0-9]+$' | sort)
    [ "$(echo "$runs" | grep -c .)" = 4 ] && [ "$(ls "$jobs" | wc -l)" = 4 ] ||
        { fail "want 4 r<rank>-<host>-<pid> run directories, got: $(ls "$jobs")"; return; }
    local r rank
    for r in $runs; do
        rank=${r#r}
        rank=${rank%%-*}
        "$blame" dump "$jobs/$r" --format json --what run >"$r.json" ||
            { fail "ppw-blame dump $r: $(head -3 "$r.json")"; continue; }
        check "$r: MPI record of rank $rank of 4, finalized" \
            ".run.mpi.rank == $rank and .run.mpi.size == 4 and .run.mpi.fini_local_ns > 0
             and .run.mpi.init_local_ns > 0 and .run.mpi.fini_master_ns > .run.mpi.init_master_ns
             and .run.info.pid == (\"$r\" | split(\"-\") | last | tonumber)" "$r.json"
        check "$r: the run finished" '.finished == true' "$r.json"
    done
    check "rank 0's clock points are its own" \
        '.run.mpi.init_local_ns == .run.mpi.init_master_ns' r0-*.json
    [ "$(cat r*.json | jq -s 'map(.run.mpi.job_id) | unique | length')" = 1 ] ||
        fail "ranks disagree on the job id"
    [ "$jobs" = "job/ppw-mpi_ring-$(jq .run.info.pid r0-*.json)" ] ||
        fail "the job directory is not named after rank 0's pid: $jobs"
    # PPW_OUTPUT=DIR names the job directory itself (issue 18: the job went
    # to ppw-<exe>-<pid>/ beside it): the ranks in DIR/r<rank>-<host>-<pid>,
    # nothing else written, and the views read DIR as the job.
    mkdir named
    (cd named && PPW_OUTPUT=out/jobdir "${mpirun[@]}" ../mpi_ring >../named.out 2>../named.err) ||
        { fail "mpi_ring with PPW_OUTPUT: $(head -3 named.err)"; return; }
    cmp -s plain.out named.out || fail "PPW_OUTPUT: stdout differs"
    [ "$(ls named)" = out ] && [ "$(ls named/out)" = jobdir ] ||
        fail "PPW_OUTPUT=out/jobdir: want only out/jobdir, got: $(ls -R named | head -10)"
    runs=$(ls named/out/jobdir | grep -cE '^r[0-3]-.+-[0-9]+$')
    [ "$runs" = 4 ] && [ "$(ls named/out/jobdir | wc -l)" = 4 ] ||
        fail "PPW_OUTPUT=out/jobdir: want 4 rank directories in it, got: $(ls named/out/jobdir)"
    "$blame" dump named/out/jobdir/r2-* --format json --what run >named-r2.json &&
        check "PPW_OUTPUT: rank 2's run directory holds rank 2" '.run.mpi.rank == 2' named-r2.json
    "$blame" intrusion named/out/jobdir --format json >named.prof.json 2>named.prof.err ||
        fail "ppw-blame intrusion on the named job directory: $(head -3 named.prof.err)"
    check "PPW_OUTPUT: the views read the 4 ranks of the named job" '.ranks_read == 4' named.prof.json
}

# mpi_events: libppw's PMPI wrappers record GASP_MPI_* events for calls the
# pass did not instrument (plain mpicc + -lppw), with the pass's operands
# (count, type, peer, tag, comm; END adds the result); a ppw-cc build (libppw
# linked before libmpi, so the wrappers are active too) gets exactly one
# event pair per call.
# rank_trace GLOB RANK OUT: rank RANK's trace, from the job's run
# directory GLOB/r<RANK>-*, into OUT (JSON); sets r to that directory.
rank_trace() {
    r=$(ls -d $1/r$2-* 2>/dev/null)
    [ -n "$r" ] || { fail "no run directory of rank $2 under $1"; return 1; }
    "$blame" dump "$r" --format json --what trace >"$3" ||
        { fail "ppw-blame dump $r: $(head -3 "$3")"; return 1; }
}

case_mpi_events() {
    command -v mpirun >/dev/null && command -v mpicc >/dev/null || skip "mpirun/mpicc not installed"
    nm -D --defined-only "$lib/libppw.so" | grep -qw MPI_Send ||
        skip "libppw was built without mpi.h (no MPI wrappers)"
    export OMPI_MCA_rmaps_base_oversubscribe=1
    local mpirun=(mpirun --oversubscribe -np 4)
    [ "$(id -u)" -ne 0 ] || mpirun+=(--allow-run-as-root)
    OMPI_CC=$clang mpicc -g -O2 "$programs/mpi_collect.c" -o mpi_collect \
        -L"$lib" -Wl,-rpath,"$lib" -lppw -Wl,--build-id ||
        { echo "cannot build mpi_collect with libppw" >&2; exit 1; }
    local r rank prev next inst=1
    plugin_loadable || inst=0
    if [ $inst = 1 ]; then
        # shellcheck disable=SC2046
        "$build/bin/ppw-cc" -O2 -g $(mpicc --showme:compile) "$programs/mpi_collect.c" \
            -o mpi_collect.inst -L"$lib" -Wl,-rpath,"$lib" -lppw $(mpicc --showme:link) 2>cc.err ||
            { echo "ppw-cc failed: $(cat cc.err)" >&2; exit 1; }
    fi
    mkdir plain inst
    (cd plain && PPW_MODE=profile,trace "${mpirun[@]}" ../mpi_collect >../plain.out 2>../plain.err) ||
        { fail "mpi_collect with ppw failed: $(head -3 plain.err)"; return; }
    grep -q "ranks 4, total 12, root 7" plain.out || fail "mpi_collect output: $(cat plain.out)"
    local count='def n($name; $ev): [.trace[] | select(.name == $name and .event == $ev)] | length;
        def pairs($names): . as $d | $names | all(. as $x | ($d | n($x; "start")) == 1 and ($d | n($x; "end")) == 1);'
    for rank in 0 1 2 3; do
        rank_trace "plain/ppw-mpi_collect-*" $rank p$rank.json || continue
        next=$(((rank + 1) % 4)) prev=$(((rank + 3) % 4))
        check "rank $rank: one START/END pair of each wrapped call" \
            "$count pairs([\"GASP_MPI_SEND\", \"GASP_MPI_RECV\", \"GASP_MPI_ISEND\", \"GASP_MPI_IRECV\",
              \"GASP_MPI_WAITALL\", \"GASP_MPI_ALLREDUCE\", \"GASP_MPI_BCAST\", \"GASP_MPI_BARRIER\"])" p$rank.json
        check "rank $rank: MPI_Send's count, peer, tag; END adds result 0" \
            "([.trace[] | select(.name == \"GASP_MPI_SEND\") | .args[0,2,3]]
              == [3, $next, $((100 + rank)), 3, $next, $((100 + rank))])
             and ([.trace[] | select(.name == \"GASP_MPI_SEND\" and .event == \"end\") | .args
                   | length, .[5]] == [6, 0])" p$rank.json
        # The profile counts the data each operation moved: 3 MPI_LONGs to
        # MPI_Send and MPI_Recv, 1 to the others; none to a barrier.
        "$blame" profile "$r" --format json >b$rank.json || fail "ppw-blame profile $r"
        check "rank $rank: bytes moved per operation (count x datatype size)" \
            '[.rows[] | {key: .name, value: .bytes}] | from_entries |
             .GASP_MPI_SEND == 24 and .GASP_MPI_RECV == 24 and .GASP_MPI_ISEND == 8 and
             .GASP_MPI_IRECV == 8 and .GASP_MPI_ALLREDUCE == 8 and .GASP_MPI_BCAST == 8 and
             .GASP_MPI_BARRIER == 0' b$rank.json
        check "rank $rank: MPI_Recv's count, peer, tag" \
            "[.trace[] | select(.name == \"GASP_MPI_RECV\") | .args[0,2,3]]
             == [3, $prev, $((100 + prev)), 3, $prev, $((100 + prev))]" p$rank.json
        check "rank $rank: MPI_Allreduce's count, type, comm (the same comm as MPI_Send's)" \
            "([.trace[] | select(.name == \"GASP_MPI_ALLREDUCE\" and .event == \"end\") | .args]
              | .[0] | length == 4 and .[0] == 1 and .[3] == 0)
             and ([.trace[] | select(.name == \"GASP_MPI_ALLREDUCE\") | .args[2]] | unique)
                 == ([.trace[] | select(.name == \"GASP_MPI_SEND\") | .args[4]] | unique)" p$rank.json
    done
    # On rank 0's clock (master_ns, the linear drift model), no rank leaves
    # the barrier before every rank has entered it, within the offsets'
    # error: half the shortest ping round trip, which reaches milliseconds
    # when 4 ranks share 2 cores (10 ms allowed; a wrong clock is far off;
    # under 0.1 ms seen here, at a load of 4).
    if [ -s p0.json ] && [ -s p3.json ]; then
        jq -s '[.[] | .trace[] | select(.name == "GASP_MPI_BARRIER")] |
            ([.[] | select(.event == "start") | .master_ns] | max) as $in |
            ([.[] | select(.event == "end") | .master_ns] | min) as $out |
            {ok: (length == 8 and $in <= $out + 10000000), late_us: (($in - $out) / 1e3 | round)}' \
            p0.json p1.json p2.json p3.json >barrier.json
        echo "  barrier on rank 0's clock: last entry - first exit = $(jq .late_us barrier.json) us, allowed 10000"
        [ "$(jq .ok barrier.json)" = true ] ||
            fail "barrier on rank 0's clock: $(jq -c '[.trace[] | select(.name == "GASP_MPI_BARRIER") | {event, time_ns, master_ns}]' p*.json)"
    fi
    [ $inst = 1 ] || { echo "ppw-cc part skipped: an ASan-built plugin cannot load into clang" >&2; return; }
    (cd inst && PPW_MODE=trace "${mpirun[@]}" ../mpi_collect.inst >../inst.out 2>../inst.err) ||
        { fail "ppw-cc-built mpi_collect failed: $(head -3 inst.err)"; return; }
    for rank in 0 1 2 3; do
        # The job directory shows that libppw's MPI_Init wrapper, and so
        # its other wrappers, were active.
        rank_trace "inst/ppw-mpi_collect.inst-*" $rank i$rank.json || continue
        check "rank $rank, ppw-cc build: exactly one event pair per MPI call (no duplicates)" \
            "$count pairs([\"GASP_MPI_INIT\", \"GASP_MPI_SEND\", \"GASP_MPI_RECV\", \"GASP_MPI_ISEND\",
              \"GASP_MPI_IRECV\", \"GASP_MPI_WAITALL\", \"GASP_MPI_ALLREDUCE\", \"GASP_MPI_BCAST\",
              \"GASP_MPI_BARRIER\", \"GASP_MPI_FINALIZE\"])" i$rank.json
        check "rank $rank, ppw-cc build: no other MPI events" \
            '[.trace[] | select(.tag >= 1300 and .tag < 1400)] | length == 20' i$rank.json
    done
    # A quiet MPI site: 30,000 more allreduces at one call site, throttled
    # after 10,000 timed calls (PPW_THROTTLE_USEC is set beyond any call's
    # mean), then sampled 1 in about 100 (spacing uniform in [50, 150)).
    # The calls a quiet site does not send go to PMPI_Allreduce, past
    # libppw's wrapper; were they sent to MPI_Allreduce, the wrapper would
    # record about 20,000 of them in a row of its own, without a file.  The
    # estimate: 10,000 counted plus about 200 sampled calls standing for
    # 100 each, whose count has a relative deviation of about
    # sqrt(1/(12 x 200)) = 2% of 20,000, so 30,000 +- 10% is over 7 sd.
    mkdir quiet
    (cd quiet && PPW_THROTTLE_USEC=1000000 PPW_THROTTLE_SAMPLE=100 "${mpirun[@]}" \
        ../mpi_collect.inst 30000 >../quiet.out 2>../quiet.err) ||
        { fail "ppw-cc-built mpi_collect 30000 failed: $(head -3 quiet.err)"; return; }
    grep -q "repeats 30000, sum 120000" quiet.out || fail "quiet MPI site's output: $(cat quiet.out)"
    for rank in 0 1 2 3; do
        r=$(ls -d quiet/ppw-mpi_collect.inst-*/r$rank-* 2>/dev/null | head -1)
        [ -n "$r" ] || { fail "quiet: no directory for rank $rank"; continue; }
        "$blame" profile "$r" --format json >q$rank.json || { fail "ppw-blame profile $r"; continue; }
        check "rank $rank, quiet MPI site: no allreduce recorded by the wrapper (no file)" \
            '[.rows[] | select(.name == "GASP_MPI_ALLREDUCE" and (.file == null or .file == ""))]
             | length == 0' q$rank.json
        check "rank $rank, quiet MPI site: sampled, and about 30,000 calls estimated" \
            '[.throttled[] | select(.name == "GASP_MPI_ALLREDUCE")] | length == 1 and
             (.[0] | .sampled_calls >= 100 and .calls >= 27000 and .calls <= 33000)' q$rank.json
    done
}

# MPI-3 one-sided calls (programs/mpi_rma.c: every wrapped call a known
# number of times per rank), through the PMPI wrappers (a plain build linked
# with libppw) and through the pass (ppw-cc, whose events the wrappers must
# not repeat).  Open MPI 4.1's default one-sided component (osc/rdma)
# crashes in the plain program at MPI_Compare_and_swap on this machine
# (mca_btl_vader_emu_acswap, a segfault); the test asks for another one.
case_mpi_rma() {
    command -v mpirun >/dev/null && command -v mpicc >/dev/null || skip "mpirun/mpicc not installed"
    nm -D --defined-only "$lib/libppw.so" | grep -qw MPI_Put ||
        skip "libppw was built without mpi.h (no MPI wrappers)"
    export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_osc='^rdma'
    local mpirun=(mpirun --oversubscribe -np 4)
    [ "$(id -u)" -ne 0 ] || mpirun+=(--allow-run-as-root)
    OMPI_CC=$clang mpicc -g -O2 "$programs/mpi_rma.c" -o mpi_rma.bare ||
        { echo "cannot build mpi_rma" >&2; exit 1; }
    OMPI_CC=$clang mpicc -g -O2 "$programs/mpi_rma.c" -o mpi_rma \
        -L"$lib" -Wl,-rpath,"$lib" -lppw -Wl,--build-id ||
        { echo "cannot build mpi_rma with libppw" >&2; exit 1; }
    local inst=1
    plugin_loadable || inst=0
    if [ $inst = 1 ]; then
        # shellcheck disable=SC2046
        "$build/bin/ppw-cc" -O2 -g $(mpicc --showme:compile) "$programs/mpi_rma.c" \
            -o mpi_rma.inst -L"$lib" -Wl,-rpath,"$lib" -lppw $(mpicc --showme:link) 2>cc.err ||
            { echo "ppw-cc failed: $(cat cc.err)" >&2; exit 1; }
    fi
    "${mpirun[@]}" ./mpi_rma.bare >bare.out 2>bare.err ||
        { fail "mpi_rma without ppw failed: $(head -3 bare.err)"; return; }
    grep -q "rma: ranks 4, counter 4, mismatches 0, swap result 4, atomic read 4" bare.out ||
        fail "mpi_rma's own answer: $(cat bare.out)"
    mkdir wrapped inst
    (cd wrapped && PPW_MODE=profile,trace "${mpirun[@]}" ../mpi_rma >../wrapped.out 2>../wrapped.err) ||
        { fail "mpi_rma with libppw failed: $(head -3 wrapped.err)"; return; }
    cmp -s bare.out wrapped.out || fail "output with libppw differs: $(cat wrapped.out)"
    # Calls per rank, counted in mpi_rma.c.
    local calls='{"GASP_MPI_PUT": 2, "GASP_MPI_GET": 1, "GASP_MPI_ACCUMULATE": 1, "GASP_MPI_RPUT": 1,
        "GASP_MPI_RGET": 1, "GASP_MPI_RACCUMULATE": 1, "GASP_MPI_RGET_ACCUMULATE": 1,
        "GASP_MPI_GET_ACCUMULATE": 1, "GASP_MPI_FETCH_AND_OP": 1, "GASP_MPI_COMPARE_AND_SWAP": 1,
        "GASP_MPI_WIN_FENCE": 4, "GASP_MPI_WIN_LOCK": 1, "GASP_MPI_WIN_LOCK_ALL": 2,
        "GASP_MPI_WIN_UNLOCK": 1, "GASP_MPI_WIN_UNLOCK_ALL": 2, "GASP_MPI_WIN_FLUSH": 2,
        "GASP_MPI_WIN_FLUSH_ALL": 3, "GASP_MPI_WIN_POST": 1, "GASP_MPI_WIN_START": 1,
        "GASP_MPI_WIN_COMPLETE": 1, "GASP_MPI_WIN_WAIT": 1, "GASP_MPI_WIN_CREATE": 1,
        "GASP_MPI_WIN_ALLOCATE": 1, "GASP_MPI_WIN_FREE": 2}'
    local pairs="($calls) as \$calls | [.trace[] | select(.tag >= 1318 and .tag <= 1341)] as \$ev |
        (\$calls | to_entries | all(.key as \$k | .value as \$v |
            ([\$ev[] | select(.name == \$k and .event == \"start\")] | length) == \$v and
            ([\$ev[] | select(.name == \$k and .event == \"end\")] | length) == \$v))
        and (\$ev | length) == 2 * (\$calls | add)"
    local r rank left right
    for rank in 0 1 2 3; do
        left=$(((rank + 3) % 4)) right=$(((rank + 1) % 4))
        rank_trace "wrapped/ppw-mpi_rma-*" $rank w$rank.json || continue
        check "rank $rank: one START/END pair per one-sided call, and no other" "$pairs" w$rank.json
        # Operands: MPI_Put (count, type, rank, disp, win) to the right
        # neighbour, MPI_Get from the left, MPI_Rget 61 elements at 3.
        check "rank $rank: target ranks, counts and displacements" \
            "([.trace[] | select(.name == \"GASP_MPI_PUT\" and .event == \"start\") | .args[0,2,3]]
              == [64, $right, 0, 64, $right, 0])
             and ([.trace[] | select(.name == \"GASP_MPI_GET\" and .event == \"start\") | .args[0,2,3]]
                  == [64, $left, 0])
             and ([.trace[] | select(.name == \"GASP_MPI_RGET\" and .event == \"start\") | .args[0,2,3]]
                  == [61, $right, 3])
             and ([.trace[] | select(.name == \"GASP_MPI_WIN_LOCK\" and .event == \"start\") | .args[1]]
                  == [0])" w$rank.json
        # The window's handle, from MPI_Win_allocate's END (its operand is
        # the handle's address), is the one every later call on it names.
        check "rank $rank: one window handle from creation to free" \
            '([.trace[] | select(.name == "GASP_MPI_WIN_ALLOCATE" and .event == "end") | .args[4]]) as [$halo]
             | ([.trace[] | select(.name == "GASP_MPI_WIN_CREATE" and .event == "end") | .args[4]]) as [$ctr]
             | $halo != $ctr and $halo != 0 and $ctr != 0
               and ([.trace[] | select(.name == "GASP_MPI_PUT" or .name == "GASP_MPI_WIN_FENCE"
                                       or .name == "GASP_MPI_WIN_COMPLETE") | .args[-1 - (if .event == "end" then 1 else 0 end)]]
                    | unique == [$halo])
               and ([.trace[] | select(.name == "GASP_MPI_FETCH_AND_OP" and .event == "start") | .args[3]] == [$ctr])
               and ([.trace[] | select(.name == "GASP_MPI_WIN_FREE" and .event == "start") | .args[0]]
                    == [$ctr, $halo])' w$rank.json
        # Bytes each operation moved (8-byte elements): MPI_Put 2 x 64,
        # MPI_Get and MPI_Accumulate 64, MPI_Rget 61, MPI_Rput and
        # MPI_Raccumulate 1, MPI_Rget_accumulate 1 (its result; no origin
        # data with MPI_NO_OP), MPI_Get_accumulate, MPI_Fetch_and_op and
        # MPI_Compare_and_swap 1; windows: 64 elements and one long.
        "$blame" profile "$r" --format json >b$rank.json || fail "ppw-blame profile $r"
        check "rank $rank: bytes moved per operation, and window sizes" \
            '[.rows[] | {key: .name, value: .bytes}] | from_entries |
             .GASP_MPI_PUT == 1024 and .GASP_MPI_GET == 512 and .GASP_MPI_ACCUMULATE == 512 and
             .GASP_MPI_RGET == 488 and .GASP_MPI_RPUT == 8 and .GASP_MPI_RACCUMULATE == 8 and
             .GASP_MPI_RGET_ACCUMULATE == 8 and .GASP_MPI_GET_ACCUMULATE == 8 and
             .GASP_MPI_FETCH_AND_OP == 8 and .GASP_MPI_COMPARE_AND_SWAP == 8 and
             .GASP_MPI_WIN_ALLOCATE == 512 and .GASP_MPI_WIN_CREATE == 8 and
             .GASP_MPI_WIN_FENCE == 0' b$rank.json
    done
    [ $inst = 1 ] || { echo "ppw-cc part skipped: an ASan-built plugin cannot load into clang" >&2; return; }
    (cd inst && PPW_MODE=profile,trace "${mpirun[@]}" ../mpi_rma.inst >../inst.out 2>../inst.err) ||
        { fail "ppw-cc-built mpi_rma failed: $(head -3 inst.err)"; return; }
    cmp -s bare.out inst.out || fail "ppw-cc build's output differs: $(cat inst.out)"
    for rank in 0 1 2 3; do
        rank_trace "inst/ppw-mpi_rma.inst-*" $rank i$rank.json || continue
        check "rank $rank, ppw-cc build: one event pair per one-sided call (no duplicates)" \
            "$pairs" i$rank.json
        "$blame" profile "$r" --format json >ib$rank.json || fail "ppw-blame profile $r"
        check "rank $rank, ppw-cc build: a call site per call, at its line" \
            "[.rows[] | select(.name == \"GASP_MPI_COMPARE_AND_SWAP\" or .name == \"GASP_MPI_PUT\")
              | {name, kind, file: (.file | split(\"/\") | last), line}] | sort_by(.line)
             == [{name: \"GASP_MPI_PUT\", kind: \"callsite\", file: \"mpi_rma.c\", line: $(site_line mpi_rma put_fence)},
                 {name: \"GASP_MPI_PUT\", kind: \"callsite\", file: \"mpi_rma.c\", line: $(site_line mpi_rma put_pscw)},
                 {name: \"GASP_MPI_COMPARE_AND_SWAP\", kind: \"callsite\", file: \"mpi_rma.c\",
                  line: $(site_line mpi_rma cas)}]" ib$rank.json
    done
}

"case_$case_"
[ $failures -eq 0 ] || exit 1
[ -z "$skipped" ] || skip "$skipped"
echo "runtime.$case_: ok"
