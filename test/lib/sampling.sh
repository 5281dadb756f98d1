# The sampling-tolerance rule of docs/testing.md for the tests' shell
# scripts (sh and bash), beside sampling.jq: source it with SAMPLING_LIB set
# to this folder; the caller defines fail().
#
# sampled NAME FILE FILTER [JQ ARGS]: a checked number, printed whether or
# not it holds.  FILTER runs on FILE with sampling.jq included and gives
# {n, observed, op, threshold, from}: op ">=" or "<=", or "==" for numbers
# that must agree to rounding; n the samples, from the derivation.  The
# line printed starts with SAMPLED_PREFIX (default two spaces).  (Its
# variables are prefixed: sh has no locals.)
sampled() {
    sampled_name=$1 sampled_file=$2 sampled_filter=$3
    shift 3
    sampled_line=$("${JQ:-jq}" -r -L "$SAMPLING_LIB" "$@" "include \"sampling\"; $sampled_filter
        | (if .op == \"<=\" then .observed <= .threshold
           elif .op == \"==\" then (.observed - .threshold | fabs) <= 1e-6 * ([1, (.threshold | fabs)] | max)
           else .observed >= .threshold end) as \$ok
        | \"\(if \$ok then \"ok\" else \"FAIL\" end): \(.observed * 1000 | round / 1000) \(.op) \(.threshold * 1000 | round / 1000) (n=\(.n); \(.from))\"" \
        "$sampled_file" 2>&1)
    echo "${SAMPLED_PREFIX-  }$sampled_name: $sampled_line"
    case $sampled_line in ok:*) ;; *) fail "$sampled_name: $sampled_line" ;; esac
}
