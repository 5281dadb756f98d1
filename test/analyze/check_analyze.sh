#!/bin/bash
# ppw-blame analyze on programs with one problem injected (ctest
# analyze.<case>): each is built with ppw-cc -O2, run sampled, and analyze
# (against a baseline that ppw-blame calibrate measures here first) must
# report exactly that pattern first, at the right location and on the right
# data.  The control (balanced.c) must give no finding at all.
#
#   barrier        barrier-wait at barrier.c's pthread_barrier_wait, on phase_barrier;
#                  the trace names the 3x worker as the last to arrive
#   lock           lock-contention at lock.c's pthread_mutex_lock, on queue_lock; the
#                  trace names the thread that released it, busy in worker
#   cond           condition-wait at cond.c's pthread_cond_wait, on ready_cond; the
#                  trace names thread 1 (the producer) as the one that signalled it
#   imbalance      load-imbalance in worker, on grid (threads, region and variable)
#   late_sender    late-sender at late_sender.c's MPI_Recv; the trace names rank 0
#   late_receiver  late-receiver at late_receiver.c's MPI_Ssend; the trace names rank 1
#   small_transfers  small-transfers at small_transfers.c's MPI_Send or MPI_Recv loop, first
#   collective     collective-wait at collective.c's MPI_Allreduce; the trace names rank 0
#   comm_bound     communication-bound (Coven) at comm_bound.c's MPI_Sendrecv, on halo_out:
#                  in step, at full bandwidth, but 16 MB a step (the bytes are no wait)
#   scaling        poor-scalability over a 2-thread and a 1-thread run of scaling.c
#   serial         low-cpu-utilisation (Coven) for serial.c
#   busy           busy-difference (Coven) in busy.c's loader thread, busy half its life
#   balanced       no finding
#   errors         bad options and a bad baseline file: one error line, status 2 or 1
#   shmem_get      get-latency at shmem_heat.c's shmem_double_get_nbi, each completed
#                  at once by shmem_quiet, on weight (2 PEs, traced)
#
#   check_analyze.sh CASE BUILD_DIR
set -uo pipefail
case_name=$1 build=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ppw-analyze-$case_name.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
blame=$build/bin/ppw-blame
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }

# An ASan-built plugin cannot load into clang, which is not ASan-built.
nm -D --undefined-only "$build/lib/ppw.so" | grep -q __asan_ && skip "the plugin is ASan-built"
export OMP_WAIT_POLICY=passive OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1

mpi=0
case $case_name in late_* | small_* | collective | comm_bound | rma_* | shmem_*) mpi=1 ;; esac
if [ $mpi = 1 ]; then
    command -v mpirun >/dev/null && command -v mpicc >/dev/null || skip "mpirun/mpicc not installed"
fi
case $case_name in shmem_*)
    command -v oshrun >/dev/null && command -v oshcc >/dev/null || skip "oshrun/oshcc not installed" ;;
esac
calibrate_args=(-o "$tmp/baseline")
[ $mpi = 1 ] || calibrate_args+=(--no-mpi)
[ "$case_name" = errors ] || "$blame" calibrate "${calibrate_args[@]}" >calibrate.txt 2>&1 ||
    fail "calibrate: $(cat calibrate.txt)"

# line PATTERN FILE: the line number of PATTERN's first match in FILE.
line() { grep -n -m1 -F "$1" "$here/$2" | cut -d: -f1; }

# analyze_json OUT ARGS...: analyze --format json into OUT, and (to explain
# a failure) at --min-loss 0 into OUT.all.
analyze_json() {
    local out=$1
    shift
    "$blame" analyze "$@" --baseline "$tmp/baseline" --format json >"$out" 2>err.txt ||
        fail "analyze $*: $(cat err.txt)"
    "$blame" analyze "$@" --baseline "$tmp/baseline" --min-loss 0 --format json >"$out.all" \
        2>/dev/null
}

