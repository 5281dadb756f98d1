#!/bin/sh
# `ppw-blame dump` and `ppw-blame profile` on sample runs written by
# make_run (test/unit/run_writer.h): JSON shapes, glued stacks, the
# compensated profile computed by hand, the default-directory rule, errors
# and exit statuses.
#
# usage: test_cli_run.sh PPW_BLAME MAKE_RUN WORKDIR JQ
# Exits 77 (ctest SKIP) when jq is missing.
set -u
PPW_BLAME=$1 MAKE_RUN=$2 W=$3 JQ=${4:-jq}
. "$(dirname "$0")/cli_helpers.sh"

command -v "$JQ" >/dev/null 2>&1 || { echo "SKIP: jq not found"; exit 77; }
rm -rf "$W" && mkdir -p "$W" && cd "$W" || exit 1

# check NAME FILTER: the jq filter must be true on out.txt
check() {
    "$JQ" -e "$2" out.txt >/dev/null || fail "json check $1: $(head -c 400 out.txt)"
}
# one_error_line PATTERN: err.txt is exactly one "ppw-blame: error:" line matching PATTERN
one_error_line() {
    [ "$(wc -l <err.txt)" -eq 1 ] && grep -q "^ppw-blame: error: $1" err.txt \
        || fail "expected one error line like '$1', got: $(cat err.txt)"
}

"$MAKE_RUN" ppw-prog-4242 || exit 1
"$MAKE_RUN" crashed-run crashed || exit 1

# ---- dump --format json: the documented shape ----
expect_status 0 "$PPW_BLAME" dump ppw-prog-4242 --format json
check top 'keys_unsorted == ["dir", "format", "build_id", "pid", "finished", "run", "threads",
                             "spawns", "samples", "trace", "omp"]
           and .dir == "ppw-prog-4242" and .format == "1.7" and .pid == 4242 and .finished
           and (.build_id | length) == 40'
check run '.run | keys_unsorted == ["info", "argv", "env", "env_left_out", "metric", "config", "calibration", "mpi",
                                     "finish", "modules", "regions", "notes"]
           and .argv == ["./prog", "--size", "10"] and .metric.source == "posix-cpu-timer"
           and .metric.reason == "PAPI not available" and .calibration.pair_ns == 100
           and .calibration.windows == {"period": 64, "start_ns": 40, "end_ns": 50,
                                        "inner_ns": 25, "throttled_ns": 5, "clock_ns": 20}
           and .config.modes == ["profile", "trace", "sample"]
           and ([.modules[] | keys_unsorted == ["path", "load_bias", "lo", "hi", "build_id",
                  "flags", "unloaded", "symbols", "symbols_file", "symbols_error"]] | all)
           and .modules[0].flags == ["exe"] and .modules[0].symbols == ".symtab"
           and .modules[0].symbols_file == .info.exe
           and (.modules[1].symbols == ".symtab" or .modules[1].symbols == ".dynsym")
           and .modules[2].flags == ["parallel"]
           and .modules[3].unloaded and (.modules[3].symbols_error | test("No such file"))
           and ([.regions[].id] == [1, 2, 3, 4]) and .regions[2].tag_name == "GASP_C_MALLOC"
           and .regions[2].op == "memory alloc" and .regions[3].tag_name == null
           and .notes == [{"severity": 1, "message": "sample buffer grew"}]'
check threads '[.threads[].index] == [0, 1] and [.threads[].runqueue_ns] == [null, 500]
           and (.threads[0] | .parent == null and .start_routine == null and .ended
                and (.at_exit | not) and .files.samples.closed and .handler_ns == 12345)
           and (.threads[1] | .parent == 0 and .root_tag == 1 and .at_exit
                and .start_function == "run_fixture_worker" and .dropped.not_ready == 2 and .dropped.ring_full == 4
                and .stacks == 3 and .samples == 3 and .timers == 2 and .throttles == 1
                and .probe_windows == {"period": 64, "start_count": 64, "start_ns": 3200,
                    "start_tail_ns": 1280, "end_count": 64, "end_ns": 3840, "end_head_ns": 1600,
                    "throttled_count": 3, "throttled_ns": 90, "interrupted": 1,
                    "clock_ns": 3275})
           and .threads[0].probe_windows == null'
check spawns '[.spawns[] | [.tag, .parent_tag, .kind, .creator, .chain]]
              == [[1, 0, "pthread", 0, [1]], [2, 1, "omp-parallel", 1, [2, 1]],
                  [3, 2, "omp-task", 1, [3, 2, 1]], [4, 0, "pthread", 1, [4, 1]]]
              and all(.spawns[]; .chain_error == null)'
