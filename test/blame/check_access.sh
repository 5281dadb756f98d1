#!/bin/sh
# The access view (ppw-blame report --view access) next to the blame view,
# on bandwidth.c (four STREAM kernels over three arrays) and lookup.c (a
# large read-only table searched in the hot loop, a small accumulator
# written), at -O0 and -O2:
#   1. the accesses the pass exports for the kernels' and the loop's lines;
#   2. folded stacks with known samples per line: exact shares;
#   3. real runs under libppw: the same answers within stated tolerances;
#   4. a binary whose graphs are format 1.0: --view access is refused.
#
# usage: check_access.sh BUILD_DIR SOURCE_DIR WORKDIR [JQ]
# Exits 77 (ctest SKIP) when jq is missing.
set -u
BUILD=$1 SRC=$2 W=$3 JQ=${4:-jq}
PPW_BLAME=$BUILD/bin/ppw-blame PPW_CC=$BUILD/bin/ppw-cc
. "$SRC/test/unit/cli_helpers.sh"

command -v "$JQ" >/dev/null 2>&1 || { echo "SKIP: jq not found"; exit 77; }
rm -rf "$W" && mkdir -p "$W" && cd "$W" || exit 1

# glob NAME: the jq expression of global NAME's record
glob() { echo "(.variables[] | select(.kind == \"global\" and .name == \"$1\"))"; }
# within A B TOL: |A - B| < TOL
within() { echo "((($1) - ($2)) | fabs < $3)"; }
# norm FIELD NAME: NAME's FIELD as a percentage of a's + b's + c's (the
# arrays' shares among themselves: loop control touches no array)
norm() {
    echo "(100 * $(glob "$2").$1 / ([$(glob a).$1, $(glob b).$1, $(glob c).$1] | add))"
}

for level in O0 O2; do
    "$PPW_CC" -$level "$SRC/test/blame/bandwidth.c" -o bandwidth_$level 2>cc.log &&
        "$PPW_CC" -$level "$SRC/test/blame/lookup.c" -o lookup_$level 2>>cc.log ||
        { fail "ppw-cc -$level"; cat cc.log; exit 1; }
done

# ---- 1. what the pass exports ----
# The kernels' statements (bandwidth.c lines 15, 21, 27, 33) access the
# parameters' pointees; main's initialisation (line 40) writes the arrays.
# lookup.c: the search reads table (line 25), the update reads table and
# reads and writes acc (line 30); lo, hi and mid are registers, not data.
for level in O0 O2; do
    expect_status 0 "$PPW_BLAME" static bandwidth_$level
    for pattern in '15:[0-9]+ dst reads=0 writes=1' '15:[0-9]+ src reads=1 writes=0' \
        '21:[0-9]+ src reads=1 writes=0' '27:[0-9]+ y reads=1 writes=0' \
        '33:[0-9]+ dst reads=0 writes=1' '33:[0-9]+ x reads=1 writes=0' \
        '33:[0-9]+ y reads=1 writes=0' '40:[0-9]+ c reads=0 writes=1'; do
        grep -Eq "^  access $pattern$" out.txt || fail "static bandwidth -$level: no '$pattern'"
    done
    expect_status 0 "$PPW_BLAME" static lookup_$level
    for pattern in '25:[0-9]+ table reads=1 writes=0' '30:[0-9]+ acc reads=1 writes=1' \
        '30:[0-9]+ table reads=1 writes=0'; do
        grep -Eq "^  access $pattern$" out.txt || fail "static lookup -$level: no '$pattern'"
    done
    ! grep -Eq '^  access [0-9:]+ (lo|hi|mid|i|x|key) ' out.txt ||
        fail "static lookup -$level: a register-like local is counted as accessed"
done
ok static

# ---- 2. folded stacks: exact shares ----
# Samples per kernel in proportion to its element touches (2, 2, 3, 3), as
# memory-bound kernels take time.  Access view: a 3, b 3 and c 4 touches of
# 10 (30/30/40%; reads 20/20/20, writes 10/10/20).  Blame view: each
# kernel's samples blame the array it writes: c 20 + 30, a 30, b 20.
cat >bandwidth.folded <<'EOF'
main@42;copy@15 20
main@43;scale@21 20
main@44;add@27 30
main@45;triad@33 30
EOF
# lookup: 70 samples compare table[mid], 10 compute mid, 10 update acc
# (split: table 1/3, acc 2/3), 5 draw the key and 5 test the loop.
cat >lookup.folded <<'EOF'
main@25 70
main@24 10
main@30 10
main@20 5
main@23 5
EOF
for level in O0 O2; do
    expect_status 0 "$PPW_BLAME" report --folded bandwidth.folded --binary bandwidth_$level \
        --view access --format json --top 0
    check "bandwidth access -$level" '.view == "access" and .accessed_samples == 100
        and ([.variables[].name] == ["c", "a", "b"]) and '"
        $(within "$(glob a).access" 30 0.01) and $(within "$(glob b).access" 30 0.01) and
        $(within "$(glob c).access" 40 0.01) and $(within "$(glob a).read" 20 0.01) and
        $(within "$(glob a).write" 10 0.01) and $(within "$(glob c).write" 20 0.01)"
    expect_status 0 "$PPW_BLAME" report --folded bandwidth.folded --binary bandwidth_$level \
        --format json --top 0
    check "bandwidth blame -$level" '.view == "blame" and '"
        $(within "$(glob c).inclusive" 50 0.01) and $(within "$(glob a).inclusive" 30 0.01) and
        $(within "$(glob b).inclusive" 20 0.01) and $(within "$(glob b).access" 30 0.01)"
    expect_status 0 "$PPW_BLAME" report --folded lookup.folded --binary lookup_$level \
        --view access --format json --top 0
    check "lookup access -$level" '.variables[0].name == "table" and .variables[1].name == "acc"
        and (.variables | length == 2) and '"
        $(within "$(glob table).access" "70 + 10 / 3" 0.01) and
        $(within "$(glob acc).read" "10 / 3" 0.01) and $(within "$(glob acc).write" "10 / 3" 0.01)
        and $(within .accessed_samples 80 0.01)"
    expect_status 0 "$PPW_BLAME" report --folded lookup.folded --binary lookup_$level \
        --format json --top 0
    check "lookup blame -$level" '.variables[0].name == "acc" and .variables[0].inclusive == 100
        and ([.variables[] | select(.name == "table")] | length == 0)'
