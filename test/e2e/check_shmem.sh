#!/bin/bash
# OpenSHMEM end to end (ctest e2e.shmem_<case>): shmem_heat.c built with
# `OSHMEM_CC=ppw-cc oshcc -O2`, as a user would, run under Open MPI's
# oshrun on 4 PEs (--oversubscribe: 2 cores).  The PEs of one run form a
# job directory, as MPI ranks do.
#
# Open MPI 4.1's OpenSHMEM crashes in shmem_finalize on this machine, in
# every PE, whatever the transport (SIGSEGV in the UCX teardown, with or
# without ppw).  So both builds are expected to end the same way, and
# everything is checked from what the PEs wrote before the crash: ppw's
# profile and trace are files mapped or written as the run goes, and the
# readers take a run that did not end normally.  Where the library does
# not crash, the same checks hold and the finalize's region is closed.
#
#   events  every SHMEM call of the program, per PE, with its bytes: the
#           trace's START events per tag and the profile's calls and bytes
#           equal the counts derived from shmem_heat.c (throttling off);
#           the program's output equals a plain build's.
#   blame   small mode, sampled: every sample inside the exchange's
#           shmem_double_p blames field.u (the symmetric grid the put
#           writes, reached through the accessor row()), every sample in
#           the log's lock calls blames log_lock; analyze finds the small
#           puts at their line.
#
#   check_shmem.sh CASE BUILD_DIR
set -uo pipefail
case_name=$1 build=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ppw-e2e-shmem-$case_name.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
blame=$build/bin/ppw-blame
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }

command -v oshrun >/dev/null && command -v oshcc >/dev/null || skip "oshrun/oshcc not installed"
nm -D --undefined-only "$build/lib/ppw.so" | grep -q __asan_ && skip "the plugin is ASan-built"
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
oshrun=(oshrun --oversubscribe -np 4)
[ "$(id -u)" -ne 0 ] || oshrun+=(--allow-run-as-root)
clang=$(sed -n 's/^PPW_CLANG:FILEPATH=//p' "$build/CMakeCache.txt")

OSHMEM_CC=$build/bin/ppw-cc oshcc -g -O2 "$here/shmem_heat.c" -o shmem_heat 2>cc.err ||
    fail "cannot build shmem_heat with ppw-cc: $(cat cc.err)"
OSHMEM_CC=$clang oshcc -g -O2 "$here/shmem_heat.c" -o shmem_heat.plain 2>cc.err ||
    fail "cannot build shmem_heat without ppw: $(cat cc.err)"

# run DIR ARGS...: one oshrun of the ppw build, its job in DIR/job, its
# status in DIR/status; and of the plain build, whose output and status
# it must equal (the lines of the PEs in any order).
run() {
    local dir=$1
    shift
    mkdir -p "$dir"
    (cd "$dir" && PPW_OUTPUT=job timeout 120 "${oshrun[@]}" ../shmem_heat "$@" >out.txt 2>err.txt)
    echo $? >"$dir/status"
    timeout 120 "${oshrun[@]}" ./shmem_heat.plain "$@" >"$dir/plain.out" 2>"$dir/plain.err"
    local plain=$?
    [ "$plain" = 0 ] || [ "$plain" = 139 ] ||
        fail "plain shmem_heat $*: status $plain: $(head -5 "$dir/plain.err")"
    [ "$(cat "$dir/status")" = "$plain" ] ||
        fail "shmem_heat $*: status $(cat "$dir/status") with ppw, $plain without: $(head -5 "$dir/err.txt")"
    cmp -s <(sort "$dir/out.txt") <(sort "$dir/plain.out") ||
        fail "shmem_heat $*: output differs from the plain build's: $(cat "$dir/out.txt" "$dir/plain.out")"
    local ranks
    ranks=$(find "$dir/job" -mindepth 1 -maxdepth 1 -type d -name 'r*-*-*' | wc -l)
    [ "$ranks" = 4 ] || fail "$dir: $ranks PE directories in the job for 4 PEs: $(ls "$dir/job")"
}