check sample_keys 'all(.samples[];
    keys_unsorted == ["thread", "time_ns", "weight", "spawn_tag", "stack_id", "flags", "stack",
                      "glued", "reaches_main", "complete", "glue_error"]
    and all(.stack[]; keys_unsorted == ["pc", "module", "offset", "function", "source"]
                      and (.pc | test("^0x[0-9a-f]+$")) and (.source | type) == "array")
    and all(.glued[]; keys_unsorted == ["pc", "module", "offset", "function", "source", "spawn"])
    and ([.glued[] | select(.spawn == null) | del(.spawn)] as $own
         | $own == .stack[:($own | length)]))'
check sample_main '.samples[0] | .thread == 0 and .flags == ["leaf_pc"]
    and [.stack[].function] == ["run_fixture_leaf", "run_fixture_compute", "main",
                                "__libc_start_main"]
    and .reaches_main and .complete and .glue_error == null and .weight == 1000000'
# source lines: run_writer.c is built with -g; the made-up libomp has none
check sample_source '.samples[0].stack[0].source as $s
    | ($s | length) == 1 and $s[0].function == "run_fixture_leaf"
    and ($s[0].file | endswith("run_writer.c")) and $s[0].line > 0 and ($s[0].inlined | not)
    and .samples[3].stack[2].source == []'
check sample_truncated '.samples[1] | .flags == ["truncated", "leaf_pc"] and (.complete | not)
    and (.reaches_main | not)'
# in a task: the frames beneath the task's code, in the parallel runtime, are not glued
check sample_glued '.samples[3] | .thread == 1 and .spawn_tag == 3
    and [.stack[].function] == ["run_fixture_leaf", "run_fixture_worker", null, null, "clone"]
    and .stack[2].module == "/nonexistent/libomp.so.5"
    and [.glued[] | [.function, .spawn]] == [["run_fixture_leaf", null],
        ["run_fixture_worker", null], ["run_fixture_compute", 3],
        ["run_fixture_worker", 2], ["run_fixture_spawn", 1], ["main", 1],
        ["__libc_start_main", 1]]
    and .reaches_main and .complete'
# a sample inside the runtime keeps its runtime frames at the top
check sample_in_runtime '.samples[5] | .spawn_tag == 2
    and [.glued[] | [.offset, .spawn]][:3] == [["0x10100", null], [.stack[1].offset, null],
                                               [.glued[2].offset, 2]]
    and [.glued[].spawn] == [null, null, 2, 1, 1, 1] and .complete'
# at the thread's root: the whole stack, then the thread's creation context
check sample_root '.samples[4] | .spawn_tag == 0 and .flags == []
    and [.glued[].spawn] == [null, null, 1, 1, 1] and .reaches_main and .complete'
check trace '[.trace[].event] == ["start", "start", "end", "atomic", "end"]
    and .trace[2] == {"thread": 0, "time_ns": 1300, "event": "end", "evttype": 1, "region": 3,
                      "name": "malloc", "tag": 1001, "tag_name": "GASP_C_MALLOC",
                      "op": "memory alloc", "args": [64, 4660], "description": null}
    and .trace[3].description == "phase 1"
    and [.omp[] | [.thread, .time_ns, .event, .instance, .tag]] ==
        [[1, 2100, "spawn_parallel", 1, 2], [1, 2110, "begin", 1, 2], [1, 2200, "spawn_task", 2, 3],
         [1, 2300, "begin", 2, 3], [1, 2400, "end", 2, 3], [1, 2500, "end", 1, 2]]'
ok dump_json

expect_status 0 "$PPW_BLAME" dump ppw-prog-4242 --format=json --what samples
check what 'keys_unsorted == ["dir", "format", "build_id", "pid", "finished", "samples"]'
expect_status 0 "$PPW_BLAME" dump ppw-prog-4242 --what spawns --format json
check what_spawns 'keys_unsorted == ["dir", "format", "build_id", "pid", "finished", "spawns"]'
ok dump_what

# ---- dump text ----
expect_status 0 "$PPW_BLAME" dump ppw-prog-4242
grep -q '^sample thread=1 time_ns=6000 weight=1000000 spawn_tag=3 stack=1 flags=leaf_pc reaches_main=yes complete=yes$' out.txt \
    || fail "text sample line"
