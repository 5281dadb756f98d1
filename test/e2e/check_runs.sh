#!/bin/sh
# Several runs summed (ctest e2e.runs_summed): imbalance_threads.c (main
# and one pthread, each updating its own array) built with ppw-cc and run
# twice with different work, A and B.  Every view of "A B" must be the sum
# of the views of A and of B: report's variables, code's functions, lines'
# lines, imbalance's per-thread counts, --thread 1 (thread 1 of every run),
# the folded export's counts.  Then two jobs made of those runs
# (make_job.py), summed rank by rank.  Then the refusals: a run of another
# program (exit 1, both executables and build-ids named), a run of another
# build of the same program (exit 1, both build-ids; --force sums it with a
# warning), a file, a run mixed with a job, --rank on runs, and the commands
# that read one directory.
#
# All numbers are compared between outputs of the same runs, so they are
# exact whatever the sampling gave (docs/testing.md, the tolerance rule);
# a run without samples in both threads is repeated with 4 times the work,
# then the test is skipped (a view of nothing would compare nothing).
#
# usage: check_runs.sh BUILD_DIR SOURCE_DIR WORKDIR [JQ]
set -u
BUILD=$1 SRC=$2 W=$3 JQ=${4:-jq}
PPW_BLAME=$BUILD/bin/ppw-blame PPW_CC=$BUILD/bin/ppw-cc
. "$SRC/test/unit/cli_helpers.sh"

command -v "$JQ" >/dev/null 2>&1 || { echo "SKIP: jq not found"; exit 77; }
# An ASan-built plugin cannot load into clang, which is not ASan-built.
if nm -D --undefined-only "$BUILD/lib/ppw.so" | grep -q __asan_; then
    echo "SKIP: the plugin is ASan-built"
    exit 77
fi
rm -rf "$W" && mkdir -p "$W/alt" && cd "$W" || exit 1

"$PPW_CC" -O2 "$SRC/test/e2e/imbalance_threads.c" -o prog -lpthread || exit 1
"$PPW_CC" -O0 "$SRC/test/e2e/imbalance_threads.c" -o alt/prog -lpthread || exit 1 # another build
"$PPW_CC" -O0 "$SRC/test/blame/run_prog.c" -o other || exit 1                     # another program

# Each run: 30,000 and 60,000 sweeps of 4,096 elements by main, as many
# by thread 1 (about 0.1 and 0.2 s of CPU per thread here).
reps=30000
while :; do
    rm -rf a b
    PPW_OUTPUT=a ./prog 1 $reps >/dev/null && PPW_OUTPUT=b ./prog 1 $((reps * 2)) >/dev/null ||
        { fail "imbalance_threads.c failed"; break; }
    got=$(for run in a b; do for t in 0 1; do
        "$PPW_BLAME" report $run --thread $t --format json 2>/dev/null | "$JQ" -r '.total_samples // 0'
    done; done | tr '\n' ' ')
    echo "samples of threads 0 and 1 in A and B, $reps sweeps: $got"
    case " $got " in *" 0 "*) ;; *) break ;; esac
    [ $reps -eq 30000 ] || { echo "SKIP: samples of threads 0 and 1 in A and B: $got"; exit 77; }
    reps=$((reps * 4))
done
(cd alt && PPW_OUTPUT=../c ./prog 1 500 >/dev/null) || fail "the other build failed"
PPW_OUTPUT=o ./other 50 >/dev/null || fail "run_prog.c failed"

# json NAME ARGS...: the JSON of 'ppw-blame ARGS --format json' in NAME.json
json() {
    name=$1
    shift
    "$PPW_BLAME" "$@" --format json >"$name.json" 2>err.txt || fail "$*: $(cat err.txt)"
}

