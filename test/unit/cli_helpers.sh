# Helpers the ppw-blame CLI tests source: failure counting, running a
# command with its expected exit status (output in out.txt and err.txt),
# and checks of that output.
failures=0
fail() { echo "  FAIL: $*" >&2; failures=$((failures + 1)); }
ok() { echo "OK $1"; }

# expect_status WANT COMMAND... : runs COMMAND, output to out.txt/err.txt
expect_status() {
    want=$1; shift
    "$@" >out.txt 2>err.txt
    got=$?
    [ "$got" -eq "$want" ] || fail "'$*' exited $got, expected $want: $(cat err.txt)"
}

# check NAME FILTER: the jq filter ($JQ, default jq) must be true on out.txt
check() {
    "${JQ:-jq}" -e "$2" out.txt >/dev/null || fail "json check $1: $(head -c 600 out.txt)"
}

# one_error_line PATTERN: err.txt is exactly one "ppw-blame: error:" line matching PATTERN
one_error_line() {
    [ "$(wc -l <err.txt)" -eq 1 ] && grep -q "^ppw-blame: error: $1" err.txt \
        || fail "expected one error line like '$1', got: $(cat err.txt)"
}

# The sampling-tolerance helpers (sampled) for the scripts that name the
# source tree in SRC.
if [ -n "${SRC:-}" ]; then
    SAMPLING_LIB=$SRC/test/lib
    . "$SAMPLING_LIB/sampling.sh"
fi
