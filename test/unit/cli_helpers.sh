# Helpers the ppw-blame CLI tests source: failure counting and running a
# command with its expected exit status (output in out.txt and err.txt).
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