# expect_first FILE PATTERN SOURCE LINE [VARIABLE]: the first finding.
expect_first() {
    local file=$1 pattern=$2 source=$3 ln=$4 var=${5:-}
    local ok
    ok=$(jq --arg p "$pattern" --arg s "$source" --argjson l "$ln" --arg v "$var" '
        (.findings | length) > 0 and (.findings[0] | .pattern == $p and
            ($l == 0 or ((.file // "" | endswith($s)) and .line == $l)) and
            ($v == "" or .variable == $v) and .lost_s > 0 and (.hint | length) > 0 and
            (.evidence | length) > 0)' "$file")
    [ "$ok" = true ] ||
        fail "expected $pattern first at $source:$ln${var:+ on $var}; got $(jq -c '[.findings[0:3][] | {pattern, region, file, line, variable, lost_s}]' "$file"); at --min-loss 0: $(jq -c '{thread_s, baseline, findings: [.findings[0:4][] | {pattern, line, lost_s, lost_pct, evidence}]}' "$file.all"); calibrated: $(tr '\n' ' ' <"$tmp/baseline")"
}

# build NAME [flags]: test/analyze/NAME.c through ppw-cc (mpicc for MPI).
build() {
    local name=$1
    shift
    if [ $mpi = 1 ]; then
        OMPI_CC=$build/bin/ppw-cc mpicc -O2 "$here/$name.c" -o "$name" "$@" 2>cc.err
    else
        "$build/bin/ppw-cc" -O2 "$here/$name.c" -o "$name" "$@" 2>cc.err
    fi || fail "cannot build $name: $(cat cc.err)"
}

threads_case() { # threads_case NAME PATTERN 'CALL TEXT' VARIABLE
    build "$1" -lpthread
    PPW_OUTPUT=$tmp/run ./"$1" >out.txt || fail "$1 failed"
    analyze_json a.json run --binary "./$1"
    local ln=0
    [ -z "$3" ] || ln=$(line "$3" "$1.c")
    expect_first a.json "$2" "$1.c" "$ln" "$4"
    "$blame" analyze run --binary "./$1" --baseline "$tmp/baseline" >a.txt || fail "text output"
    grep -q "^1\. .*\[$2\]" a.txt || fail "text: $(head -12 a.txt)"
    echo "analyze.$1: $(jq -r '.findings[0] | "\(.pattern) at \(.file // "-"):\(.line) on \(.variable // "-"): \(.lost_s * 1000 | floor) ms (\(.lost_pct | floor)%)"' a.json)"
}

# trace_cause NAME REGEX: run NAME again with a trace; the first finding's
# cause (trace cause analysis) must match REGEX, in which HEAVY stands for
# the index of the thread with the most CPU time.
trace_cause() {
    PPW_MODE=profile,trace PPW_OUTPUT=$tmp/traced ./"$1" >out.txt || fail "$1 (traced) failed"
    analyze_json t.json traced --binary "./$1"
    local heavy pattern
    heavy=$("$blame" dump traced --format json --what run |
        jq '[.threads[] | select(.cpu_ns != null)] | max_by(.cpu_ns) | .index')
    pattern=${2//HEAVY/$heavy}
    jq -e --arg c "$pattern" '.findings[0].cause // "" | test($c)' t.json >/dev/null ||
        fail "$1: cause should match '$pattern': $(jq -c '.findings[0] | {pattern, cause}' t.json)"
    echo "analyze.$1 (traced): $(jq -r '.findings[0].cause' t.json)"
}

mpi_case() { # mpi_case NAME PATTERN 'CALL TEXT' CAUSE_RANK
    build "$1"
    local mpirun=(mpirun --oversubscribe -np 2 -x PPW_MODE)
    [ "$(id -u)" -ne 0 ] || mpirun+=(--allow-run-as-root)
    mkdir m
    (cd m && PPW_MODE=profile,trace timeout 120 "${mpirun[@]}" "$tmp/$1" >out.txt 2>err.txt) ||
        fail "mpirun $1: $(head -5 m/err.txt)"
    local job=(m/ppw-*)
    analyze_json a.json "${job[0]}"
    expect_first a.json "$2" "$1.c" "$(line "$3" "$1.c")"
    if [ -n "$4" ]; then
        jq -e --arg r "rank $4 arrived" '.findings[0].cause // "" | contains($r)' a.json >/dev/null ||
            fail "cause: expected rank $4 named: $(jq -c '.findings[0].cause' a.json)"
        # While the others wait, rank $4 computes in main: compute()
        # inlined into it at -O2, or main's own sweep.  A job's ranks are
        # loaded with their samples merged, so this part of the cause reads
        # rank $4 again for its samples' times.
        jq -e --arg f "busy in main ($1.c:" '.findings[0].cause // "" | contains($f)' a.json >/dev/null ||
            fail "cause: expected rank $4 busy in main: $(jq -c '.findings[0].cause' a.json)"
    fi
    echo "analyze.$1: $(jq -r '.findings[0] | "\(.pattern) at \(.region) \(.file):\(.line): \(.lost_s * 1000 | floor) ms; cause: \(.cause // "-")"' a.json)"
}

# rma_case MODE PATTERN MARK VARIABLE [first|found]: ../e2e/mpi_rma_heat.c
# in MODE on 2 ranks, traced; PATTERN at the line marked "site: MARK" (for
# small, either put of the loop), on VARIABLE: the first finding, or
# (found) one of them.  Waiting ranks do not yield here: with 2 ranks on 2
# CPUs nobody needs the CPU, and a yield makes every fence and flush a
# sleep.  Open MPI's osc/ucx: osc/rdma crashes at MPI_Compare_and_swap here
# (runtime.mpi_rma), and the program runs as on any other.
rma_case() {
    local mode=$1 pattern=$2 mark=$3 var=$4 want=${5:-first}
    export OMPI_MCA_osc=ucx OMPI_MCA_mpi_yield_when_idle=0
    OMPI_CC=$build/bin/ppw-cc mpicc -O2 "$here/../e2e/mpi_rma_heat.c" -o mpi_rma_heat 2>cc.err ||
        fail "cannot build mpi_rma_heat: $(cat cc.err)"
    local mpirun=(mpirun --oversubscribe -np 2 -x PPW_MODE -x OMPI_MCA_osc -x OMPI_MCA_mpi_yield_when_idle)
    [ "$(id -u)" -ne 0 ] || mpirun+=(--allow-run-as-root)
    local lines
    if [ "$mark" = small ]; then
        lines=$(grep -n 'MPI_Put(&\(first\|last\)\[x\]' "$here/../e2e/mpi_rma_heat.c" | cut -d: -f1 | paste -sd,)
    else
        lines=$(grep -n "/\* site: $mark[ *]" "$here/../e2e/mpi_rma_heat.c" | cut -d: -f1)
    fi
    [ -n "$lines" ] || fail "no line marked $mark"
    local which='.findings[0:1]' attempt found
    [ "$want" = first ] || which='.findings'
    # Twice at most: the order of findings is timing on a shared 2-CPU
    # machine, and once in CI (ASan build, under -j2 load) rma_get's came
    # out otherwise; a first attempt that misses is printed.
    for attempt in 1 2; do
        rm -rf m && mkdir m
        (cd m && PPW_MODE=profile,trace timeout 120 "${mpirun[@]}" "$tmp/mpi_rma_heat" "$mode" 1600 2048 128 \
            >out.txt 2>err.txt) || fail "mpirun mpi_rma_heat $mode: $(head -5 m/err.txt)"
        local job=(m/ppw-*)
        analyze_json a.json "${job[0]}"
        found=$(jq --arg p "$pattern" --argjson l "[$lines]" --arg v "$var" "[$which[] |
            select(.pattern == \$p and (.file // \"\" | endswith(\"mpi_rma_heat.c\")) and
                   (.line as \$x | \$l | index(\$x) != null) and .variable == \$v and .lost_s > 0)]
            | length > 0" a.json)
        [ "$found" = true ] && break
        echo "note: attempt $attempt: expected $pattern $want at mpi_rma_heat.c:$lines on $var; got $(jq -c '[.findings[0:4][] | {pattern, line, variable, lost_s, lost_pct}]' a.json)"
    done
    [ "$found" = true ] ||
        fail "expected $pattern $want at mpi_rma_heat.c:$lines on $var in 2 runs; got $(jq -c '[.findings[0:4][] | {pattern, line, variable, lost_s, lost_pct}]' a.json)"
    echo "analyze.rma_$mode: $(jq -r --arg p "$pattern" '[.findings[] | select(.pattern == $p)][0] | "\(.pattern) at \(.region) \(.file):\(.line) on \(.variable): \(.lost_s * 1000 | floor) ms (\(.lost_pct | floor)%)"' a.json); first: $(jq -r '.findings[0].pattern' a.json)"
}

# shmem_case MODE PATTERN MARK VARIABLE [first|found]: ../e2e/shmem_heat.c
# in MODE on 2 PEs, traced; PATTERN at the line marked `site: MARK`, on
# VARIABLE: the first finding, or (found) one of them.
# Open MPI's OpenSHMEM crashes in shmem_finalize here (check_shmem.sh):
# the PEs' status is the crash's, their profiles and traces are whole up
# to it.
shmem_case() {
    local mode=$1 pattern=$2 mark=$3 var=$4 want=${5:-first}
    OSHMEM_CC=$build/bin/ppw-cc oshcc -O2 "$here/../e2e/shmem_heat.c" -o shmem_heat 2>cc.err ||
        fail "cannot build shmem_heat: $(cat cc.err)"
    local oshrun=(oshrun --oversubscribe -np 2)
    [ "$(id -u)" -ne 0 ] || oshrun+=(--allow-run-as-root)
    mkdir m
    (cd m && PPW_MODE=profile,trace timeout 120 "${oshrun[@]}" "$tmp/shmem_heat" "$mode" 1600 2048 128 \
        >out.txt 2>err.txt)
    local rc=$?
    [ $rc = 0 ] || [ $rc = 139 ] || fail "oshrun shmem_heat $mode: status $rc: $(head -5 m/err.txt)"
    local job=(m/ppw-*) lines
    analyze_json a.json "${job[0]}"
    lines=$(grep -n "/\* site: $mark[ *]" "$here/../e2e/shmem_heat.c" | cut -d: -f1)
    [ -n "$lines" ] || fail "no line marked $mark"
    local which='.findings[0:1]'
    [ "$want" = first ] || which='.findings'
    jq -e --arg p "$pattern" --argjson l "[$lines]" --arg v "$var" "[$which[] |
        select(.pattern == \$p and (.file // \"\" | endswith(\"shmem_heat.c\")) and
               (.line as \$x | \$l | index(\$x) != null) and .variable == \$v and .lost_s > 0)]
        | length > 0" a.json >/dev/null ||
        fail "expected $pattern $want at shmem_heat.c:$lines on $var; got $(jq -c '[.findings[0:4][] | {pattern, line, variable, lost_s, lost_pct}]' a.json)"
    echo "analyze.shmem_$mode: $(jq -r '.findings[0] | "\(.pattern) at \(.region) \(.file):\(.line) on \(.variable): \(.lost_s * 1000 | floor) ms (\(.lost_pct | floor)%)"' a.json)"
}

case $case_name in
barrier)
    threads_case barrier barrier-wait 'pthread_barrier_wait(&phase_barrier)' phase_barrier
    # threads get their index when they start, so the 3x worker (HEAVY) is
    # read off the traced run: the thread with the most CPU time
    trace_cause barrier '^trace: thread HEAVY ended .* thread HEAVY arrived .*busy in (sweep|worker)'
    ;;
lock)
    threads_case lock lock-contention 'pthread_mutex_lock(&queue_lock)' queue_lock
    trace_cause lock '^trace: thread [1-4] ended .* thread [1-4] released it .*busy in worker'
    ;;
cond)
    threads_case cond condition-wait 'pthread_cond_wait(&ready_cond' ready_cond
    trace_cause cond '^trace: thread 1 ended .*[(]thread 0, .* thread 1 signalled it .*busy in producer'
    ;;
imbalance)
    threads_case imbalance load-imbalance '' grid
    jq -e '.findings[0].region == "worker" and (.findings[0].evidence | test("max/avg"))' a.json \
        >/dev/null || fail "imbalance: region or evidence: $(jq -c '.findings[0]' a.json)"
    ;;
serial) threads_case serial low-cpu-utilisation '' '' ;;
busy)
    threads_case busy busy-difference '' ''
    jq -e --argjson l "$(line 'static void *loader' busy.c)" '.findings[0] |
        (.region | startswith("loader (thread ")) and .line == $l' a.json >/dev/null ||
        fail "busy: the idle thread's start routine: $(jq -c '.findings[0]' a.json)"
    jq -e '[.findings[] | select(.pattern == "load-imbalance" or
            .pattern == "low-cpu-utilisation")] == []' a.json >/dev/null ||
        fail "busy: equal work on a 3/4-used machine: $(jq -c '[.findings[] | {pattern, lost_s}]' a.json)"
    ;;