grep -q '^  -- spawn 3 (omp-task, by thread 1)$' out.txt || fail "text spawn separator"
grep -q '^  -- 3 frames beneath, in the parallel runtime, are not glued$' out.txt \
    || fail "text cut at the runtime"
grep -q '^  #5 0x[0-9a-f]* main (.*make_run+0x[0-9a-f]*)$' out.txt || fail "text glued frame"
grep -q '^finish end_ns=10000 threads=2$' out.txt || fail "text finish"
grep -q '^trace thread=0 time_ns=1400 event=atomic region=4 name=phase tag=100 op=user region args=7 description=phase 1$' out.txt \
    || fail "text trace"
ok dump_text

# ---- profile: compensated times, computed by hand in run_writer.c ----
expect_status 0 "$PPW_BLAME" profile ppw-prog-4242 --format json
check profile_header 'keys_unsorted == ["dir", "pid", "thread", "finished", "unended_threads",
        "running_at_exit", "metric", "calibration", "probe_costs", "sort", "clamped", "rows",
        "throttled"]
    and .thread == null and .finished and .unended_threads == [] and .running_at_exit == [1]
    and .clamped == 2
    and .calibration == {"pair_ns": 100, "inner_ns": 30, "throttled_pair_ns": 10,
                         "iterations": 1000}
    and .probe_costs == {"threads": 2, "in_situ": 1, "pair_ns_min": 100, "pair_ns_max": 110}'
check profile_rows '[.rows[] | [(.callpath | join(" <- ")), .calls, .comp_incl_ns, .comp_excl_ns,
                               .comp_incl_clamped, .comp_excl_clamped]]
    == [["main", 1, 794970, 128970, false, false],
        ["work <- main", 1000, 670000, 600000, false, false],
        ["work", 500, 380000, 380000, false, false],
        ["malloc <- work", 30, 0, 0, true, true]]'
check profile_raw '.rows[3] | .calls_recorded == 30 and .incl_min_ns == 3 and .incl_max_ns == 20
    and .incl_total_ns == 220 and .excl_total_ns == 220 and .kind == "callsite"
    and .file == "prog.c" and .line == 22 and .subcalls == 0'
check profile_stats '(.rows[1] | .incl_mean_ns == 800 and .excl_stddev_ns == 100
    and .incl_total_ns == 800000 and (.open | not) and .unwound) and (.rows[0].unwound | not)'
# Times in the throttled list are compensated: thread 1's inner cost is 40
# ns in situ (its probe windows), so the mean before throttling is 800 - 40
# = 760 ns, and the 52000 counted calls take 52000 x 760 ns; with the 1500
# timed calls' compensated time (1000 under main, 500 on thread 1) the
# region took 40.57 ms in all.
check profile_throttled '.throttled == [{"region": 2, "name": "work", "kind": "function",
    "file": "prog.c", "line": 20, "calls_before": 500,
    "mean_ns": 760, "calls_after": 52000, "sample_period": 0, "sampled_calls": 0,
    "sampled_ns": 0, "calls": 53500, "incl_ns": 40570000, "estimated": false}]'
expect_status 0 "$PPW_BLAME" profile ppw-prog-4242 --format json --sort calls
check sort_calls '[.rows[].calls] == [1000, 500, 30, 1] and .sort == "calls"'
expect_status 0 "$PPW_BLAME" profile ppw-prog-4242 --format json --sort excl
check sort_excl '[.rows[].comp_excl_ns] == [600000, 380000, 128970, 0]'
expect_status 0 "$PPW_BLAME" profile ppw-prog-4242 --format json --thread 1
check thread '.thread == 1 and [.rows[] | [.callpath, .calls, .calls_recorded, .calls_throttled]]
    == [[["work"], 52500, 500, 52000], [["malloc", "work"], 10, 10, 0]]
    and .clamped == 2 and .throttled[0].calls == 52500'
expect_status 0 "$PPW_BLAME" profile ppw-prog-4242
grep -q '^         1       1000     1000.000     1000.000     1000.000     1000.000      794.970       200.000      128.970         0.000  main \[function prog.c:10\]$' out.txt \
    || fail "profile text row: $(cat out.txt)"
grep -q '^  work \[function prog.c:20\]: 53500 calls, 40570.000 us in all; 1500 timed, throttled after 500 (mean 0.760 us), then 52000 counted at that mean$' out.txt \
    || fail "profile text throttled"
grep -q '^calibration: pair 100 ns, inner 30 ns, throttled pair 10 ns (1000 iterations)$' out.txt \
    || fail "profile text calibration"