# Every call of shmem_heat.c, per PE `me` of 4, for MODE, S steps and NX
# columns (read off the program):
#   shmem_init 1; shmem_malloc 2 (field_init); shmem_free 2; finalize 1
#   shmem_barrier_all: 1 after setup, 1 per exchange, 1 per step's end,
#     3 at the end: 2S + 4
#   exchange: nb = (me > 0) + (me < 3) neighbours; good: nb puts per
#     step of NX doubles; small: nb * NX shmem_double_p per step
#   per step: 1 sum_to_all (1 double), 1 atomic fetch_add (a long), and
#     log_append's set_lock, long_g, 2 p (the entry, the count), quiet,
#     clear_lock
#   pass_token: PEs 0-2 put the next PE's token (1 p, 1 quiet), PEs 1-3
#     wait for theirs (1 wait_until of a long)
#   the end: 1 broadcast64 of 1 element, 1 fcollect64 of 2, 1 get of NX
#     doubles
expected() {
    local mode=$1 S=$2 nx=$3 ny=$4 me=$5
    local nb=$(((me > 0) + (me < 3))) send=$((me < 3)) wait=$((me > 0))
    local puts=0 ps=$((2 * S + send))
    if [ "$mode" = small ]; then ps=$((ps + nb * nx * S)); else puts=$((nb * S)); fi
    jq -n --argjson S "$S" --argjson nx "$nx" --argjson ny "$ny" --argjson puts "$puts" \
        --argjson ps "$ps" --argjson send "$send" --argjson wait "$wait" '{
        GASP_SHMEM_INIT: [1, 0], GASP_SHMEM_FINALIZE: [1, 0],
        GASP_SHMEM_MALLOC: [2, (2 * $nx * ($ny + 2) * 8)], GASP_SHMEM_FREE: [2, 0],
        GASP_SHMEM_BARRIER: [(2 * $S + 4), 0],
        GASP_SHMEM_PUT: [$puts, ($puts * $nx * 8)], GASP_SHMEM_P: [$ps, ($ps * 8)],
        GASP_SHMEM_G: [$S, ($S * 8)], GASP_SHMEM_ATOMIC: [$S, ($S * 8)],
        GASP_SHMEM_REDUCE: [$S, ($S * 8)],
        GASP_SHMEM_SET_LOCK: [$S, 0], GASP_SHMEM_CLEAR_LOCK: [$S, 0],
        GASP_SHMEM_QUIET: [($S + $send), 0], GASP_SHMEM_WAIT_UNTIL: [$wait, 0],
        GASP_SHMEM_BROADCAST: [1, 8], GASP_SHMEM_COLLECT: [1, 16], GASP_SHMEM_GET: [1, ($nx * 8)]}
        | with_entries(select(.value[0] > 0))'
}

