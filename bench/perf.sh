# shellcheck shell=bash disable=SC2034  # perf_reason is for the sourcing script
# Sourced (bash) by the benchmarks that set ppw beside `perf record -g` in
# the same invocation: bench/runtime/run (CPU per sample, the short parallel
# regions and LULESH).
#
# The perf command is the closest perf has to ppw's default sampling: the
# software task clock (this VM has no hardware counters, and ppw samples
# the same event), a fixed period in ns of CPU time (-c, not -F: the very
# period ppw and the do-nothing sampler use), frame-pointer call chains
# (-g), every thread (perf record's events are inherited by the threads the
# program makes).  The program runs under /usr/bin/time inside perf, so
# that its own CPU time (which includes the kernel's sampling and
# unwinding) can be told from perf's process (which reads the ring buffer
# and writes the file, and at exit reads it again for build ids).

# perf_check DIR: sets perf_reason to why perf cannot be used here, as one
# word for a result line's reason= field, or to "" when it can.  Never fails.
perf_check() {
    local dir=$1 paranoid
    perf_reason=""
    if ! command -v perf >/dev/null; then
        perf_reason=perf-not-installed
        return 0
    fi
    paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null) || paranoid=unknown
    # above 2 (Debian's 3) an unprivileged user may not open any event
    if [ "$(id -u)" -ne 0 ] && ! [[ $paranoid =~ ^-?[0-2]$ ]]; then
        perf_reason=perf_event_paranoid=$paranoid-and-not-root
        return 0
    fi
    if [ ! -x /usr/bin/time ]; then
        perf_reason=no-/usr/bin/time
        return 0
    fi
    # a trial that must record samples: some containers open events that never fire
    # shellcheck disable=SC2016 # the loop is sh's
    if ! perf_rec "$dir/perf-trial.data" 1000000 \
        sh -c 'i=0; while [ $i -lt 100000 ]; do i=$((i + 1)); done' >/dev/null 2>&1; then
        perf_reason=trial-perf-record-failed
    elif [ "$(perf_samples "$dir/perf-trial.data")" = - ]; then
        perf_reason=trial-perf-record-took-no-samples
    fi
    rm -f "$dir"/perf-trial.data*
}

# perf_rec DATA PERIOD_NS CMD...: CMD under perf record -g, sampled every
# PERIOD_NS of each thread's CPU time, into DATA; CMD's own user and system
# seconds go to DATA.time (one line, "USER SYS").
perf_rec() {
    local data=$1 period=$2
    shift 2
    perf record -q -e task-clock -c "$period" -g -o "$data" -- \
        /usr/bin/time -f '%U %S' -o "$data.time" "$@"
}

# perf_samples DATA: the samples in DATA (perf report --stats counts the
# SAMPLE records), or - when there are none or DATA cannot be read.
perf_samples() {
    local n
    n=$(perf report -i "$1" --stats 2>/dev/null | awk '/SAMPLE events:/ { print $3; exit }')
    echo "${n:--}"
}