balanced)
    # A control can only fail by noise or by a false positive.  A 2-thread
    # run on a 2-vCPU VM is slowed unevenly now and then by the hypervisor
    # (steal time, which no per-thread counter shows): 5.2% of barrier wait
    # was seen once in a fresh-clone ASan run.  A rule that finds a problem
    # in a balanced program finds it every time, so the control gets up to
    # three runs and fails only when every one has a finding.
    build balanced -lpthread
    for attempt in 1 2 3; do
        rm -rf "$tmp/run"
        PPW_OUTPUT=$tmp/run ./balanced >out.txt || fail "balanced failed"
        analyze_json a.json run --binary ./balanced
        # What the noise left, to judge the margin: the largest finding at
        # --min-loss 0, against the 5% that makes a finding.
        echo "analyze.balanced: run $attempt: largest under --min-loss: $(jq -c '[.findings[0] // {} |
            .pattern, .lost_pct, .evidence]' a.json.all)"
        jq -e '.findings == []' a.json >/dev/null && break
        [ $attempt = 3 ] &&
            fail "the control has findings in 3 runs out of 3; the last: $(jq -c '[.findings[] | {pattern, region, lost_s, lost_pct, evidence}]' a.json)"
    done
    echo "analyze.balanced: no finding ($(jq '.dropped' a.json) under --min-loss)"
    ;;
