#!/bin/sh
# ppw-blame report, code and lines on a real run directory: a program built
# with ppw-cc runs under libppw, and its samples are glued, symbolized and
# attributed.  Also the default command and directory, a binary of another
# build (refused with both build-ids, unless --force), a build without -g,
# a truncated profile and a missing run directory.
#
# usage: check_run.sh BUILD_DIR SOURCE_DIR WORKDIR [JQ]
# Exits 77 (ctest SKIP) when jq is missing or the run, repeated with four
# times the work, still took too few samples.
set -u
BUILD=$1 SRC=$2 W=$3 JQ=${4:-jq}
PPW_BLAME=$BUILD/bin/ppw-blame PPW_CC=$BUILD/bin/ppw-cc
PROG=$SRC/test/blame/run_prog.c
. "$SRC/test/unit/cli_helpers.sh"

command -v "$JQ" >/dev/null 2>&1 || { echo "SKIP: jq not found"; exit 77; }
rm -rf "$W" && mkdir -p "$W" && cd "$W" || exit 1

"$PPW_CC" -O0 "$PROG" -o prog || exit 1
"$PPW_CC" -O0 -DOTHER "$PROG" -o other || exit 1
"$PPW_CC" -O0 -g0 "$PROG" -o nodebug 2>/dev/null || exit 1
PPW_OUTPUT=nodebug-run ./nodebug >/dev/null || fail "the -g0 program failed"

# ---- report on the run ----
# Sampled numbers (docs/testing.md, the tolerance rule).  run_prog spends
# its CPU time in relax()'s loop, lines 14 and 15: 300 x 200,000 updates
# (0.3 s here).  Everything else is a fixed cost: start-up, one calloc, one
# printf, one free, exit (./prog 0 takes 0.4 to 0.7 ms of CPU here).  So at
# least P_HOT = 95% of the samples are in relax, under main, allowing that
# fixed cost 15 ms (20 times what it is here, for a slower start-up).  The
# floor share_floor(95, n) (90% at 300 samples) still fails when stacks stop
# short of main or relax is not found (0%) or half of them are (50%).  The
# hottest-line check below needs relax above 2/3: samples_needed(95, 67)
# samples are enough for both.
P_HOT=95 P_BROKEN=67
need=$("$JQ" -n -L "$SRC/test/lib" "include \"sampling\"; samples_needed($P_HOT; $P_BROKEN)")
reps=300
while :; do
    rm -rf ppw-prog-1
    PPW_OUTPUT=ppw-prog-1 ./prog $reps >/dev/null || fail "the program failed"
    expect_status 0 "$PPW_BLAME" report ppw-prog-1 --format json --top 0
    n=$("$JQ" '.total_samples // 0' out.txt 2>/dev/null || echo 0)
    [ "$n" -ge "$need" ] && break
    if [ $reps -gt 300 ]; then
        echo "SKIP: $n samples with $reps repetitions, $need needed: $(head -c 200 out.txt)"
        exit 77
    fi
    echo "note: $n samples with $reps repetitions, $need needed: again with $((reps * 4))"
    reps=$((reps * 4))
done
cp out.txt report.json
check report '(.metric.unit == "s") and (.metric.total > 0)
    and (.variables[0].samples <= .total_samples)
    and (.variables[] | select(.function == "main" and .name == "g")
         | .context == "main" and (.decl | endswith("run_prog.c:21")))
    and (.variables[] | select(.function == "main" and .name == "g")
         | .aliases == [{"name": "g", "function": "relax"}])
    and ([.variables[] | select(.function == "relax" and (.name | startswith("g")))] | length == 0)'
expect_status 0 "$PPW_BLAME" code ppw-prog-1 --format json
cp out.txt code.json
check code '.tree[0].function == "main" and (.tree[0].children[0] | .function == "relax" and .call_line == 24)'
sampled "main's share (code)" code.json '{n: .total_samples, observed: .tree[0].inclusive, op: ">=",
    threshold: share_floor($p; .total_samples), from: "share_floor(\($p), n): start-up and exit outside main"}' \
    --argjson p $P_HOT
sampled "relax's share (code)" code.json '{n: .total_samples, observed: .tree[0].children[0].inclusive,
    op: ">=", threshold: share_floor($p; .total_samples),
    from: "share_floor(\($p), n): the fixed cost outside the loop"}' --argjson p $P_HOT
