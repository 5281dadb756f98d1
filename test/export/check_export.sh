#!/bin/bash
# ppw-blame export and flame on real runs (ctest export.<case>), each output
# checked in its consumer or against its schema:
#
#   folded      ppw's folded stacks read back by 'ppw-blame report --folded':
#               the same variables with the same samples as the run itself;
#               every kind of frame (frames.c: line 0, code without a graph
#               but with lines, a symbol holding the separators) read back
#               by report, the access view, code and lines to the same JSON;
#               --no-locations and --variables for flame-graph tools
#   speedscope  valid against speedscope's own file-format schema, one
#               profile per thread whose weights add up to its samples
#   chrome      Chrome trace-event JSON of a traced pthread program, of an OpenMP
#               task program (a slice per implicit task and task stretch, a flow
#               from each spawn to the threads that ran it), and of a
#               4-rank MPI ring: balanced slices per track, a flow per thread
#               created and one per message, each flow's ends on its tracks
#   pprof       gzip; Google's pprof (built from Debian's source) reads it, with
#               the samples' total and the thread and variable labels; protoc
#               decodes it as perftools.profiles.Profile: the
#               samples add up, every location and function id resolves, and
#               the blamed array is a label
#   csv         report, code and lines --format csv read by Python's csv module
#               give the same records as their TSV; profile's, analyze's,
#               intrusion's and imbalance's the same as their JSON
#   flame       well-formed SVG: main spans all samples; --variables tops
#               the stacks with the blamed array
#   html        the report is self-contained, holds every section, and in headless
#               chromium shows the top variable and expands the tree (#selftest);
#               a screenshot is taken (PPW_SCREENSHOT_DIR keeps it)
#   otf2        OTF2 traces (otf2-print -Werror reads them without a word) of the
#               4-rank MPI ring and of test/runtime/programs/mpi_rma.c: per location,
#               as many Enter/Leave, MPI and RMA records as the ranks' dumps give
#               START/END events of each kind; every MpiSend has its MpiRecv (same
#               sender, receiver, tag); bad -o directories and an untraced run are
#               one error line each
#   errors      bad options, an unwritable -o (no file left), an untraced run
#
#   check_export.sh CASE BUILD_DIR
set -uo pipefail
case_name=$1 build=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ppw-export-$case_name.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
blame=$build/bin/ppw-blame
clang=${PPW_TEST_CLANG:-clang-19} # the configure-time clang, for code without the plugin
python=/usr/bin/python3 # Debian's, with python3-jsonschema (scripts/setup-deps)
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }

# An ASan-built plugin cannot load into clang, which is not ASan-built.
nm -D --undefined-only "$build/lib/ppw.so" | grep -q __asan_ && skip "the plugin is ASan-built"
export OMP_WAIT_POLICY=passive OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1

# barrier [MODE]: test/analyze/barrier.c built and run into ./run.
# The checks below need samples of a kind: a stack main;worker;sweep in
# each of the two worker threads (thread 1 and 2), blaming field, and the
# hot line 17.  The workers sweep 1,600 and 4,800 times (0.15 and 0.45 s
# of CPU here, count_floor of 150 samples = 101): a run without them is
# repeated with 4 times the phases, then the test is skipped.  The rest of
# what they check is exact: an export against the run it came from.
barrier() {
    "$build/bin/ppw-cc" -O2 "$src/test/analyze/barrier.c" -o barrier -lpthread 2>cc.err ||
        fail "cannot build barrier.c: $(cat cc.err)"
    local phases=40 got
    while :; do
        rm -rf "$tmp/run"
        PPW_MODE=${1:-profile} PPW_OUTPUT=$tmp/run ./barrier $phases >out.txt || fail "barrier.c failed"
        "$blame" dump run --what samples --format json >dump.json || fail "dump: $(head -c 300 dump.json)"
        "$blame" lines run --format json --top 0 >lines.json || fail "lines: $(head -c 300 lines.json)"
        got=$(jq -r --slurpfile l lines.json '[1, 2] | map(. as $t | [$s[0].samples[] | select(.thread == $t and
            any(.glued[].source[]?; .function == "sweep"))] | length) + [[$l[0].lines[] | select(.line == 17
            and (.file | test("(^|/)barrier\\.c$"))) | .self_samples] | add // 0] | join(" ")' \
            --slurpfile s dump.json -n)
        echo "barrier.c, $phases phases: samples in sweep in threads 1 and 2, on line 17: $got"
        [[ " $got " != *" 0 "* ]] && break
        ((phases == 40)) || skip "barrier.c: samples in sweep in threads 1 and 2, on line 17: $got"
        phases=$((phases * 4))
    done
}