scaling)
    build scaling -fopenmp
    OMP_NUM_THREADS=2 PPW_OUTPUT=$tmp/p2 ./scaling >out.txt || fail "2 threads"
    OMP_NUM_THREADS=1 PPW_OUTPUT=$tmp/p1 ./scaling >>out.txt || fail "1 thread"
    analyze_json a.json p2 p1 --binary ./scaling
    expect_first a.json poor-scalability "" 0
    jq -e '.scaling | test("p=2: .*p=1: ")' a.json >/dev/null || fail "scaling: $(jq .scaling a.json)"
    echo "analyze.scaling: $(jq -r '.findings[0].evidence' a.json)"
    ;;
# One-sided (issue: PPW's one-sided patterns).  Each mode of mpi_rma_heat.c
# injects one problem.  small and get are found first.  In imbalance and
# lock, the wait in the fence and in the window lock comes with the cause
# the load-imbalance rule names, often first (rank 0's extra sweeps; rank
# 0 busier while the lock serves it first): both are true, and either may
# lead on this 2-CPU machine, so the test asks that the one-sided wait is
# found, at its line, on the window's memory.
rma_small) rma_case small small-one-sided small 'h->rows' ;;
rma_get) rma_case get get-latency get weight ;;
rma_fence) rma_case imbalance one-sided-sync-wait fence 'h->rows' ;;
rma_lock) rma_case lock window-lock-contention lock 'm->progress' ;;
# found, not first: a get here takes about what ppw's probes around it take
# (1 us), and with an ASan-built libppw (scripts/test's second pass) the
# probes between a get and its quiet are longer than both, so that part of
# the gets seems hidden and communication-bound led by 10% once.
shmem_get) shmem_case get get-latency get weight found ;;
late_sender) mpi_case late_sender late-sender 'MPI_Recv(' 0 ;;
late_receiver) mpi_case late_receiver late-receiver 'MPI_Ssend(' 1 ;;
collective) mpi_case collective collective-wait 'MPI_Allreduce(' 0 ;;
comm_bound)
    mpi_case comm_bound communication-bound 'MPI_Sendrecv(' ''
    jq -e '.findings[0].variable == "halo_out" and (.findings[0].evidence | test("MB moved"))
           and ([.findings[] | select(.pattern == "late-receiver" or .pattern == "late-sender")]
                == [])' a.json >/dev/null ||
        fail "comm_bound: variable, volume, or the transfer taken for a wait: $(jq -c '[.findings[] | {pattern, variable, evidence}]' a.json)"
    ;;
