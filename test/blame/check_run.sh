#!/bin/sh
# ppw-blame report, code and lines on a real run directory: a program built
# with ppw-cc runs under libppw, and its samples are glued, symbolized and
# attributed.  Also the default command and directory, a binary of another
# build (refused with both build-ids, unless --force), a build without -g,
# a truncated profile and a missing run directory.
#
# usage: check_run.sh BUILD_DIR SOURCE_DIR WORKDIR [JQ]
# Exits 77 (ctest SKIP) when jq is missing or the run took no sample.
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
PPW_OUTPUT=ppw-prog-1 ./prog >/dev/null || fail "the program failed"
PPW_OUTPUT=nodebug-run ./nodebug >/dev/null || fail "the -g0 program failed"

# ---- report on the run ----
expect_status 0 "$PPW_BLAME" report ppw-prog-1 --format json --top 0
if ! "$JQ" -e '.total_samples >= 20' out.txt >/dev/null; then
    echo "SKIP: the run took too few samples: $(head -c 200 out.txt)"
    exit 77
fi
check report '(.metric.unit == "s") and (.metric.total > 0)
    and (.variables[0].samples <= .total_samples)
    and (.variables[] | select(.function == "main" and .name == "g")
         | .inclusive > 80 and .context == "main" and (.decl | endswith("run_prog.c:21")))
    and (.variables[] | select(.function == "main" and .name == "g.cells") | .inclusive > 80)
    and (.variables[] | select(.function == "relax" and .name == "g")
         | .kind == "parameter" and .context == "main > relax")'
expect_status 0 "$PPW_BLAME" code ppw-prog-1 --format json
check code '.tree[0].function == "main" and .tree[0].inclusive > 95
    and (.tree[0].children[0] | .function == "relax" and .call_line == 24 and .inclusive > 80)'
expect_status 0 "$PPW_BLAME" lines ppw-prog-1 --format json
check lines '.lines[0] | .function == "relax" and (.line == 14 or .line == 15)
    and (.file | endswith("run_prog.c"))'
expect_status 0 "$PPW_BLAME" report ppw-prog-1
grep -q "^report: [0-9]* samples (metric: [a-z-]*) from ppw-prog-1, binary prog$" out.txt ||
    fail "report title: $(head -1 out.txt)"
awk 'length($0) > 100 { exit 1 }' out.txt || fail "report text wider than 100 columns"
ok run

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
