#!/bin/bash
# check_large.sh BUILD_DIR CLANG SOURCE_DIR: the plugin survives a large,
# varied input (the compile benchmark's generated 20k-line file) at -O0 and
# -O2, the object gets one graph per defined function, and ppw-blame reads
# it back.
set -euo pipefail
build=$1 clang=$2 source=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$clang" -std=c11 -O1 "$source/bench/compile/gen.c" -o "$work/gen"
"$work/gen" >"$work/big.c"
status=0
for level in O0 O2; do
    "$build/bin/ppw-cc" "-$level" -c "$work/big.c" -o "$work/big_$level.o" 2>"$work/cc.log" ||
        { echo "FAIL: ppw-cc -$level on the large input"; cat "$work/cc.log"; exit 1; }
    # The GASP constructor (__ppw_gasp_init) is the pass's own, not the input's.
    defined=$(nm "$work/big_$level.o" | grep ' [Tt] ' | grep -vc ' __ppw_' || true)
    "$build/bin/ppw-blame" static "$work/big_$level.o" --format json >"$work/big.json"
    analysed=$(jq '.functions | length' "$work/big.json")
    with_sets=$(jq '[.functions[] | select(any(.variables[]; (.lines | length) > 0))] | length' \
        "$work/big.json")
    echo "-$level: $(wc -l <"$work/big.c") lines, $defined defined functions, $analysed graphs, $with_sets with blame sets"
    # At -O2 small static functions may be inlined away before emission, so
    # the object can hold fewer symbols than the graphs describe.
    if [ "$analysed" -lt "$defined" ] || [ "$with_sets" -lt $((analysed * 9 / 10)) ]; then
        echo "FAIL: -$level graphs missing"; status=1
    fi
done
[ $status -eq 0 ] && echo "PASS [large input]"
exit $status
