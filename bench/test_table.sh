#!/bin/bash
# bench.table: bench/run's table from result lines (bench/run --table),
# on made-up results: rows in the catalogue's order whatever the input
# order, their labels, units, baselines and statistics, {key} fields filled
# in, repeated figures left out, unknown benchmarks kept by name, numbers
# grouped, missing rows named, a figure not measured shown with its reason,
# and a malformed line an error.  No benchmark
# runs here.
set -uo pipefail
run=$(cd "$(dirname "$0")" && pwd)/run
fail() { echo "FAIL: $*" >&2; exit 1; }

input=$(mktemp) out=$(mktemp) err=$(mktemp)
trap 'rm -f "$input" "$out" "$err"' EXIT
cat >"$input" <<'EOF'
  progress lines and details are not results
bench=compile metric=overhead value=1.057 n=3
bench=rt-sampling metric=overhead value=1.075 n=3 plain_s=1.676 ppw_s=1.801
bench=blame-10M-100k metric=seconds value=2.86 n=3
bench=blame-10M-100k metric=samples_per_s value=3496503 n=3
bench=compensation-error metric=ratio value=0.0200 n=5 work=640 min=0.0100
bench=thread-memory metric=kib_per_thread value=333 n=1 threads=64
bench=made-up metric=widgets value=7 n=2
bench=regions-perf metric=overhead value=- n=3 threads=2 regions=100 reason=perf-not-installed
EOF
"$run" --table "$input" >"$out" 2>"$err" || fail "--table exited $?: $(cat "$err")"

row() { # row N: the Nth row of the table (after the header; the rule is "|---")
    grep '^| ' "$out" | sed -n "$(($1 + 1))p"
}
expect_row() { # expect_row N TEXT
    [ "$(row "$1")" = "$2" ] || fail "row $1 is '$(row "$1")', expected '$2'"$'\n'"$(cat "$out")"
}
[ "$(head -1 "$out")" = "| what | value | unit | relative to | runs |" ] ||
    fail "header: $(head -1 "$out")"
expect_row 1 "| runtime: sampling only (ppw-cc --no-inst), compute kernel | 1.075 | x | same program, clang -O2 -g | min of 3 |"
expect_row 3 "| compile time with the plugin, 21.6k-line C file, -g -O2 | 1.057 | x | clang-19 -g -O2 without it (CPU time) | median of 3 |"
expect_row 4 "| ppw-blame report throughput, 10M samples, 100k unique stacks | 3,496,503 | samples/s | absolute (CPU time) | min of 3 |"
expect_row 5 "| memory per sampled thread, 64 threads alive | 333 | KiB RSS | same program, clang -O2 -g | 1 |"
expect_row 6 "| compensation error, abs(T_comp - T_plain) / T_plain, 640 iterations per call | 0.0200 | fraction | T_plain of the same program | median of 5 |"
expect_row 2 "| short parallel regions, 2 threads: perf record -g, 1 ms task clock (the program's CPU) (not measured: perf-not-installed) | - | x | same program, clang -O2 -g -fopenmp |  |"
expect_row 7 "| made-up widgets | 7 | widgets |  | 2 |"
[ "$(grep -c "^| " "$out")" -eq 8 ] || fail "expected 7 rows (seconds left out):"$'\n'"$(cat "$out")"
grep -q '^not measured:.* rt-default overhead' "$out" || fail "rt-default not listed as missing"
grep -q '^not measured:.* blame-1M seconds' "$out" && fail "a left-out row is listed as missing"

# A result line without a value is an error, on stdin too.
printf 'bench=x metric=y n=1\n' | "$run" --table - >"$out" 2>"$err" && fail "malformed line accepted"
grep -q 'malformed result line: bench=x metric=y n=1' "$err" || fail "message: $(cat "$err")"
"$run" --table >/dev/null 2>&1 && fail "--table without FILE accepted"
"$run" 0 >/dev/null 2>&1 && fail "N=0 accepted"
echo "bench.table: ok"