grep -q 'warning' out.txt && fail "warnings for a run that ended normally"
grep -q '^note: threads still running at exit: 1$' out.txt || fail "profile text at-exit note"
grep -q 'work <- main \[function prog.c:20\] (some calls unwound) (throttled)$' out.txt \
    || fail "profile text unwound"
ok profile

expect_status 0 "$PPW_BLAME" profile crashed-run
grep -q '^warning: the run did not end normally$' out.txt || fail "crashed: not-ended warning"
grep -q '^warning: threads that never ended: 0, 1$' out.txt || fail "crashed: threads warning"
grep -q 'main \[function prog.c:10\] (a call was running)$' out.txt || fail "crashed: open timer"
expect_status 0 "$PPW_BLAME" profile crashed-run --format json
check crashed '(.finished | not) and .unended_threads == [0, 1] and .rows[0].open'
ok crashed

# A thread whose samples file the process created and died before writing
# (issue 18: the whole run was refused): the run reads, and the thread
# counts as lost in a crash.
cp -r crashed-run unwritten-run && : >unwritten-run/t1.samples.ppw
expect_status 0 "$PPW_BLAME" dump unwritten-run --format json
check unwritten '.threads[1].files.samples == {"unwritten": true}
                 and .threads[1].lost.causes == ["crash"]
                 and ([.samples[] | select(.thread == 0)] | length) > 0
                 and ([.samples[] | select(.thread == 1)] | length) == 0'
expect_status 0 "$PPW_BLAME" profile unwritten-run
ok unwritten

# ---- a stripped executable: names from its debug file, or none ----
if command -v strip >/dev/null 2>&1; then
    strip --strip-all -o make_run_stripped "$MAKE_RUN" && ./make_run_stripped stripped-run || exit 1
    id=$("$PPW_BLAME" dump stripped-run --what run --format json | "$JQ" -r .build_id)
    mkdir -p "debug/.build-id/$(echo "$id" | cut -c1-2)"
    cp "$MAKE_RUN" "debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug"
    PPW_DEBUG_DIR=$PWD/debug expect_status 0 "$PPW_BLAME" dump stripped-run --format json
    check debug_file '(.run.modules[0] | .symbols == ".symtab"
                       and (.symbols_file | endswith(".debug")))
        and [.samples[0].stack[].function][:3] == ["run_fixture_leaf", "run_fixture_compute", "main"]'
    # no names: the worker's samples still reach its start routine, by the unwind table
    mkdir -p no-debug
    PPW_DEBUG_DIR=$PWD/no-debug expect_status 0 "$PPW_BLAME" dump stripped-run --format json
    check no_names '(.run.modules[0].symbols_file == null or .run.modules[0].symbols == ".dynsym")
        and .samples[0].stack[0].function == null
        and (.samples[4] | .thread == 1 and .spawn_tag == 0 and .complete)
        and (.samples[1].complete | not)'
    ok stripped
fi

# ---- environment values out of range: one usage error, before any work ----
for bad in PPW_BLAME_THREADS=-5 PPW_BLAME_THREADS=0 PPW_BLAME_THREADS=999 PPW_BLAME_THREADS=4x \
           PPW_BLAME_THREADS=99999999999999999999 PPW_DEBUG_DIR=$PWD/no-such-dir \
           PPW_DEBUG_DIR=/dev/null PPW_BASELINE=$PWD PPW_CALIBRATE_MPI=$PWD; do
    expect_status 2 env "$bad" "$PPW_BLAME" report ppw-prog-4242
    one_error_line "${bad%%=*}=.*: "
done
expect_status 0 env PPW_BLAME_THREADS=3 "$PPW_BLAME" dump ppw-prog-4242 --what run
ok environment

# ---- the default run directory: the ppw-* directory modified last ----
mkdir -p default && cd default || exit 1
expect_status 1 "$PPW_BLAME" dump
one_error_line "no ppw-\* run directory in the current directory"
"$MAKE_RUN" ppw-old-1 && "$MAKE_RUN" ppw-new-2 && "$MAKE_RUN" ppw-a-3 || exit 1
touch -d '2020-01-01 00:00:00' ppw-old-1 ppw-a-3
touch -d '2021-01-01 00:00:00' ppw-new-2
echo 'not a directory' >ppw-zzz-file
touch ppw-zzz-file
expect_status 0 "$PPW_BLAME" dump --format json --what run
check default_dir '.dir == "ppw-new-2"'
expect_status 0 "$PPW_BLAME" profile --format json
check default_dir_profile '.dir == "ppw-new-2"'
# a tie in time goes to the greater name
touch -d '2021-01-01 00:00:00' ppw-a-3
expect_status 0 "$PPW_BLAME" dump --format json --what run
check default_tie '.dir == "ppw-new-2"'
cd .. || exit 1
ok default_dir