expect_status 0 "$PPW_BLAME" lines ppw-prog-1 --format json --top 0
cp out.txt lines.json
# relax's samples lie on its lines 14 and 15 (its prologue runs 300 times),
# over 2/3 of all (above), so one of the two holds over 1/3: the hottest.
check lines '.lines[0] | .function == "relax" and (.line == 14 or .line == 15)
    and (.file | endswith("run_prog.c"))'
# Exact, not sampled: every location the binary has on lines 14 and 15 is in
# the blame set of relax's g (and g->cells), which the call binds to main's g
# and g.cells: one datum each, named where it is declared (relax's names are
# aliases); so every sample on those lines blames both.  Fails when blame
# does not cross the call or misses the loop's lines.
loop=$("$JQ" '[.lines[] | select(.function == "relax" and (.line == 14 or .line == 15))
    | .self_samples] | add // 0' lines.json)
for v in 'main g' 'main g.cells'; do
    set -- $v
    sampled "$2@$1 (report)" report.json '{n: .total_samples, op: ">=", threshold: $loop,
        observed: ([.variables[] | select(.function == $f and .name == $v) | .samples] | first // 0),
        from: "exact: the samples on relax lines 14 and 15"}' \
        --arg f "$1" --arg v "$2" --argjson loop "$loop"
done
expect_status 0 "$PPW_BLAME" report ppw-prog-1
grep -q "^report: [0-9]* samples (metric: [a-z-]*) from ppw-prog-1, binary prog$" out.txt ||
    fail "report title: $(head -1 out.txt)"
awk 'length($0) > 100 { exit 1 }' out.txt || fail "report text wider than 100 columns"
ok run

# ---- libppw's frames: measurement, left out of every user view ----
# probed.c calls malloc and free in a loop, each call inside GASP probes
# that PPW_THROTTLE_CALLS=0 never throttles: libppw's code runs longer than
# the program's (97% of some 150 samples here).  Not a sampled threshold:
# any sample in libppw is enough, and there were none only if the run took
# none at all.
"$PPW_CC" -O0 "$SRC/test/blame/probed.c" -o probed || exit 1
PPW_MODE=profile,trace PPW_THROTTLE_CALLS=0 PPW_OUTPUT=probed-run ./probed >/dev/null ||
    fail "the probed program failed"
. "$SRC/test/lib/names.sh"
source_names_only "$PPW_BLAME" probed-run ./probed
[ -n "$names_ppw" ] || fail "probed: no sample in libppw: the check above checked nothing"
ok libppw

# ---- the default command and directory ----
mkdir -p default && cp -r ppw-prog-1 default/ && cd default || exit 1
expect_status 0 "$PPW_BLAME"
grep -q "^report: .* from ppw-prog-1, binary prog" out.txt || fail "ppw-blame alone: $(head -2 out.txt)"
expect_status 0 "$PPW_BLAME" ppw-prog-1 --top 1 --format json
"$JQ" -e '.variables | length == 1' out.txt >/dev/null || fail "ppw-blame DIR --top 1"
cd .. || exit 1
ok default

# ---- another build, a build without -g, damage ----
expect_status 1 "$PPW_BLAME" report ppw-prog-1 --binary other
one_error_line "other: from another build: its build-id is [0-9a-f]\{40\}, the run's (ppw-prog-1) is [0-9a-f]\{40\} (--force uses it anyway)$"
expect_status 0 "$PPW_BLAME" report ppw-prog-1 --binary other --force
grep -q "^warning: the binary is from another build than the run (--force)$" out.txt ||
    fail "--force warns: $(head -3 out.txt)"
expect_status 1 "$PPW_BLAME" report nodebug-run
one_error_line ".*nodebug: no source lines to attribute samples to (.*): build with ppw-cc, which adds -g"
cp -r ppw-prog-1 damaged
size=$(wc -c <damaged/t0.samples.ppw)
head -c $((size - 4)) damaged/t0.samples.ppw >cut && mv cut damaged/t0.samples.ppw
expect_status 1 "$PPW_BLAME" lines damaged
one_error_line "damaged/t0.samples.ppw: truncated"
mkdir -p empty && cd empty || exit 1
expect_status 1 "$PPW_BLAME" code
one_error_line "no ppw-\* run directory in the current directory"
cd .. || exit 1
ok errors

[ "$failures" -eq 0 ] && echo "PASS" || { echo "$failures failure(s)"; exit 1; }