done
expect_status 0 "$PPW_BLAME" report --folded lookup.folded --binary lookup_O0 --view access
grep -Eq '^ +73\.3 +0\.0 +73\.3 +- +table ' out.txt || fail "access text row: $(cat out.txt)"
grep -q "^note: 20.0% of the samples are at locations that access no variable$" out.txt ||
    fail "access text note: $(cat out.txt)"
awk 'length($0) > 100 { exit 1 }' out.txt || fail "access text wider than 100 columns"
ok folded

# ---- 3. real runs ----
# Tolerances, in points of the arrays' shares among themselves.  Access:
# 5 around 30/30/40 (each sample is split by the touches of its statement,
# so the shares stay near the touches whatever each kernel's speed: 29/29/42
# if the kernels took equal times).  Blame: 5 around the shares of the
# writes weighted by the kernels' own times, which `code` measures in the
# same run (c: copy + add, a: triad, b: scale), since the kernels' relative
# speeds depend on the machine and its load.
# kernel NAME: NAME's inclusive share in the code view's tree (out.txt)
kernel() { echo "([.. | objects | select(.function? == \"$1\") | .inclusive] | add // 0)"; }
for level in O0 O2; do
    rm -rf run_b_$level run_l_$level
    PPW_PERIOD=200us PPW_OUTPUT=run_b_$level ./bandwidth_$level >/dev/null ||
        fail "bandwidth -$level failed"
    PPW_PERIOD=200us PPW_OUTPUT=run_l_$level ./lookup_$level >/dev/null ||
        fail "lookup -$level failed"
    expect_status 0 "$PPW_BLAME" report run_b_$level --view access --format json --top 0
    if ! "$JQ" -e '.total_samples >= 100' out.txt >/dev/null; then
        echo "SKIP: the -$level run took too few samples: $(head -c 200 out.txt)"
        exit 77
    fi
    check "bandwidth run access -$level" '.variables[0].name == "c" and '"
        $(within "$(norm access a)" 30 5) and $(within "$(norm access b)" 30 5) and
        $(within "$(norm access c)" 40 5)"
    expect_status 0 "$PPW_BLAME" code run_b_$level --format json
    times=$("$JQ" -c "[$(kernel copy), $(kernel scale), $(kernel add), $(kernel triad)]" out.txt)
    expect_status 0 "$PPW_BLAME" report run_b_$level --format json --top 0
    check "bandwidth run blame -$level (kernel times $times)" "$times as [\$copy, \$scale, \$add, \$triad]
        | (\$copy + \$scale + \$add + \$triad) as \$all | \$all > 50 and
        $(within "$(norm inclusive c)" "100 * (\$copy + \$add) / \$all" 5) and
        $(within "$(norm inclusive a)" "100 * \$triad / \$all" 5) and
        $(within "$(norm inclusive b)" "100 * \$scale / \$all" 5)"
    expect_status 0 "$PPW_BLAME" report run_l_$level --view access --format json --top 0
    check "lookup run access -$level" '.variables[0].name == "table"
        and .variables[1].name == "acc" and .variables[0].access > 5 * .variables[1].access'
    expect_status 0 "$PPW_BLAME" report run_l_$level --format json --top 0
    check "lookup run blame -$level" '.variables[0].name == "acc"
        and .variables[0].inclusive > 5 * ([0, '"$(glob table).inclusive] | add)"
done
ok run

# ---- 4. format 1.0: no access data ----
# The chunk header's minor version (bytes 6-7 after "PPWB") set to 0; the
# payload hash does not cover the header.
python3 - lookup_O0 lookup_v10 <<'EOF' || fail "could not patch the format version"
import sys
data = bytearray(open(sys.argv[1], "rb").read())
magic = b"PPWB\x01\x00\x01\x00"
at = data.find(magic)
assert at >= 0
while at >= 0:
    data[at + 6] = 0
    at = data.find(magic, at + 1)
open(sys.argv[2], "wb").write(data)
EOF
expect_status 0 "$PPW_BLAME" report --folded lookup.folded --binary lookup_v10 --format json
check "v1.0 blame" '.variables[0].name == "acc" and .accessed_samples == null
    and .variables[0].access == null'
expect_status 1 "$PPW_BLAME" report --folded lookup.folded --binary lookup_v10 --view access
one_error_line "lookup_v10: its blame graphs predate format 1.1 and hold no accesses; rebuild it with this ppw-cc for --view access (blame and exclusive work)$"
ok version

[ "$failures" -eq 0 ] && echo "PASS" || { echo "$failures failure(s)"; exit 1; }