# sums NAME SUM A B FILTER: FILTER maps a view's JSON to [[key, numbers...]]
# (rows with one key add up); in SUM every key's numbers must be A's plus
# B's (a key missing counts 0).
sums() {
    "$JQ" -e -n --slurpfile s "$2.json" --slurpfile a "$3.json" --slurpfile b "$4.json" "
        def rows: $5;
        def table(f): reduce (f | rows[]) as \$r ({}; (\$r[0] | tojson) as \$k
            | .[\$k] = [range(\$r | length - 1) as \$i | ((.[\$k] // [])[\$i] // 0) + \$r[\$i + 1]]);
        (\$s[0] | table(.)) as \$sum | (\$a[0] | table(.)) as \$x | (\$b[0] | table(.)) as \$y
        | (\$sum | keys) == ((\$x + \$y) | keys)
          and all(\$sum | keys[]; . as \$k | \$sum[\$k] ==
                  [range(\$sum[\$k] | length) as \$i | (\$x[\$k][\$i] // 0) + (\$y[\$k][\$i] // 0)])
    " >/dev/null || fail "$1: $2 is not $3 + $4"
}

# ---- runs ----
json a report a --top 0
json b report b --top 0
json ab report a b --top 0
# check_file FILE WHAT FILTER [JQ ARGS]: FILTER must be true on FILE
check_file() {
    file=$1 what=$2 filter=$3
    shift 3
    "$JQ" -e "$@" "$filter" "$file" >/dev/null || fail "$what: $(head -c 600 "$file")"
}
check_file ab.json "report a b: total, runs" '.total_samples == $x + $y and .runs == 2 and
    .run_dirs == ["a", "b"]' --argjson x "$("$JQ" .total_samples a.json)" \
    --argjson y "$("$JQ" .total_samples b.json)"
# samples and exclusive samples per variable (exclusive is a share of the total)
sums report ab a b '[.total_samples as $n | .variables[] | [[.function, .name, .kind, .decl],
    .samples, (.exclusive * $n / 100 | round)]]'
json code_a code a --flat --top 0
json code_b code b --flat --top 0
json code_ab code a b --flat --top 0
sums code code_ab code_a code_b '[.functions[] | [.function, .samples, .self_samples]]'
json lines_a lines a --top 0
json lines_b lines b --top 0
json lines_ab lines a b --top 0
sums lines lines_ab lines_a lines_b '[.lines[] | [[.file, .line, .function], .samples, .self_samples]]'
json imb_a imbalance a --top 0
json imb_b imbalance b --top 0
json imb_ab imbalance a b --top 0
check_file imb_ab.json "imbalance a b: threads" '.threads == [0, 1] and .group == "thread"'
sums imbalance imb_ab imb_a imb_b '[.threads as $t | (.variables[] | [.function, .name] as $v
    | range($t | length) as $i | [$v + [$t[$i]], .per_thread[$i]]),
    (range($t | length) as $i | [["thread", $t[$i]], .thread_samples[$i]])]'
json t1_a report a --thread 1 --top 0
json t1_b report b --thread 1 --top 0
json t1_ab report a b --thread 1 --top 0
check_file t1_ab.json "--thread 1 on two runs" '.thread == 1'
sums "--thread 1" t1_ab t1_a t1_b '[.total_samples as $n | ["total", $n], (.variables[] |
    [[.function, .name, .kind], .samples])]'
expect_status 0 "$PPW_BLAME" report a b
grep -q '^report: [0-9]* samples (metric: [a-z-]*) from a + b, binary prog$' out.txt &&
    grep -q '^runs: 2, their samples summed$' out.txt || fail "report a b title: $(head -3 out.txt)"
expect_status 0 "$PPW_BLAME" export a b --to folded
[ "$(awk '!/^#/ { n += $NF } END { print n }' out.txt)" = "$("$JQ" .total_samples ab.json)" ] ||
    fail "export a b: the counts do not add up to $("$JQ" .total_samples ab.json)"
expect_status 0 "$PPW_BLAME" export a b --to speedscope
check "export a b --to speedscope" '[.profiles[].weights | add] | add > 0'
expect_status 0 "$PPW_BLAME" flame a b -o ab.svg
# html: the summed report, then each run's analysis and intrusion under its name
expect_status 0 "$PPW_BLAME" html a b -o ab.html
[ "$(grep -c '<h3><code>a</code></h3>' ab.html)" = 2 ] && [ "$(grep -c '<h3><code>b</code></h3>' ab.html)" = 2 ] &&
    grep -q '<dt>runs</dt><dd>2, their samples summed: <code>a</code> <code>b</code></dd>' ab.html ||
    fail "html a b: runs and their sections"
ok runs

# ---- jobs: rank R of every job is one rank R ----
if command -v python3 >/dev/null 2>&1; then
    python3 "$SRC/test/e2e/make_job.py" j1 3 a b 1 && python3 "$SRC/test/e2e/make_job.py" j2 3 b a 2 ||
        fail "make_job.py"
    json j1 report j1 --top 0
    json j2 report j2 --top 0
    json j12 report j1 j2 --top 0
    check_file j12.json "report j1 j2: ranks" '.ranks_read == 3 and .job_size == 3 and .runs == 2'
    sums "report (jobs)" j12 j1 j2 '[.total_samples as $n | ["total", $n], (.variables[] |
        [[.function, .name, .kind], .samples])]'
    json r1_j1 report j1 --rank 1 --top 0
    json r1_j2 report j2 --rank 1 --top 0
    json r1_j12 report j1 j2 --rank 1 --top 0
    sums "--rank 1 (jobs)" r1_j12 r1_j1 r1_j2 '[["total", .total_samples], (.variables[] |
        [[.function, .name, .kind], .samples])]'
    json ij1 imbalance j1 --top 0
    json ij2 imbalance j2 --top 0
    json ij12 imbalance j1 j2 --top 0
    sums "imbalance (jobs)" ij12 ij1 ij2 '[.ranks as $r | range($r | length) as $i |
        [["rank", $r[$i]], .rank_samples[$i]]]'
    expect_status 0 "$PPW_BLAME" report j1 j2
    grep -q '^runs: 2, their samples summed$' out.txt && grep -q '^job: 3 of 3 ranks read$' out.txt ||
        fail "report j1 j2 title: $(head -4 out.txt)"
    expect_status 2 "$PPW_BLAME" report a j1
    one_error_line "a is a run directory and j1 a job directory: sum runs with runs, jobs with jobs$"
    ok jobs
