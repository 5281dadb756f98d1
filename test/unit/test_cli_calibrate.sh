#!/bin/sh
# `ppw-blame calibrate`: the file it writes reads back through
# ppw_baseline_load with every value positive and finite (test_baseline
# --read), its JSON and text, MPI measured when the helper and mpirun exist
# (else said why not), the default path's rules, and errors: an unwritable
# or directory -o (status 1, one line), bad options (status 2).  Never
# checks a time beyond "positive and finite".
#
# usage: test_cli_calibrate.sh PPW_BLAME TEST_BASELINE WORKDIR JQ
# Exits 77 (ctest SKIP) when jq is missing.
set -u
PPW_BLAME=$1 READER=$2 W=$3 JQ=${4:-jq}
. "$(dirname "$0")/cli_helpers.sh"

command -v "$JQ" >/dev/null 2>&1 || { echo "SKIP: jq not found"; exit 77; }
rm -rf "$W" && mkdir -p "$W" && cd "$W" || exit 1
unset PPW_BASELINE PPW_CALIBRATE_MPI

# ---- without MPI: JSON, and the file read back ----
expect_status 0 "$PPW_BLAME" calibrate -o b1 --no-mpi --format json
check keys 'keys_unsorted == ["file", "format", "host", "measured_at", "barrier2_ns",
    "barrier_all_ns", "barrier_all_threads", "lock_ns", "lock_handoff_ns", "cond_roundtrip_ns",
    "mpi_latency_ns", "mpi_ns_per_byte", "mpi_fence_ns", "mpi_rma_ns", "mpi_skipped"]'
check values '.file == "b1" and .format == "1.1" and (.host | length) > 0 and .measured_at > 0
    and .barrier2_ns > 0 and .barrier_all_ns > 0 and .barrier_all_threads >= 2
    and .lock_ns > 0 and .lock_handoff_ns > 0 and .cond_roundtrip_ns > 0
    and .mpi_latency_ns == null and .mpi_ns_per_byte == null and .mpi_fence_ns == null
    and .mpi_rma_ns == null and .mpi_skipped == "--no-mpi"'
"$READER" --read b1 >read.txt 2>&1 || fail "the baseline does not read back: $(cat read.txt)"
grep -q '^mpi no$' read.txt || fail "no MPI keys expected: $(cat read.txt)"
[ "$(head -1 b1)" = "ppw-baseline 1.1" ] || fail "first line: $(head -1 b1)"
ls b1.tmp.* >/dev/null 2>&1 && fail "a temporary file was left behind"
ok no_mpi

# ---- with MPI when the helper and mpirun are there; text ----
helper=$(dirname "$PPW_BLAME")/../lib/ppw/ppw-calibrate-mpi
expect_status 0 "$PPW_BLAME" calibrate -o sub/dir/b2 --format json
"$READER" --read sub/dir/b2 >read.txt 2>&1 || fail "b2 does not read back: $(cat read.txt)"
if [ -x "$helper" ] && command -v mpirun >/dev/null 2>&1; then
    # the one-sided costs are measured with the rest (null only when the
    # helper's MPI cannot make a window)
    check mpi '.mpi_latency_ns > 0 and .mpi_ns_per_byte >= 0 and .mpi_skipped == null
        and .mpi_fence_ns > 0 and .mpi_rma_ns > 0'
    grep -q '^mpi yes$' read.txt || fail "MPI keys expected: $(cat read.txt)"
else
    check no_mpi '.mpi_latency_ns == null and (.mpi_skipped | length) > 0'
    echo "note: MPI not measured: $("$JQ" -r .mpi_skipped out.txt)"
fi
expect_status 0 env PPW_CALIBRATE_MPI=/nonexistent/helper "$PPW_BLAME" calibrate -o b3
grep -q '^baseline of .* written to b3$' out.txt || fail "text title: $(head -1 out.txt)"
grep -q '^  barrier, 2 threads  *[0-9.]* us per episode$' out.txt || fail "text barrier"
grep -q '^  mutex hand-off to a waiter  *[0-9.]* us$' out.txt || fail "text hand-off"
grep -q '^  MPI: not measured: no MPI helper (/nonexistent/helper)$' out.txt ||
    fail "text MPI skipped: $(cat out.txt)"
ok mpi

# ---- the default path ----
mkdir -p home
expect_status 0 env -u XDG_CACHE_HOME HOME="$PWD/home" "$PPW_BLAME" calibrate --no-mpi
ls home/.cache/ppw/baseline-* >/dev/null 2>&1 || fail "no baseline under HOME/.cache/ppw"
expect_status 0 env PPW_BASELINE="$PWD/env-baseline" "$PPW_BLAME" calibrate --no-mpi --format json
check env '.file | endswith("/env-baseline")'
[ -f env-baseline ] || fail "PPW_BASELINE not used"
ok default_path

# ---- errors ----
echo x >plainfile
expect_status 1 "$PPW_BLAME" calibrate -o plainfile/sub/baseline --no-mpi
one_error_line "plainfile/sub/baseline: cannot create the directory plainfile/sub: Not a directory$"
[ ! -s out.txt ] || fail "output before the error: $(cat out.txt)"
expect_status 1 "$PPW_BLAME" calibrate -o sub --no-mpi
one_error_line "sub: is a directory"
for bad in "-o" "--format xml" "extra" "--frobnicate"; do
    # shellcheck disable=SC2086
    expect_status 2 "$PPW_BLAME" calibrate $bad
    [ "$(wc -l <err.txt)" -eq 1 ] || fail "'$bad': $(cat err.txt)"
done
expect_status 0 "$PPW_BLAME" calibrate --help
grep -q '^usage: ppw-blame calibrate' out.txt || fail "--help"
ok errors

[ "$failures" -eq 0 ] && echo "PASS" || { echo "$failures failure(s)"; exit 1; }
