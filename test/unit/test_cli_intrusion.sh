#!/bin/sh
# `ppw-blame intrusion` on the synthetic runs of test_intrusion.c (numbers
# worked out there): the JSON shape and numbers, the text report, --top,
# --flag-ratio, an uncalibrated run, a crashed one, a job directory (one
# line per rank, an unreadable rank, --rank), and errors with their statuses.
#
# usage: test_cli_intrusion.sh PPW_BLAME TEST_INTRUSION WORKDIR JQ
# Exits 77 (ctest SKIP) when jq is missing.
set -u
PPW_BLAME=$1 WRITER=$2 W=$3 JQ=${4:-jq}
. "$(dirname "$0")/cli_helpers.sh"

command -v "$JQ" >/dev/null 2>&1 || { echo "SKIP: jq not found"; exit 77; }
rm -rf "$W" && mkdir -p "$W" && cd "$W" || exit 1
"$WRITER" --write runs || exit 1

# ---- JSON: shape and the hand-computed numbers ----
expect_status 0 "$PPW_BLAME" intrusion runs/calibrated --format json
check keys 'keys_unsorted == ["dir", "pid", "finished", "calibrated", "calibration", "probe_costs",
    "flag_ratio",
    "run_ns", "run_span", "cpu_ns", "threads", "probes", "probes_throttled", "probes_sampled",
    "calls_skipped", "throttle_sample", "probe_ns",
    "samples", "sampler_ns", "sampler_cost", "total_ns", "share_of_cpu", "share_of_run",
    "flagged", "regions_total", "regions"]
    and (.regions[0] | keys_unsorted == ["region", "name", "kind", "file", "line", "calls",
    "probes", "probes_throttled", "probes_sampled", "calls_skipped", "probe_ns", "raw_incl_ns", "raw_excl_ns", "comp_incl_ns",
    "comp_excl_ns", "probe_per_call_ns", "body_per_call_ns", "comp_incl_clamped",
    "comp_excl_clamped", "flagged"])'
check totals '.calibrated and .calibration.pair_ns == 100 and .calibration.handler_ns == 1500
    and .probe_costs.pair_ns == 100 and .probe_costs.in_situ_threads == 0
    and ([.probe_costs.threads[] | [.thread, .source, .pair_ns, .probes, .windows]]
         == [[0, "calibrated", 100, 3001, 0], [1, "calibrated", 100, 6010, 0]])
    and .flag_ratio == 0.5 and .run_ns == 2000000 and .run_span == "finish"
    and .cpu_ns == 2000000 and .threads == 2 and .probes == 9011 and .probes_throttled == 5000
    and .probe_ns == 451100 and .samples == 5 and .sampler_ns == 12000
    and .sampler_cost == "handler" and .total_ns == 463100 and .share_of_cpu == 0.23155
    and .flagged == 2 and .regions_total == 4'
check regions '[.regions[] | [.name, .calls, .probe_ns, .comp_incl_ns, .comp_excl_ns, .flagged]]
    == [["tiny", 8000, 350000, 50000, 50000, true], ["work", 1000, 100000, 570000, 330000, false],
        ["lock", 10, 1000, 0, 0, true], ["main", 1, 100, 694970, 29970, false]]
    and .regions[2].comp_incl_clamped and .regions[2].comp_excl_clamped and .regions[2].kind == "callsite"
    and .regions[0].probe_per_call_ns == 43.75 and .regions[3].body_per_call_ns == 694970'
expect_status 0 "$PPW_BLAME" intrusion runs/calibrated --format json --top 1 --flag-ratio 3
check top '.regions_total == 4 and (.regions | length) == 1 and .flagged == 1
    and .flag_ratio == 3 and .regions[0].name == "tiny" and (.regions[0].flagged | not)'
ok json

# ---- text ----
expect_status 0 "$PPW_BLAME" intrusion runs/calibrated
grep -q '^calibration: pair 100 ns, inner 30 ns, throttled pair 10 ns, sample 1500 ns$' out.txt ||
    fail "text calibration: $(cat out.txt)"
grep -q '^probes: 9011 pairs (5000 throttled), 451.100 us$' out.txt || fail "text probes"
grep -q '^sampler: 5 samples, 12.000 us (measured in the handler)$' out.txt || fail "text sampler"
grep -q '^intrusion: 463.100 us, 23.16% of CPU time, 23.16% of the run$' out.txt ||
    fail "text total: $(grep intrusion: out.txt)"
grep -q '^flagged: 2 regions whose probes cost at least 0.5 x' out.txt || fail "text flagged"
grep -q '^      8000       8000      350.000      140.000       50.000       140.000       50.000        43.8         16.7 ! tiny \[function intr.c:30\]$' out.txt ||
    fail "text tiny row: $(grep tiny out.txt)"
grep -q '^        10         10        1.000        0.200        0.000\*        0.200        0.000\*      100.0          0.0 ! lock' out.txt ||
    fail "text clamped row: $(grep lock out.txt)"
awk 'length($0) > 140 { exit 1 }' out.txt || fail "text wider than 140 columns"
expect_status 0 "$PPW_BLAME" intrusion runs/calibrated --top 2
grep -q '^(2 more regions; --top 0 shows all)$' out.txt || fail "text --top"
ok text