# ---- errors: one line, documented status ----
expect_status 1 "$PPW_BLAME" dump no-such-dir
one_error_line "no-such-dir: No such file or directory$"
expect_status 1 "$PPW_BLAME" profile no-such-dir
one_error_line "no-such-dir: No such file or directory$"
mkdir -p empty-dir
expect_status 1 "$PPW_BLAME" dump empty-dir
one_error_line "empty-dir: no run.ppw (not a ppw run directory)$"
cp -r ppw-prog-4242 cut-run
head -c 100 ppw-prog-4242/t1.events.ppw >cut-run/t1.events.ppw
expect_status 1 "$PPW_BLAME" dump cut-run
one_error_line "cut-run/t1.events.ppw: truncated: the file has 100 bytes, fewer than its 128-byte header$"
expect_status 1 "$PPW_BLAME" profile ppw-prog-4242 --thread 7
one_error_line "ppw-prog-4242: no thread 7 in the run$"
ok data_errors

for args in "dump --format xml" "dump --what nothing" "dump --bogus" "dump a b" "dump --format" \
            "profile --sort fastest" "profile --thread abc" "profile --thread -1" \
            "profile --thread" "profile --frobnicate" "profile a b"; do
    # shellcheck disable=SC2086
    expect_status 2 "$PPW_BLAME" $args
    [ "$(wc -l <err.txt)" -eq 1 ] || fail "'$args': more than one error line"
done
grep -q "^ppw-blame: error: profile: unexpected argument 'b' (profile reads one directory)$" err.txt || fail "extra argument message"
expect_status 0 "$PPW_BLAME" dump --help
grep -q '^usage: ppw-blame dump' out.txt || fail "dump --help"
expect_status 0 "$PPW_BLAME" profile -h
grep -q '^usage: ppw-blame profile' out.txt || fail "profile --help"
expect_status 0 "$PPW_BLAME" --help
grep -q '^  dump ' out.txt && grep -q '^  profile ' out.txt || fail "--help lists dump and profile"
ok usage

# ---- export --to chrome on the fixture's trace (thread 0: main, a call
# of region 3 inside it, an instant; thread 1 created by thread 0; its
# OpenMP region and task as slices, each joined to its spawn) ----
expect_status 0 "$PPW_BLAME" export ppw-prog-4242 --to chrome
check chrome_slices '[.traceEvents[] | select(.pid == 4242 and .tid == 0 and (.ph == "B" or .ph == "E"))
        | [.ph, .name, .ts]]
    == [["B", "main", 0.1], ["B", "malloc", 0.2], ["E", "malloc", 0.3], ["E", "main", 8.9]]
    and ([.traceEvents[] | select(.ph == "i") | .args.description] == ["phase 1"])'
check chrome_threads '([.traceEvents[] | select(.ph == "X" and .cat == "thread") | .tid] | sort) == [0, 1]
    and ([.traceEvents[] | select(.ph == "s" or .ph == "f") | [.ph, .tid, .cat]]
         == [["s", 0, "spawn"], ["f", 1, "spawn"], ["s", 1, "omp"], ["f", 1, "omp"],
             ["s", 1, "omp"], ["f", 1, "omp"]])
    and ([.traceEvents[] | select(.cat == "omp" and .ph != "X") | .ts] == [1.1, 1.11, 1.2, 1.3])
    and ([.traceEvents[] | select(.ph == "X" and .cat == "omp") | [.tid, .name, .ts, .dur, .args.instance]]
         == [[1, "omp task", 1.3, 0.1, 2], [1, "omp parallel", 1.11, 0.39, 1]])
    and ([.traceEvents[] | select(.ph == "M" and .name == "process_name") | .args.name]
         == ["pid 4242"])'
# the fixture's binary has no blame graph: the sample views refuse it
expect_status 1 "$PPW_BLAME" export ppw-prog-4242 --to folded
[ "$(wc -l <err.txt)" -eq 1 ] || fail "export --to folded without a blame graph: $(cat err.txt)"
expect_status 2 "$PPW_BLAME" export ppw-prog-4242 --to chrome --rank 0
one_error_line "export: --rank needs a job directory"
ok export

[ "$failures" -eq 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