# frames: test/export/frames.c, every kind of frame the folded export writes,
# exported and read back by report, code (tree and flat) and lines: the same
# JSON as on the run, but for the metric (folded stacks count samples).
# Its three phases run about 0.1 s of CPU each (about 80 samples each here;
# count_floor(80) = 44); a run without a sample in one of them is repeated
# with 4 times the work, then the test is skipped.  The rest is exact.
frames() {
    "$build/bin/ppw-cc" -O2 -c "$src/test/export/frames.c" -o frames.o 2>cc.err &&
        "$clang" -O2 -g -c "$src/test/export/frames_foreign.c" -o frames_foreign.o \
            2>>cc.err &&
        "$build/bin/ppw-cc" -O2 frames.o frames_foreign.o -o frames 2>>cc.err ||
        fail "cannot build frames.c: $(cat cc.err)"
    local reps=1000 got outside tries=0
    while :; do
        rm -rf "$tmp/frames-run"
        PPW_OUTPUT=$tmp/frames-run ./frames $reps >/dev/null || fail "frames.c failed"
        # A stack that never reaches main (a start-up sample at crt1's
        # _start, which has neither a graph nor a source location: about 1
        # run in 20 on a VM whose page faults trap to the host) reads back
        # as code of a runtime, "[runtime]", where the run shows _start
        # (docs/FORMATS.md, "What the exporter writes"): run again.
        outside=$("$blame" dump frames-run --format json |
            jq '[.samples[] | select(.reaches_main | not)] | length') || fail "dump frames-run"
        if ((outside > 0 && ++tries < 4)); then
            echo "frames.c: $outside samples outside main; again"
            continue
        fi
        "$blame" export frames-run --to folded -o frames.folded || fail "export frames-run"
        # line 0 in a function with a graph, a located frame without one, an escaped name
        got=$(for pattern in ';zeroline@[^;@]*frames\.c:0:0 ' ';foreign_sum@@[^;]*frames_foreign\.c:[1-9]' \
            ';odd%3Bsum%20name%231%25 '; do
            grep -E "$pattern" frames.folded | awk '{ n += $NF } END { printf "%d ", n }'; done)
        echo "frames.c, $reps repetitions: samples in zeroline (line 0), foreign_sum, odd;sum name: $got"
        [[ " $got " != *" 0 "* ]] && break
        ((reps == 1000)) || skip "frames.c: samples in zeroline, foreign_sum, odd;sum name: $got"
        reps=$((reps * 4))
    done
    local view a b
    for view in "report --top 0" "report --view access --top 0" "code" "code --flat --top 0" \
        "lines --top 0"; do
        # Folded stacks carry no modules: the program's code built without
        # the plugin (foreign_sum) shows there as code of a runtime,
        # "[foreign_sum]" (docs/FORMATS.md section 3); names aside, equal.
        # shellcheck disable=SC2086
        # (and its lines, the program's in a run, are not listed from folded
        # stacks: lines lists the program's code only).  Folded stacks carry
        # no CPU time either, so no lost-samples accounting (.lost).
        a=$("$blame" $view frames-run --format json | jq -S 'del(.metric, .lost)
            | if .lines then .lines |= map(select(.file // "" | endswith("frames_foreign.c") | not))
              else . end') || fail "$view on the run"
        # shellcheck disable=SC2086
        b=$("$blame" $view --folded frames.folded --binary ./frames --format json |
            jq -S 'del(.metric) | walk(if type == "object" and (.function | type) == "string"
                and (.function | test("^\\[(foreign_sum|odd;sum name#1%)\\]$"))
                then .function |= .[1:-1] else . end)') || fail "$view on the export"
        [ -n "$a" ] && [ "$a" = "$b" ] || fail "$view does not read back: $(diff <(echo "$a") <(echo "$b") | head -20)"
    done
    echo "export.folded: frames.c: report, the access view, code (tree, flat) and lines read back equal"
}

# expect STATUS PATTERN ARGS...: ppw-blame ARGS exits with STATUS and exactly
# one error line, matching PATTERN
expect() {
    local status=$1 pattern=$2
    shift 2
    "$blame" "$@" >out.txt 2>err.txt
    local got=$?
    [ $got = "$status" ] && [ "$(wc -l <err.txt)" = 1 ] && grep -q "$pattern" err.txt ||
        fail "ppw-blame $*: status $got (want $status), stderr: $(cat err.txt)"
}

# report_of ARGS...: report's variables, as [name, function, samples, incl, excl]
report_of() {
    "$blame" report "$@" --format json --top 0 |
        jq -c '[.variables[] | [.name, .function, .samples, .inclusive, .exclusive]]'
}

case $case_name in
folded)
    barrier
    "$blame" export run --to folded -o s.folded || fail "export --to folded"
    [ "$(report_of run)" = "$(report_of --folded s.folded --binary ./barrier)" ] ||
        fail "the folded export does not read back: run $(report_of run),
        folded $(report_of --folded s.folded --binary ./barrier)"
    grep -q '^main@[^;]*barrier.c:[0-9]*:[0-9]*;worker@' s.folded || fail "frames: $(head -3 s.folded)"
    "$blame" export run --to folded --no-locations --variables >plain.folded || fail "--no-locations"
    grep -q '^main;worker;sweep;\[variable\]_field [0-9]*$' plain.folded ||
        fail "--no-locations --variables: $(head -3 plain.folded)"
    # No location, but a PLT stub keeps its name as perf and gdb write it
    # ("pthread_barrier_wait@plt", where a sample may land on its way in)
    located=$(sed -E 's/@plt(;| )/\1/g' plain.folded | grep -m1 '@')
    [ -z "$located" ] || fail "--no-locations left a location: $located"
    # the counts add up to the samples
    total=$(grep -v '^#' s.folded | awk '{ n += $NF } END { print n }')
    samples=$("$blame" report run --format json | jq .total_samples)
    [ "$total" = "$samples" ] || fail "folded counts $total, run samples $samples"
    echo "export.folded: $(grep -vc '^#' s.folded) stacks, $total samples, report reads them back"
    frames
    ;;
speedscope)
    barrier
    "$blame" export run --to speedscope --variables -o s.json || fail "export --to speedscope"
    # Stacks start at main but for the samples that do not reach it (a
    # sample in start-up or in the exit handlers, which may happen): the
    # seconds those weigh in the run, per thread.  A stack whose outermost
    # frame is libppw's has no user frame: libppw's own time, which no view
    # shows (a walk that ends in libppw's exit code, say, where libc keeps
    # no frame pointer; the test once read 0 s against 0.86 ms, one sample).
    outside=$(jq -c '[.samples[] | select((.reaches_main | not) and
            ((.glued | last | .module // "") | test("/libppw[^/]*$") | not))] | group_by(.thread)
        | map({key: "thread \(.[0].thread)", value: (map(.weight) | add / 1e9)}) | from_entries' dump.json)
    "$python" - "$here/speedscope-schema.json" s.json "$outside" <<'EOF' || fail "speedscope file"
import json, sys, jsonschema
schema, doc = (json.load(open(p)) for p in sys.argv[1:3])
outside = json.loads(sys.argv[3])
# the schema's root is FileFormat.File
jsonschema.validate(doc, {**schema, "$ref": "#/definitions/FileFormat.File"})
frames = doc["shared"]["frames"]
names = [p["name"] for p in doc["profiles"]]
assert len(set(names)) == len(names) and {"thread 1", "thread 2"} <= set(names), \
    "a profile per thread: %s" % names
for p in doc["profiles"]:
    assert len(p["samples"]) == len(p["weights"]) > 0
    assert all(0 <= i < len(frames) for s in p["samples"] for i in s), "frame index out of range"
    assert abs(sum(p["weights"]) - p["endValue"]) < 1e-9 * max(1, p["endValue"])
    elsewhere = sum(w for s, w in zip(p["samples"], p["weights"]) if frames[s[0]]["name"] != "main")
    assert abs(elsewhere - outside.get(p["name"], 0)) < 1e-9 * max(1, p["endValue"]), \
        "%s: %g s in stacks that do not start at main, the run has %g s outside main" \
        % (p["name"], elsewhere, outside.get(p["name"], 0))
assert any(f["name"] == "[variable] field" for f in frames), "the blamed array is a frame"
print("export.speedscope: valid;", len(frames), "frames,",
      ", ".join("%s %d stacks" % (p["name"], len(p["samples"])) for p in doc["profiles"]),
      "; seconds outside main:", outside or "none")
EOF
    ;;
chrome)
    barrier profile,trace
    "$blame" export run --to chrome -o t.json || fail "export --to chrome"
    # OpenMP: one parallel region on 3 threads, 126 tasks (a binary tree of
    # 64 leaves) with taskwaits.
    "$build/bin/ppw-cc" -O2 -fopenmp "$src/test/e2e/omp_tasks.c" -o tasks 2>cc.err ||
        fail "cannot build omp_tasks.c: $(cat cc.err)"
    PPW_MODE=profile,trace OMP_NUM_THREADS=3 PPW_OUTPUT=$tmp/omp ./tasks 20 >out.txt ||
        fail "omp_tasks.c failed"
    "$blame" export omp --to chrome -o o.json || fail "export an OpenMP run --to chrome"
    "$python" - o.json <<'EOF' || fail "chrome trace of OpenMP"
import json, sys
from collections import defaultdict
events = json.load(open(sys.argv[1]))["traceEvents"]
omp = [e for e in events if e.get("cat") == "omp"]
slices = defaultdict(list)
for e in omp:
    if e["ph"] == "X":
        slices[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"], e["name"]))
flows = defaultdict(dict)
for e in omp:
    if e["ph"] in "sf":
        flows[e["id"]][e["ph"]] = e
assert all(set(f) == {"s", "f"} for f in flows.values()), "a flow without both ends"
assert all(f["f"]["ts"] >= f["s"]["ts"] for f in flows.values()), "work began before its spawn"
# a flow lands where a slice of its thread begins
for f in flows.values():
    end = f["f"]
    assert any(abs(b - end["ts"]) < 1e-3 for b, _, _ in slices[(end["pid"], end["tid"])]), \
        "a flow lands outside the OpenMP slices: %s" % end
implicit = sum(1 for t in slices.values() for s in t if s[2] == "omp parallel")
tasks = [s for t in slices.values() for s in t if s[2] == "omp task"]
assert implicit == 3, "3 implicit tasks, got %d" % implicit
assert len(flows) == 3 + 126, "a flow per thread of the region and per task: %d" % len(flows)
assert len(tasks) >= 126, "each task runs at least once: %d stretches" % len(tasks)
# slices on a track nest or are apart (the viewers need it)
for track, t in slices.items():
    t.sort(key=lambda s: (s[0], -s[1]))
    stack = []
    for b, e, name in t:
        while stack and stack[-1] <= b + 1e-3:
            stack.pop()
        assert not stack or e <= stack[-1] + 1e-3, "overlapping slices on %s" % (track,)
        stack.append(e)
print("export.chrome: OpenMP: %d task stretches on %d threads, %d spawn flows"
      % (len(tasks), len(slices), len(flows)))
EOF
    command -v mpirun >/dev/null && command -v mpicc >/dev/null || skip "no MPI: threads checked only"
    OMPI_CC=$build/bin/ppw-cc mpicc -O2 "$src/test/runtime/programs/mpi_ring.c" -o ring 2>cc.err ||
        fail "cannot build mpi_ring.c: $(cat cc.err)"
    mpirun=(mpirun --oversubscribe -np 4)
    [ "$(id -u)" -ne 0 ] || mpirun+=(--allow-run-as-root)
    mkdir m
    (cd m && PPW_MODE=profile,trace timeout 120 "${mpirun[@]}" -x PPW_MODE ../ring >out.txt 2>err.txt) ||
        fail "mpirun: $(head -3 m/err.txt)"
    job=(m/ppw-*)
    "$blame" export "${job[0]}" --to chrome -o j.json || fail "export a job --to chrome"
    sendrecvs=0
    for r in "${job[0]}"/r*; do
        n=$("$blame" dump "$r" --format json --what trace |
            jq '[.trace[] | select(.name == "GASP_MPI_SENDRECV" and .event == "start")] | length')
        sendrecvs=$((sendrecvs + n))
    done
    "$python" - t.json j.json "$sendrecvs" <<'EOF' || fail "chrome trace"
import json, sys
from collections import defaultdict

def check(path, threads_created, messages):
    doc = json.load(open(path))
    events = doc["traceEvents"]
    stacks, last = defaultdict(list), {}
    for e in events:
        assert e["ph"] in "MBEXisf", e
        track = (e["pid"], e["tid"])
        if e["ph"] in "BE":
            assert e["ts"] >= last.get(track, 0), "time runs backwards on %s" % (track,)
            last[track] = e["ts"]
        if e["ph"] == "B":
            stacks[track].append(e["name"])
        elif e["ph"] == "E":
            assert stacks[track] and stacks[track].pop() == e["name"], "unbalanced E %s" % e
    assert not any(stacks.values()), "slices left open: %s" % dict(stacks)
    tracks = {(e["pid"], e["tid"]) for e in events if e["ph"] == "X"}
    flows = defaultdict(dict)
    for e in events:
        if e["ph"] in "sf":
            assert (e["pid"], e["tid"]) in tracks, "a flow off the tracks"
            flows[(e["cat"], e["id"])][e["ph"]] = e
    assert all(set(f) == {"s", "f"} for f in flows.values()), "a flow without both ends"
    spawns = sum(1 for (cat, _) in flows if cat == "spawn")
    msgs = sum(1 for (cat, _) in flows if cat == "mpi")
    assert threads_created is None or spawns == threads_created, \
        "spawn flows %d, threads created %d" % (spawns, threads_created)
    assert msgs == messages, "message flows %d, messages sent %d" % (msgs, messages)
    for (cat, _), f in flows.items():
        if cat == "mpi":
            assert f["f"]["ts"] >= f["s"]["ts"], "a message received before it was sent"
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    return len(events), len(tracks), names

n, tracks, names = check(sys.argv[1], 2, 0)
assert {"thread 0", "thread 1", "thread 2"} <= names, names
print("export.chrome: threads: %d events on %d tracks, 2 spawn flows" % (n, tracks))
# Open MPI starts helper threads of its own: their spawn flows are not counted
n, tracks, _ = check(sys.argv[2], None, int(sys.argv[3]))
assert tracks >= 4, "a track per rank"
print("export.chrome: MPI ring: %d events on %d tracks, %s message flows" % (n, tracks, sys.argv[3]))
EOF
    [ "$sendrecvs" -gt 0 ] || fail "the ring sent nothing"
    ;;
pprof)
    barrier
    command -v protoc >/dev/null || skip "protoc not installed (protobuf-compiler)"
    "$blame" export run --to pprof -o p.pb.gz || fail "export --to pprof"
    gzip -t p.pb.gz || fail "not gzip"
    gzip -dc p.pb.gz | protoc --decode=perftools.profiles.Profile \
        --proto_path="$src/tools/ppw-blame/proto" profile.proto >p.txt 2>err.txt ||
        fail "protoc cannot decode it: $(cat err.txt)"
    samples=$("$blame" report run --format json | jq .total_samples)
    "$python" - p.txt "$samples" <<'EOF' || fail "pprof profile"
import re, sys
text, samples = open(sys.argv[1]).read(), int(sys.argv[2])
strings = re.findall(r'^string_table: "(.*)"$', text, re.M)
assert strings[0] == "", "string 0 must be empty"
blocks = lambda name: re.findall(r'^%s \{\n(.*?)^\}' % name, text, re.M | re.S)
nums = lambda block, field: [int(v) for v in re.findall(r'^\s*%s: (-?\d+)$' % field, block, re.M)]
sample_blocks, locs, funcs = blocks("sample"), blocks("location"), blocks("function")
loc_ids = {nums(b, "id")[0] for b in locs}
fun_ids = {nums(b, "id")[0] for b in funcs}
assert sum(nums(b, "value")[0] for b in sample_blocks) == samples, "sample counts"
assert all(set(nums(b, "location_id")) <= loc_ids for b in sample_blocks), "a dangling location"
assert all(set(nums(b, "function_id")) <= fun_ids for b in locs), "a dangling function"
names = {strings[nums(b, "name")[0]] for b in funcs}
assert {"main", "worker", "sweep"} <= names, names
labels = re.findall(r'label \{\s*key: (\d+)\s*str: (\d+)', text)
assert any(strings[int(k)] == "variable" and strings[int(v)] == "field" for k, v in labels), \
    "the blamed array is no label"
print("export.pprof: decodes; %d samples in %d stacks, %d locations, %d functions"
      % (samples, len(sample_blocks), len(locs), len(funcs)))
EOF
    # And Google's pprof itself, built from Debian's source package (its
    # Go code and vendored dependencies; a few seconds, once per tree).
    pprof=$build/test/export/pprof
    if [ ! -x "$pprof" ]; then
        mkdir -p "$build/test/export/gocache" &&
            GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE=$build/test/export/gocache \
                go build -o "$pprof" github.com/google/pprof 2>go.err ||
            fail "cannot build pprof (golang-go, golang-github-google-pprof-dev): $(head -3 go.err)"
    fi
    "$pprof" -top -sample_index=samples p.pb.gz >top.txt 2>err.txt || fail "pprof -top: $(cat err.txt)"
    grep -q "of $samples total" top.txt || fail "pprof's total is not $samples: $(head -5 top.txt)"
    grep -qE ' sweep$' top.txt || fail "pprof -top has no sweep: $(cat top.txt)"
    "$pprof" -tags p.pb.gz >tags.txt 2>err.txt || fail "pprof -tags: $(cat err.txt)"
    grep -qE '^ *variable: Total' tags.txt && grep -qE ': field$' tags.txt ||
        fail "pprof sees no variable label field: $(cat tags.txt)"
    grep -qE ': thread 1$' tags.txt && grep -qE ': thread 2$' tags.txt &&
        ! grep -q 4294967295 tags.txt || fail "pprof's thread labels: $(cat tags.txt)"
    echo "export.pprof: Google's pprof reads it: $(grep -c . top.txt) lines of -top, labels thread and variable"
    ;;
csv)
    barrier
    for view in report code "code --flat" lines; do
        # shellcheck disable=SC2086
        "$blame" $view run --format csv >t.csv || fail "$view --format csv"
        # shellcheck disable=SC2086
        "$blame" $view run --format tsv >t.tsv
        "$python" - t.csv t.tsv "$view" <<'EOF' || fail "$view: CSV and TSV differ"
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
tsv = [line.rstrip("\n").split("\t") for line in open(sys.argv[2])]
assert rows == tsv and len(rows) > 1, (rows[:3], tsv[:3])
print("export.csv: %s: %d records" % (sys.argv[3], len(rows)))
EOF
    done
    # profile and analyze: the same records as their JSON
    "$blame" profile run --format csv >p.csv || fail "profile --format csv"
    "$blame" profile run --format json >p.json || fail "profile --format json"
    "$blame" analyze run --binary ./barrier --format csv >a.csv || fail "analyze --format csv"
    "$blame" analyze run --binary ./barrier --format json >a.json || fail "analyze --format json"
    "$python" - p.csv p.json a.csv a.json <<'EOF' || fail "profile or analyze CSV"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
prof = json.load(open(sys.argv[2]))["rows"]
assert len(rows) == len(prof) > 0
for r, j in zip(rows, prof):
    assert r["name"] == j["name"] and int(r["calls"]) == j["calls"], (r, j)
    assert r["callpath"] == " <- ".join(j["callpath"]) and int(r["bytes"]) == j["bytes"]
    assert j["comp_incl_ns"] is None or abs(float(r["comp_incl_ns"]) - j["comp_incl_ns"]) < 1e-6
found = list(csv.DictReader(open(sys.argv[3], newline="")))
want = json.load(open(sys.argv[4]))["findings"]
assert [f["pattern"] for f in found] == [f["pattern"] for f in want] and found, (found, want)
assert all(f["evidence"] == w["evidence"] and int(f["line"]) == w["line"]
           for f, w in zip(found, want))
print("export.csv: profile %d rows, analyze %d findings" % (len(rows), len(found)))
EOF
    # intrusion and imbalance: the same numbers as their JSON
    "$blame" intrusion run --format csv --top 0 >i.csv || fail "intrusion --format csv"
    "$blame" intrusion run --format json --top 0 >i.json || fail "intrusion --format json"
    "$blame" imbalance run --binary ./barrier --format csv >m.csv || fail "imbalance --format csv"
    "$blame" imbalance run --binary ./barrier --format json >m.json || fail "imbalance json"
    "$python" - i.csv i.json m.csv m.json <<'EOF' || fail "intrusion or imbalance CSV"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
regions = json.load(open(sys.argv[2]))["regions"]
assert len(rows) == len(regions) > 0
for r, j in zip(rows, regions):
    assert r["name"] == j["name"] and int(r["probes"]) == j["probes"], (r, j)
    assert abs(float(r["comp_incl_ns"]) - j["comp_incl_ns"]) <= 1e-6 * max(1, j["comp_incl_ns"])
    assert (r["flagged"] == "true") == j["flagged"]
m = list(csv.DictReader(open(sys.argv[3], newline="")))
want = json.load(open(sys.argv[4]))
variables = [r for r in m if r["row"] == "variable"]
assert [r["name"] for r in variables] == [v["name"] for v in want["variables"]], (variables, want)
threads = [k for k in m[0] if k.startswith("thread_")]
for r, v in zip(variables, want["variables"]):
    assert int(r["samples"]) == v["samples"] == sum(int(r[k]) for k in threads), (r, v)
print("export.csv: intrusion %d regions, imbalance %d variables over %d threads"
      % (len(rows), len(variables), len(threads)))
EOF
    ;;
flame)
    barrier
    "$blame" flame run -o f.svg --variables --title 'barrier <&> test' || fail "flame"
    # main's box spans the samples that reach main: all of them but any in
    # start-up or the exit handlers (counted in the run, not guessed).
    "$python" - f.svg "$(jq '[.samples[] | select(.reaches_main)] | length' dump.json)" \
        "$(jq '.samples | length' dump.json)" <<'EOF' || fail "flame graph"
import sys, xml.dom.minidom
d = xml.dom.minidom.parse(sys.argv[1])
glued, total = int(sys.argv[2]), int(sys.argv[3])
titles = [t.firstChild.data for t in d.getElementsByTagName("title")]
want = "main (%d samples, %.2f%%)" % (glued, 100.0 * glued / total)
assert want in titles, (want, titles[:5])
assert any(t.startswith("variable field (") for t in titles), titles
texts = [t.firstChild.data for t in d.getElementsByTagName("text") if t.firstChild]
assert texts[0] == "barrier <&> test", texts[0]
assert len(d.getElementsByTagName("rect")) == len(titles) + 1
print("export.flame: %d boxes; %s of %d samples" % (len(titles), want, total))
EOF
    ;;
html)
    barrier profile,trace
    "$blame" html run -o r.html || fail "html"
    # self-contained: nothing fetched from elsewhere
    ! grep -Eiq '<(script|link|img|iframe)[^>]*(src|href)=|url\(|@import' r.html ||
        fail "html refers to another file: $(grep -Eio '<(script|link|img)[^>]*(src|href)=[^>]*' r.html | head -2)"
    for id in variables-table tree lines-table source heatmap analysis intrusion run; do
        grep -q "id=\"$id\"" r.html || fail "html: no #$id"
    done
    # the source listing: barrier.c whole, its sweep line shaded, with its samples
    # and the variable blamed for it
    n=$(grep -c '' "$src/test/analyze/barrier.c")
    grep -q "<td class=\"n\">$n</td>" r.html || fail "html: barrier.c is not listed whole"
    grep -Eq '<tr style="background:rgba\([^)]*\)"><td class="n">17</td><td class="n">[0-9]+</td><td class="vars">[^<]*part' r.html ||
        fail "html: line 17 without its samples or its variable: $(grep -o '<td class="n">17</td>.\{0,120\}' r.html | head -2)"
    # A source beside the build directory is named relative to their common
    # parent (src/barrier.c), which is neither the build directory nor
    # ppw-blame's: the listing still finds it (through the binary's parents).
    mkdir -p side/src side/build && cp "$src/test/analyze/barrier.c" side/src/ &&
        (cd side/build && "$build/bin/ppw-cc" -O2 ../src/barrier.c -o barrier -lpthread &&
            PPW_OUTPUT=$tmp/side/run ./barrier >/dev/null) || fail "cannot build and run side/src/barrier.c"
    (cd / && "$blame" html "$tmp/side/run" -o "$tmp/side.html") || fail "html from another directory"
    grep -q "<td class=\"n\">$n</td>" side.html || fail "html: src/barrier.c beside the build is not listed"
    chromium=$(command -v chromium || command -v chromium-browser || true)
    [ -n "$chromium" ] || skip "chromium not installed: the HTML was checked as text only"
    browser=("$chromium" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars
             --user-data-dir="$tmp/chromium")
    # a real browser loads it, the top variable is shown, the tree expands
    timeout 120 "${browser[@]}" --dump-dom "file://$tmp/r.html#selftest" >dom.html 2>chromium.err ||
        fail "chromium: $(tail -3 chromium.err)"
    # The report's first variable, which is field: every sample in sweep
    # blames it (part is bound to it), and the other variables only a part
    # of those (i, r) or samples outside sweep (t in pthread_create).
    top=$("$blame" report run --format json | jq -r '.variables[0].name')
    [ "$top" = field ] || fail "report: the first variable is $top"
    grep -q '<title>selftest expanded top=field</title>' dom.html ||
        fail "in chromium: $(grep -o '<title>[^<]*</title>' dom.html)"
    timeout 120 "${browser[@]}" --screenshot="$tmp/r.png" --window-size=1280,1600 \
        "file://$tmp/r.html" >/dev/null 2>chromium.err || fail "screenshot: $(tail -3 chromium.err)"
    [ "$(head -c 8 r.png | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "no PNG screenshot"
    [ -z "${PPW_SCREENSHOT_DIR:-}" ] || cp r.png "$PPW_SCREENSHOT_DIR/report.png"
    echo "export.html: $(wc -c <r.html) bytes; chromium: top variable field, tree expands; screenshot $(wc -c <r.png) bytes"
    ;;
otf2)
    command -v otf2-print >/dev/null || skip "otf2-print not installed (otf2-tools)"
    command -v mpirun >/dev/null && command -v mpicc >/dev/null || skip "no MPI"
    mpirun=(mpirun --oversubscribe -np 4)
    [ "$(id -u)" -ne 0 ] || mpirun+=(--allow-run-as-root)
    # mpi_job NAME SOURCE [VAR=VALUE...]: SOURCE built with ppw-cc, run traced on 4 ranks
    mpi_job() {
        local name=$1 source=$2
        shift 2
        OMPI_CC=$build/bin/ppw-cc mpicc -O2 "$source" -o "$name" 2>cc.err ||
            fail "cannot build $source: $(cat cc.err)"
        mkdir "$name.job"
        (cd "$name.job" && env PPW_MODE=profile,trace "$@" timeout 120 "${mpirun[@]}" -x PPW_MODE \
            "../$name" >out.txt 2>err.txt) || fail "mpirun $name: $(head -3 "$name.job/err.txt")"
    }
    mpi_job ring "$src/test/runtime/programs/mpi_ring.c"
    ring=(ring.job/ppw-*)
    "$blame" export "${ring[0]}" --to otf2 -o ring.otf2 2>err.txt
    status=$?
    ! grep -q 'built without OTF2' err.txt || skip "ppw-blame was built without OTF2"
    [ $status = 0 ] || fail "export the ring --to otf2: $(cat err.txt)"
    # Open MPI's default one-sided component (osc/rdma) crashes in MPI_Compare_and_swap here
    mpi_job rma "$src/test/runtime/programs/mpi_rma.c" OMPI_MCA_osc='^rdma'
    rma=(rma.job/ppw-*)
    "$blame" export "${rma[0]}" --to otf2 -o rma.otf2 || fail "export mpi_rma --to otf2"
    jobs=(ring rma)
    # OpenSHMEM's heat solver on 4 PEs (its library crashes in shmem_finalize
    # here, with or without ppw: e2e.shmem_events), its heap one RMA window
    if command -v oshrun >/dev/null && command -v oshcc >/dev/null; then
        OSHMEM_CC=$build/bin/ppw-cc oshcc -O2 "$src/test/e2e/shmem_heat.c" -o shmem 2>cc.err ||
            fail "cannot build shmem_heat.c: $(cat cc.err)"
        mkdir shmem.job
        oshrun=(oshrun --oversubscribe -np 4)
        [ "$(id -u)" -ne 0 ] || oshrun+=(--allow-run-as-root)
        (cd shmem.job && PPW_MODE=profile,trace PPW_OUTPUT=ppw-shmem timeout 120 "${oshrun[@]}" \
            ../shmem good 20 256 8 >out.txt 2>err.txt)
        status=$?
        [ $status = 0 ] || [ $status = 139 ] || fail "oshrun shmem: $status: $(head -3 shmem.job/err.txt)"
        "$blame" export shmem.job/ppw-shmem --to otf2 -o shmem.otf2 || fail "export shmem --to otf2"
        jobs+=(shmem)
    else
        echo "export.otf2: no oshrun: the OpenSHMEM part left out"
    fi
    for job in "${jobs[@]}"; do
        dir=("$job".job/ppw-*)
        otf2-print -Werror --silent "$job.otf2/traces.otf2" >/dev/null 2>err.txt ||
            fail "otf2-print -Werror $job: $(head -5 err.txt)"
        [ ! -s err.txt ] || fail "otf2-print $job says: $(head -5 err.txt)"
        otf2-print "$job.otf2/traces.otf2" >"$job.print" 2>err.txt || fail "otf2-print $job"
        for r in "${dir[0]}"/r*; do
            rank=${r##*/r}
            "$blame" dump "$r" --what trace --format json >"$job.dump.${rank%%-*}.json" ||
                fail "dump $r"
        done
        "$python" - "$job" <<'EOF' || fail "OTF2 trace of $job against its dumps"
import collections, glob, json, re, sys
job = sys.argv[1]
# the records START and END events of each tag become (docs/ppw-blame.md, "otf2")
mpi = lambda *tags: ["GASP_MPI_" + t for t in tags]
shmem = lambda *tags: ["GASP_SHMEM_" + t for t in tags]
at_start = {"MPI_SEND": mpi("SEND", "ISEND", "SENDRECV"),
            "MPI_COLLECTIVE_BEGIN": mpi("BARRIER", "BCAST", "REDUCE", "ALLREDUCE", "GATHER",
                                        "ALLGATHER", "SCATTER", "ALLTOALL"),
            "RMA_PUT": mpi("PUT", "RPUT", "ACCUMULATE", "RACCUMULATE") + shmem("PUT", "P", "PUT_NBI"),
            "RMA_GET": mpi("GET", "RGET") + shmem("GET", "G", "GET_NBI"),
            "RMA_ATOMIC": mpi("GET_ACCUMULATE", "RGET_ACCUMULATE", "FETCH_AND_OP",
                              "COMPARE_AND_SWAP") + shmem("ATOMIC")}
at_end = {"MPI_RECV": mpi("RECV", "SENDRECV"),
          "MPI_COLLECTIVE_END": at_start["MPI_COLLECTIVE_BEGIN"],
          "RMA_WIN_CREATE": mpi("WIN_CREATE", "WIN_ALLOCATE"), "RMA_WIN_DESTROY": mpi("WIN_FREE")}
if job == "shmem":
    # (MPI's windows and fences make RMA collectives too; they are not counted)
    at_start["RMA_COLLECTIVE_BEGIN"] = at_end["RMA_COLLECTIVE_END"] = shmem("BARRIER")
    # every transfer completes: the program's last barrier follows them all
    at_start["RMA_OP_COMPLETE_BLOCKING"] = (at_start["RMA_PUT"] + at_start["RMA_GET"]
                                            + at_start["RMA_ATOMIC"])
want = collections.defaultdict(collections.Counter)
sends = 0
for path in glob.glob(job + ".dump.*.json"):
    rank = int(path.split(".")[-2])
    for e in json.load(open(path))["trace"]:
        loc = (rank, e["thread"])
        tag = e["tag_name"] or ""
        if e["event"] == "start":
            want[loc]["ENTER"] += 1
            for record, tags in at_start.items():
                want[loc][record] += tag in tags
            sends += tag in at_start["MPI_SEND"]
        elif e["event"] == "end":
            want[loc]["LEAVE"] += 1
            for record, tags in at_end.items():
                want[loc][record] += tag in tags
got = collections.defaultdict(collections.Counter)
messages = collections.Counter()
for line in open(job + ".print"):
    f = line.split()
    if len(f) < 3 or not f[1].isdigit() or not f[2].isdigit():
        continue
    loc = int(f[1])
    loc = (loc & 0xffffffff, loc >> 32)  # location id: thread << 32 | rank
    got[loc][f[0]] += 1
    m = re.search(r"(Receiver|Sender): (\d+) .*Tag: (\d+)", line)
    if f[0] == "MPI_SEND" and m:
        messages[(loc[0], int(m.group(2)), int(m.group(3)))] += 1
    elif f[0] == "MPI_RECV" and m:
        messages[(int(m.group(2)), loc[0], int(m.group(3)))] -= 1
kinds = ["ENTER", "LEAVE"] + list(at_start) + list(at_end)
for loc in sorted(set(want) | set(got)):
    w = [want[loc][k] for k in kinds]
    g = [got[loc][k] for k in kinds]
    assert w == g, "rank %d thread %d: %s\n  dump %s\n  otf2 %s" % (loc + (kinds, w, g))
assert not +messages and not -messages, "sends and receives differ: %s" % messages
matched = sum(c["MPI_SEND"] for c in got.values())
assert matched == sends, "%d MPI_SEND records, %d sends in the dumps" % (matched, sends)
total = collections.Counter()
for c in got.values():
    total.update(c)
print("export.otf2: %s: %d locations, %s" % (job, len(got),
      ", ".join("%s %d" % (k, total[k]) for k in kinds if total[k])))
if job in ("rma", "shmem"):
    for r in {loc[0] for loc in want}:
        for k in (["RMA_PUT", "RMA_GET", "RMA_WIN_CREATE", "RMA_WIN_DESTROY"] if job == "rma" else
                  ["RMA_PUT", "RMA_GET", "RMA_ATOMIC", "RMA_OP_COMPLETE_BLOCKING",
                   "RMA_COLLECTIVE_BEGIN"]):
            assert sum(c[k] for l, c in got.items() if l[0] == r), "rank %d has no %s" % (r, k)
else:
    assert matched > 0, "the ring sent nothing"
EOF
    done
    # bad output directories and an untraced run: one error line each, nothing left
    expect 2 'give it with -o DIR' export "${ring[0]}" --to otf2
    expect 2 'no --folded, --top, --thread or --rank' export "${ring[0]}" --to otf2 --rank 1 -o r1
    expect 1 'cannot write /nonexistent/dir' export "${ring[0]}" --to otf2 -o /nonexistent/dir
    expect 1 'already holds a trace' export "${ring[0]}" --to otf2 -o ring.otf2
    touch plain
    expect 1 'cannot write plain: not a directory' export "${ring[0]}" --to otf2 -o plain
    mkdir untraced
    (cd untraced && PPW_MODE=profile timeout 120 "${mpirun[@]}" -x PPW_MODE ../ring >out.txt \
        2>err.txt) || fail "mpirun ring untraced"
    untraced=(untraced/ppw-*)
    expect 1 'PPW_MODE=profile,trace' export "${untraced[0]}" --to otf2 -o u.otf2
    [ ! -e u.otf2 ] || fail "an untraced run left u.otf2"
    echo "export.otf2: ok"
    ;;
errors)
    barrier
    expect 2 'required' export run
    expect 2 "unknown format 'svg'" export run --to svg
    expect 2 'no-locations' export run --to speedscope --no-locations
    expect 2 'pprof always labels' export run --to pprof --variables
    expect 2 'needs a job directory' export run --to chrome --rank 1
    expect 1 'cannot write /nonexistent/dir/x.folded' export run --to folded -o /nonexistent/dir/x.folded
    [ ! -e /nonexistent/dir/x.folded ] || fail "a file was left"
    expect 1 'PPW_MODE=profile,trace' export run --to chrome -o t.json
    [ ! -e t.json ] || fail "an untraced run left a half-written t.json"
    expect 2 'required' flame run
    expect 1 'cannot write /nonexistent/f.svg' flame run -o /nonexistent/f.svg
    expect 2 'required' html run
    expect 1 'cannot write /nonexistent/r.html' html run -o /nonexistent/r.html
    echo "export.errors: ok"
    ;;
*) echo "unknown case $case_name" >&2; exit 2 ;;
esac