# ---- no calibration, a crashed run ----
expect_status 0 "$PPW_BLAME" intrusion runs/uncalibrated --format json
check uncalibrated '(.calibrated | not) and .calibration == null and .probe_ns == 0
    and .probes == 9011 and .flagged == 0 and .sampler_ns == 12000
    and all(.regions[]; .comp_incl_ns == null and .comp_excl_ns == null and .probe_ns == 0)'
expect_status 0 "$PPW_BLAME" intrusion runs/uncalibrated
grep -q '^calibration: none recorded: probe costs are unknown (shown as 0)' out.txt ||
    fail "text uncalibrated: $(head -3 out.txt)"
expect_status 0 "$PPW_BLAME" intrusion runs/crashed --format json
check crashed '(.finished | not) and .run_span == "main_incl" and .run_ns == 1000000
    and .cpu_ns == 0 and .share_of_cpu == null'
expect_status 0 "$PPW_BLAME" intrusion runs/crashed
grep -q '^warning: the run did not end normally$' out.txt || fail "text crashed warning"
ok degraded

# ---- a job directory: one line per rank, their sum; --rank ----
mkdir -p job && cp -r runs/calibrated job/r0-host-77 && cp -r runs/uncalibrated job/r1-host-78 &&
    mkdir job/r3-host-80
expect_status 0 "$PPW_BLAME" intrusion job --format json
check job '.job == "job" and .size == 4 and .ranks_read == 2 and ([.ranks[].rank] == [0, 1, 3])
    and .ranks[0].intrusion.total_ns == 463100 and .ranks[1].intrusion.calibrated == false
    and (.ranks[2].error | test("run.ppw")) and .total.probes == 18022
    and .total.total_ns == 475100 and .total.flagged == 2'
expect_status 0 "$PPW_BLAME" intrusion job
grep -q '^intrusion job: job of 4 ranks (2 read)$' out.txt || fail "job title: $(head -1 out.txt)"
grep -q '^ total        18022' out.txt || fail "job total: $(cat out.txt)"
grep -q '^     3  error: .*run.ppw' out.txt || fail "job rank error"
grep -q '^warning: ranks missing (no run directory): 2$' out.txt || fail "job missing rank"
expect_status 0 "$PPW_BLAME" intrusion job --rank 0 --format json
check rank '.dir == "job/r0-host-77" and .total_ns == 463100'
expect_status 1 "$PPW_BLAME" intrusion job --rank 2
one_error_line "job: no run directory of rank 2$"
expect_status 1 "$PPW_BLAME" intrusion job --rank 3
one_error_line "job/r3-host-80"
# CSV: a record per rank, the unreadable one with its error; a run's regions
expect_status 0 "$PPW_BLAME" intrusion job --format csv
[ "$(sed -n 1p out.txt)" = "rank,dir,probes,probe_ns,samples,sampler_ns,total_ns,cpu_ns,flagged,calibrated,error" ] ||
    fail "job csv header: $(head -1 out.txt)"
grep -q '^0,job/r0-host-77,9011,451100,5,12000,463100,' out.txt || fail "job csv rank 0: $(cat out.txt)"
grep -q '^3,job/r3-host-80,,,,,,,,,.*run.ppw' out.txt || fail "job csv rank 3: $(cat out.txt)"
"$WRITER" --write fresh || exit 1 # the damaged section above changed runs/
expect_status 0 "$PPW_BLAME" intrusion fresh/uncalibrated --format csv --top 0
[ "$(grep -c . out.txt)" -eq 5 ] || fail "run csv: a header and 4 regions: $(cat out.txt)"
grep -q '^[0-9]*,[a-z]*,[a-z]*,[^,]*,[0-9]*,[0-9]*,[0-9]*,[0-9]*,0,[0-9.e+]*,[0-9.e+]*,,,' out.txt ||
    fail "uncalibrated csv: compensated times must be empty: $(cat out.txt)"
ok job

# ---- errors ----
expect_status 2 "$PPW_BLAME" intrusion runs/calibrated --rank 0
one_error_line "runs/calibrated: --rank needs a job directory"
for bad in "--flag-ratio -1" "--flag-ratio x" "--flag-ratio nan" "--top -3" "--format xml" \
           "--frobnicate"; do
    # shellcheck disable=SC2086
    expect_status 2 "$PPW_BLAME" intrusion runs/calibrated $bad
    [ "$(wc -l <err.txt)" -eq 1 ] || fail "'$bad': $(cat err.txt)"
done
expect_status 1 "$PPW_BLAME" intrusion no-such-dir
one_error_line "no-such-dir"
cp -r runs/calibrated damaged && head -c 100 runs/calibrated/t0.profile.ppw >damaged/t0.profile.ppw
expect_status 1 "$PPW_BLAME" intrusion damaged
one_error_line "damaged/t0.profile.ppw: truncated"
expect_status 0 "$PPW_BLAME" intrusion --help
grep -q '^usage: ppw-blame intrusion' out.txt || fail "--help"
ok errors

[ "$failures" -eq 0 ] && echo "PASS" || { echo "$failures failure(s)"; exit 1; }