small_transfers)
    build small_transfers
    mpirun=(mpirun --oversubscribe -np 2)
    [ "$(id -u)" -ne 0 ] || mpirun+=(--allow-run-as-root)
    mkdir m
    (cd m && timeout 120 "${mpirun[@]}" "$tmp/small_transfers" >out.txt 2>err.txt) ||
        fail "mpirun: $(head -5 m/err.txt)"
    job=(m/ppw-*)
    analyze_json a.json "${job[0]}"
    send=$(line 'MPI_Send(' small_transfers.c) recv=$(line 'MPI_Recv(' small_transfers.c)
    # Found first, at the send or the receive loop, and nowhere else.  On an
    # idle machine both sides lose about 4 us a message; on a loaded one
    # each side's wait beyond the program's own cost is the machine's, up
    # to what it withheld from the other rank (analyze_noise.c), and one
    # side can come out at the bare latency, below --min-loss.
    jq -e --argjson s "$send" --argjson r "$recv" '(.findings | length) > 0 and
        .findings[0].pattern == "small-transfers" and
        all(.findings[] | select(.pattern == "small-transfers"); .line == $s or .line == $r)' \
        a.json >/dev/null || fail "small transfers: $(jq -c '[.findings[0:3][] | {pattern, line, lost_s}]' a.json)"
    echo "analyze.small_transfers: $(jq -r '.findings[0].evidence' a.json)"
    ;;