case_events() {
    local S=20 nx=256 ny=8 mode me dir
    export PPW_MODE=profile,trace PPW_THROTTLE_CALLS=0
    for mode in good small; do
        run $mode $mode $S $nx $ny
        local crashed
        crashed=$([ "$(cat $mode/status)" = 0 ] && echo false || echo true)
        for me in 0 1 2 3; do
            dir=$(echo $mode/job/r$me-*)
            [ -d "$dir" ] || fail "$mode: no directory for PE $me"
            expected $mode $S $nx $ny $me >want.json
            "$blame" dump "$dir" --what trace --format json >trace.json 2>dump.err ||
                fail "$mode PE $me: dump: $(cat dump.err)"
            "$blame" profile "$dir" --format json >profile.json 2>profile.err ||
                fail "$mode PE $me: profile: $(cat profile.err)"
            # Calls from the trace's STARTs; bytes from the profile, whose
            # rows count the calls that ended (all but the finalize's when
            # it crashed).
            jq -n --slurpfile t trace.json --slurpfile p profile.json '
                ([$t[0].trace[] | select(.event == "start" and (.tag_name | startswith("GASP_SHMEM_")))
                  | .tag_name] | group_by(.) | map({key: .[0], value: length}) | from_entries) as $calls
                | ([$p[0].rows[] | select(.name | startswith("GASP_SHMEM_"))] | group_by(.name)
                  | map({key: .[0].name, value: (map(.bytes) | add)}) | from_entries) as $bytes
                | $calls | with_entries(.value = [.value, ($bytes[.key] // 0)])' >got.json ||
                fail "$mode PE $me: reading the events"
            jq -e -n --slurpfile w want.json --slurpfile g got.json '$w[0] == $g[0]' >/dev/null ||
                fail "$mode PE $me: [calls, bytes] per tag: want $(jq -c -S . want.json), got $(jq -c -S . got.json)"
            # The finalize: open in the profile when the PE crashed in it.
            jq -e --argjson crashed "$crashed" '.finished != $crashed and
                ([.rows[] | select(.name == "GASP_SHMEM_FINALIZE") | .calls] | add // 0)
                    == (if $crashed then 0 else 1 end)' profile.json >/dev/null ||
                fail "$mode PE $me: the finalize (crashed: $crashed): $(jq -c '{finished, f: [.rows[] | select(.name == "GASP_SHMEM_FINALIZE")]}' profile.json)"
        done
        echo "e2e.shmem_events: $mode: 4 PEs, status $(cat $mode/status) (as plain), PE 3: $(jq -c -S . got.json)"
    done
}

SAMPLING_LIB=$src/test/lib SAMPLED_PREFIX="e2e.shmem_$case_name: "
. "$SAMPLING_LIB/sampling.sh"

# under_in FILE FUNCTION PATTERN: the samples under FUNCTION's calls to
# PATTERN, FUNCTION being called from main, in a code tree.
under_in() {
    jq --arg fn "$2" --arg f "$3" '[.tree[] | select(.function == "main") | .children[]
        | select(.function == $fn) | .children[] | select(.function // "" | test($f)) | .samples]
        | add // 0' "$1"
}
samples_of() {
    jq --arg v "$2" '[.variables[] | select(.name == $v) | .samples] | first // 0' "$1"
}

# Exact, not sampled: a sample inside shmem_double_p called from exchange
# is charged at the call, which writes the ghost row of f->u (row() returns
# a pointer into its argument f->u): it blames field.u.  A sample inside
# shmem_set_lock or shmem_clear_lock blames log_lock.  So the code view's
# samples under those calls are floors of the two variables' totals,
# whatever their number (other lines blame them too).
case_blame() {
    local steps=400 puts locks
    while :; do
        rm -rf s
        run s small $steps 2048 64
        "$blame" code s/job --format json --top 0 >code.json 2>code.err || fail "code: $(cat code.err)"
        puts=$(under_in code.json exchange '^\[shmem_double_p\]$')
        locks=$(under_in code.json log_append '^\[shmem_(set|clear)_lock\]$')
        ((puts > 0 && locks > 0)) && break
        ((steps < 6400)) || skip "$puts samples in the puts, $locks in the locks after $steps steps"
        echo "note: $puts samples in the puts, $locks in the locks: again with 4 times the steps"
        steps=$((steps * 4))
    done
    "$blame" report s/job --format json --top 0 >report.json 2>report.err || fail "report: $(cat report.err)"
    echo "{\"puts\": $puts, \"locks\": $locks, \"u\": $(samples_of report.json field.u)," \
        "\"lock\": $(samples_of report.json log_lock), \"n\": $(jq .total_samples report.json)}" >n.json
    sampled "field.u, the puts' symmetric memory" n.json '{n, observed: .u, op: ">=", threshold: .puts,
        from: "exact: the samples under exchange'"'"'s shmem_double_p"}'
    sampled "log_lock" n.json '{n, observed: .lock, op: ">=", threshold: .locks,
        from: "exact: the samples under log_append'"'"'s lock calls"}'
    # The small puts: nb * 2048 per step of 8 bytes each, against the
    # exchange of one 16 KB put per neighbour that good mode does: analyze
    # names them at one of the two lines of exchange's shmem_double_p.
    local lines
    lines=$(grep -n 'shmem_double_p(&row(f, f->u' "$here/shmem_heat.c" | cut -d: -f1 | paste -sd, -)
    "$blame" analyze s/job --format json --min-loss 0 >analyze.json 2>analyze.err ||
        fail "analyze: $(cat analyze.err)"
    jq -e --argjson lines "[$lines]" '[.findings[] | select(.pattern == "small-one-sided"
        and (.line as $l | $lines | index($l)))] | length > 0' analyze.json >/dev/null ||
        fail "analyze: no small-one-sided at lines $lines: $(jq -c '[.findings[] | {pattern, function, line, variable}]' analyze.json)"
    echo "e2e.shmem_blame: $steps steps; field.u $(samples_of report.json field.u) (puts $puts), log_lock $(samples_of report.json log_lock) (locks $locks); analyze: $(jq -c '[.findings[] | select(.pattern == "small-one-sided") | {line, variable}] | .[0:2]' analyze.json)"
}

case "$case_name" in
events) case_events ;;
blame) case_blame ;;
*) fail "unknown case $case_name" ;;
esac