else
    echo "SKIP jobs: no python3 for make_job.py"
fi

# ---- refusals ----
id() { "$JQ" -r .build_id "$1" 2>/dev/null; }
"$PPW_BLAME" dump a --what run --format json >a_dump.json 2>/dev/null
"$PPW_BLAME" dump o --what run --format json >o_dump.json 2>/dev/null
"$PPW_BLAME" dump c --what run --format json >c_dump.json 2>/dev/null
expect_status 1 "$PPW_BLAME" report a o
one_error_line "runs of different executables: a ran $W/prog (build-id $(id a_dump.json)), o ran $W/other (build-id $(id o_dump.json))$"
expect_status 1 "$PPW_BLAME" code a b o --force
one_error_line "runs of different executables: a ran .*/prog (build-id [0-9a-f]*), o ran .*/other"
expect_status 1 "$PPW_BLAME" report a c
one_error_line "runs from different builds: a has build-id $(id a_dump.json), c has $(id c_dump.json) (--force sums them anyway)$"
expect_status 0 "$PPW_BLAME" report a c --force --format json
json c report c --top 0
check_file out.txt "report a c --force: total" '.total_samples == $x + $y' \
    --argjson x "$("$JQ" .total_samples a.json)" --argjson y "$("$JQ" .total_samples c.json)"
expect_status 0 "$PPW_BLAME" report a c --force
grep -q '^warning: the runs come from different builds (--force)$' out.txt ||
    fail "report a c --force: no warning: $(head -4 out.txt)"
expect_status 1 "$PPW_BLAME" report a prog
one_error_line "prog: not a directory (give run or job directories to sum)$"
expect_status 2 "$PPW_BLAME" report a b ./a
one_error_line "a and ./a are the same directory$"
expect_status 1 "$PPW_BLAME" lines a no-such-run
one_error_line "no-such-run: No such file or directory$"
expect_status 2 "$PPW_BLAME" report a b --rank 0
one_error_line "a: --rank needs job directories (of MPI runs)$"
expect_status 2 "$PPW_BLAME" report a b --folded x.folded --binary prog
one_error_line "report: give a run directory or --folded FILE, not both$"
expect_status 2 "$PPW_BLAME" dump a b
one_error_line "dump: unexpected argument 'b' (dump reads one directory)$"
expect_status 2 "$PPW_BLAME" export a b --to chrome
one_error_line "export: --to chrome reads one run or job directory, not 2$"
ok refusals

# A binary rebuilt in place after its run (issue 18: --force then said
# "build with ppw-cc, which adds -g" of a ppw-cc build).  A copy of the
# build that ran, given with --binary, reads the run exactly as before the
# rebuild; --force with the rebuilt binary says precisely what differs:
# both build-ids, and the code's extent against the run's.
mkdir rebuilt && cp prog rebuilt/prog && cp prog rebuilt/prog.keep
(cd rebuilt && PPW_OUTPUT=../r ./prog 1 $reps >/dev/null) || fail "the run before the rebuild failed"
json before report r
"$PPW_CC" -O1 "$SRC/test/e2e/imbalance_threads.c" -o rebuilt/prog -lpthread || exit 1
expect_status 1 "$PPW_BLAME" report r
one_error_line ".*rebuilt/prog: from another build: its build-id is [0-9a-f]*, the run's (r) is $(id a_dump.json) (--force uses it anyway)$"
expect_status 1 "$PPW_BLAME" report r --force
one_error_line ".*rebuilt/prog: the run's executable was rebuilt since the run (build-id [0-9a-f]*, the run's $(id a_dump.json)): its code and data .*span 0x[0-9a-f]*-0x[0-9a-f]* .*keep a copy of it (--binary COPY), or run the new build again$"
json after report r --binary rebuilt/prog.keep
[ "$("$JQ" -S 'del(.metric)' before.json)" = "$("$JQ" -S 'del(.metric)' after.json)" ] ||
    fail "report r --binary COPY differs from the report before the rebuild"
ok rebuilt

[ "$failures" -eq 0 ] && echo "PASS" || { echo "$failures failure(s)"; exit 1; }