errors)
    "$blame" analyze --deviation abc >/dev/null 2>err.txt
    [ $? = 2 ] && [ "$(wc -l <err.txt)" = 1 ] || fail "--deviation abc: $(cat err.txt)"
    "$blame" analyze --min-loss 101 >/dev/null 2>err.txt
    [ $? = 2 ] || fail "--min-loss 101 should be a usage error"
    "$blame" analyze --bogus >/dev/null 2>err.txt
    [ $? = 2 ] || fail "--bogus should be a usage error"
    printf 'not a baseline\n' >bad
    build balanced -lpthread
    PPW_OUTPUT=$tmp/run ./balanced 10 >out.txt || fail "balanced failed"
    "$blame" analyze run --binary ./balanced --baseline bad >/dev/null 2>err.txt
    [ $? = 1 ] && [ "$(wc -l <err.txt)" = 1 ] || fail "a bad baseline file: $(cat err.txt)"
    "$blame" analyze run --binary ./balanced --baseline /nonexistent/b >/dev/null 2>err.txt
    [ $? = 1 ] || fail "a missing --baseline file should fail"
    PPW_BASELINE=/nonexistent/b "$blame" analyze run --binary ./balanced >a.txt 2>err.txt ||
        fail "no default baseline must fall back: $(cat err.txt)"
    grep -q '^baseline: built-in defaults' a.txt || fail "fallback: $(head -3 a.txt)"
    echo "analyze.errors: ok"
    ;;
*) echo "unknown case $case_name" >&2; exit 2 ;;
esac
