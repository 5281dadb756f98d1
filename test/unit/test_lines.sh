#!/bin/sh
# Source lines (blame/lines.c) on the programs of test/unit/lines/, built
# with clang-19 -g at -O0 and -O2, through lines_probe:
#  - every instruction of the programs' own functions, as an interrupted PC
#    and as a return address, against llvm-symbolizer --inlines;
#  - the inlined chain clamp (util.h) <- square_plus <- compute at -O2;
#  - a header function whose rows precede any DW_LNS_set_file (first.h);
#  - a row of zero length at the end of a line sequence (zero_row.c);
#  - file names as ppw-blame static spells them, for sources compiled by
#    relative and by absolute path, and OpenMP outlined functions' names;
#  - a module without -g: the explanatory error;
#  - ppw-blame dump --format json: every frame's "source" array.
#
# usage: test_lines.sh LINES_PROBE PPW_BLAME PPW_CC CLANG CC SYMBOLIZER OBJDUMP WORKDIR [JQ]
# (CC: the C compiler the project is built with, usually gcc: another
# producer's DWARF)
# Exits 77 (ctest SKIP) when clang-19, llvm-symbolizer or llvm-objdump is
# missing; the dump checks are skipped without jq.
set -u
PROBE=$1 PPW_BLAME=$2 PPW_CC=$3 CLANG=$4 CC=$5 SYMBOLIZER=$6 OBJDUMP=$7 W=$8 JQ=${9:-jq}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/cli_helpers.sh"

for tool in "$CLANG" "$SYMBOLIZER" "$OBJDUMP"; do
    command -v "$tool" >/dev/null 2>&1 || { echo "SKIP: $tool not found"; exit 77; }
done
rm -rf "$W" && mkdir -p "$W/src" "$W/build/sub" && cd "$W" || exit 1
cp "$HERE"/lines/*.c "$HERE"/lines/*.h src/ || exit 1

build() { "$@" >build.log 2>&1 || { echo "FAIL: $*: $(cat build.log)" >&2; exit 1; }; }
build "$CLANG" -g -O0 src/prog.c -o prog_O0
build "$CLANG" -g -O2 src/prog.c -o prog_O2
build "$CLANG" -g -gdwarf-4 -O2 src/prog.c -o prog_dwarf4
build "$CLANG" -g -O0 src/first.c -o first_O0
build "$CLANG" -O2 src/prog.c -o prog_nodebug
build "$CC" -g -O2 src/prog.c -o prog_cc
build "$PPW_CC" -O2 src/prog.c -o pprog_O2
build "$PPW_CC" -O0 -fopenmp src/omp.c -o omp_O0
build "$PPW_CC" -O2 -fopenmp src/omp.c -o omp_O2
(cd build/sub && build "$PPW_CC" -O0 "$W/src/prog.c" -o "$W/pprog_abs")

# addrs BINARY: every instruction of the program's own functions (not the
# C runtime's), as hex link-time addresses
addrs() {
    syms=$("$OBJDUMP" -t "$1" | awk '$3 == "F" && $4 == ".text" && $NF !~ /^_/ &&
        $NF !~ /^(frame_dummy|register_tm_clones|deregister_tm_clones)$/ { print $NF }' |
        paste -sd, -)
    "$OBJDUMP" -d --no-show-raw-insn --disassemble-symbols="$syms" "$1" |
        awk '/^ *[0-9a-f]+:/ { sub(":", "", $1); print $1 }'
}

# probe NAME BINARY [ret]: our frames for every instruction, into NAME.ours;
# the run directory is r_NAME
probe() {
    addrs "$2" >"$1.addrs"
    [ -s "$1.addrs" ] || fail "$1: no instructions found"
    sed "s/^/0 /; s/\$/ ${3:-}/" "$1.addrs" | "$PROBE" "r_$1" "$2" >"$1.ours" 2>probe.err ||
        fail "$1: lines_probe failed: $(cat probe.err)"
}

# compare NAME BINARY [ret]: probe, then llvm-symbolizer on the same
# addresses (one byte earlier for return addresses); addresses it knows no
# source for (the C runtime's, symbol table only) are left out
compare() {
    probe "$@"
    while read -r a; do
        if [ "${3:-}" = ret ]; then printf '0x%x\n' $((0x$a - 1)); else echo "0x$a"; fi
    done <"$1.addrs" | "$SYMBOLIZER" --obj="$2" --inlines --relativenames >"$1.oracle"
    awk -v name="$1" '
        FNR == NR { ours[FNR] = $0; count = FNR; next }
        { total++; split($0, line, "\n") }
        line[2] == "??:0:0" || line[2] ~ /crtstuff\.c:0:0$/ { next }
        { compared++ }
        ours[FNR] != $0 && ++bad <= 5 {
            printf "  %s, address %d:\n%s\n  llvm-symbolizer:\n%s\n", name, FNR, ours[FNR], $0
        }
        END {
            printf "%s: %d addresses, %d compared, %d differ\n", name, total, compared, bad
            exit (bad > 0 || count != total || compared * 2 < total)
        }' RS= "$1.ours" "$1.oracle" || fail "$1: differs from llvm-symbolizer"
}

compare prog_O0 prog_O0
compare prog_O2 prog_O2
compare prog_O2_ret prog_O2 ret
compare prog_dwarf4 prog_dwarf4
compare prog_cc prog_cc
compare first_O0 first_O0
compare first_O0_ret first_O0 ret
compare omp_O0 omp_O0
compare omp_O2 omp_O2
probe pprog_abs pprog_abs # llvm-symbolizer spells its files absolute
ok compare

# A row of zero length ending a line sequence (f's, at its end address),
# right where the next function starts (g, whose sequence the line program
# holds first): it covers nothing, so g's first instruction has g's line,
# not f's closing one.  clang emits none for C, so its assembly is edited:
# two .loc in a row at f's end (the assembler gives the first a row at the
# current address), g's alignment taken out, and f moved to .text.hot.f,
# which GNU ld's default script places before the .text.* sections.
build "$CLANG" -g -O1 -ffunction-sections -S src/zero_row.c -o zero_row.s
awk '/^[ \t]*\.section[ \t]/ { section = $2; sub(/,.*/, "", section) }
    section == ".text.f" && /^[ \t]*\.section/ { sub(/\.text\.f/, ".text.hot.f") }
    section == ".text.f" && /^[ \t]*\.loc[ \t]/ { file = $2 }
    section == ".text.f" && /^\.Lfunc_end[0-9]+:/ { printf "\t.loc\t%s 14 1\n\t.loc\t%s 14 2\n", file, file; edits++ }
    section == ".text.g" && /^[ \t]*\.p2align/ && !unaligned { unaligned = 1; edits++; next }
    { print }
    END { exit edits != 2 }' zero_row.s >zero_row_edited.s || fail "zero_row.s: clang's assembly no longer has the shape edited here"
build "$CLANG" -c zero_row_edited.s -o zero_row.o
build "$CLANG" -nostdlib -nostartfiles -Wl,-e,main zero_row.o -o zero_row
g_addr=$("$OBJDUMP" -t zero_row | awk '$NF == "g" { print $1 }')
if command -v readelf >/dev/null 2>&1; then
    # f's sequence: a row at line 14 and its end, both at g's address
    readelf -wL zero_row | awk -v g="$g_addr" '
        { sub(/^0x0*/, "", $3) } g_hex == "" { g_hex = g; sub(/^0*/, "", g_hex) }
        $2 == 14 && $3 == g_hex { row = 1 } $2 == "-" && $3 == g_hex && row { found = 1 }
        END { exit !found }' || fail "zero_row: no zero-length row at g ($g_addr): $(readelf -wL zero_row)"
fi
compare zero_row zero_row
grep -q '^g$' zero_row.ours && ! grep -q 'zero_row\.c:14:' zero_row.ours ||
    fail "zero_row: line 14's row of zero length lent its line: $(cat zero_row.ours)"
ok zero_length_row

# has NAME REGEX: some address's frames (one block of NAME.ours) match
has() {
    RE=$2 awk 'BEGIN { RS = ""; re = ENVIRON["RE"] } $0 ~ re { found = 1 } END { exit !found }' \
        "$1.ours" || fail "$1: no address has frames like: $2"
}
# the inlined chain: clamp in util.h (where -O2 leaves it only line 0),
# inlined into square_plus at 13:16, inlined into compute at 20:22;
# square_plus alone; at -O0 no inlining
for bin in prog_O2 prog_dwarf4 pprog_O2; do
    [ -s $bin.ours ] || probe $bin $bin
    has $bin '^clamp\nsrc/util\.h:[0-7]:[0-9]+\nsquare_plus\nsrc/prog\.c:13:16\ncompute\nsrc/prog\.c:20:22$'
    has $bin '^square_plus\nsrc/prog\.c:1[23]:[0-9]+\ncompute\nsrc/prog\.c:20:22$'
done
has prog_O0 '^clamp\nsrc/util\.h:[2-7]:[0-9]+$'
has prog_O0 '^square_plus\nsrc/prog\.c:13:16$'
has prog_O0 '^compute\nsrc/prog\.c:20:22$'
has first_O0 '^first\nsrc/first\.h:5:[0-9]+$'
has first_O0 '^main\nsrc/first\.c:7:[0-9]+$'
has omp_O2 '^main\.omp_outlined_debug__\nsrc/omp\.c:[0-9]+:[0-9]+\nmain\.omp_outlined\nsrc/omp\.c:8:1$'
ok inlined_chain

# near NAME BINARY: the frames the views use (lines_probe -n) against
# llvm-symbolizer's: an address whose innermost frame the line table gives
# line 0 takes the frames of the closest address before it in the same
# function (its outermost frame) that has a line, else of the closest after
# it (none: its own); every other address its own frames.  Prints how many
# line-0 addresses took another's frames.
near() {
    local addrs=${1%_ret}
    sed "s/^/0 /; s/\$/ ${3:-}/" "$addrs.addrs" | "$PROBE" -n "r_$1_near" "$2" >"$1.near" 2>probe.err ||
        fail "$1: lines_probe -n failed: $(cat probe.err)"
    [ -s "$1.near" ] || fail "$1: lines_probe -n printed nothing"
    awk -v name="$1" -v need_lent="${4:-0}" '
        function line_of(block,   l, p, n) { split(block, l, "\n"); n = split(l[2], p, ":"); return p[n - 1] }
        function top(block,   l, n) { n = split(block, l, "\n"); return l[n - 1] }
        FNR == NR { ours[FNR] = $0; nours = FNR; next }
        { oracle[FNR] = $0; count = FNR }
        END {
            for (i = 1; i <= count; i++) {
                want = oracle[i]
                split(want, w, "\n")
                if (w[2] == "??:0:0" || w[2] ~ /crtstuff\.c:0:0$/) continue # no DWARF of ours (compare)
                if (line_of(want) == 0 && want !~ /^\?\?/) {
                    found = ""
                    for (j = i - 1; j >= 1 && found == ""; j--)
                        if (line_of(oracle[j]) != 0 && top(oracle[j]) == top(want)) found = oracle[j]
                    for (j = i + 1; j <= count && found == ""; j++)
                        if (line_of(oracle[j]) != 0 && top(oracle[j]) == top(want)) found = oracle[j]
                    if (found != "") { lent++; want = found }
                }
                if (ours[i] != want && ++bad <= 5)
                    printf "  %s, address %d:\n%s\n  expected:\n%s\n", name, i, ours[i], want
            }
            printf "%s: %d addresses, %d at line 0 took a neighbour'"'"'s frames, %d differ\n", name, count, lent, bad
            exit bad > 0 || count == 0 || nours != count || lent < need_lent
        }' RS= "$1.near" "$1.oracle" || fail "$1: near frames differ, or too few took a neighbour's"
}
# NAME BINARY [ret] [LEAST]: at least LEAST line-0 addresses take a
# neighbour's frames (14 and 32 seen with clang 19; at -O2 clang always
# leaves some), so that the check is not vacuous
near prog_O2 prog_O2 "" 1
near prog_O2_ret prog_O2 ret
near omp_O2 omp_O2 "" 1
ok near_lines

# file and function names as ppw-blame static spells them: every frame with
# a line names a function of the static graph and that function's file
# (the inlined glibc atoi of /usr/include is not in the graph)
static_pairs() {
    "$PPW_BLAME" static "$1" | sed -n 's/^function \([^ ]*\) (\(.*\):[0-9]*).*/\1 \2/p' | sort -u
}
our_pairs() {
    awk 'BEGIN { RS = "" } {
        n = split($0, l, "\n")
        for (i = 1; i < n; i += 2) {
            split(l[i + 1], p, ":")
            if (l[i] != "??" && p[2] > 0 && p[1] !~ /^\/usr\//) print l[i], p[1]
        }
    }' "$1.ours" | sort -u
}
for bin in pprog_O2 pprog_abs omp_O0 omp_O2; do
    static_pairs $bin >$bin.static
    our_pairs $bin >$bin.pairs
    extra=$(comm -23 $bin.pairs $bin.static)
    [ -z "$extra" ] || fail "$bin: frames that ppw-blame static spells differently: $extra"
done
grep -qx 'clamp src/util.h' pprog_abs.pairs && grep -qx 'compute src/prog.c' pprog_abs.pairs ||
    fail "pprog_abs (compiled as $W/src/prog.c in build/sub): $(cat pprog_abs.pairs)"
for f in main.omp_outlined main.omp_outlined_debug__ .omp_task_entry. main; do
    grep -qx "$f src/omp.c" omp_O0.pairs || fail "omp_O0: no frame in $f: $(cat omp_O0.pairs)"
done
ok static_names

# a module without DWARF
"$PROBE" -e r_errors prog_O2 prog_nodebug </dev/null >out.txt 2>err.txt || fail "lines_probe -e"
printf 'module 0: ok\nmodule 1: %s/prog_nodebug: no DWARF debug info; rebuild with -g (ppw-cc adds it)\n' \
    "$W" | diff - out.txt >/dev/null || fail "module errors: $(cat out.txt err.txt)"
echo "0 $(addrs prog_nodebug | head -1)" | "$PROBE" r_nodebug prog_nodebug >out.txt &&
    printf '??\n??:0:0\n\n' | diff - out.txt >/dev/null || fail "no DWARF: $(cat out.txt)"
ok no_dwarf

# ppw-blame dump: the source frames of every frame
if command -v "$JQ" >/dev/null 2>&1; then
    expect_status 0 "$PPW_BLAME" dump r_prog_O2 --what samples --format json
    # near_source only where the line table gives line 0 and a neighbour
    # lends its frames (some addresses above), with a line
    "$JQ" -e '([.samples[].stack[0].source[]
                  | keys_unsorted == ["function", "file", "line", "col", "inlined"]] | all)
              and ([.samples[].stack[0] | select(.near_source)] | length > 0)
              and all(.samples[].stack[0] | select(.near_source);
                      .source[0].line == 0 and .near_source[0].line > 0)
              and ([.samples[] | .stack[0].source
                    | select(map(.function) == ["clamp", "square_plus", "compute"])
                    | select(map(.inlined) == [true, true, false]
                             and .[0].file == "src/util.h" and .[1].file == "src/prog.c"
                             and [.[1].line, .[1].col, .[2].line, .[2].col] == [13, 16, 20, 22])]
                   | length > 0)
              and all(.samples[]; .glued[0].source == .stack[0].source)' out.txt >/dev/null ||
        fail "dump r_prog_O2: $(head -c 600 out.txt)"
    expect_status 0 "$PPW_BLAME" dump r_nodebug --what samples --format json
    "$JQ" -e '.samples[0].stack[0] | .source == [] and .module != null' out.txt >/dev/null ||
        fail "dump r_nodebug: $(head -c 600 out.txt)"
    ok dump_source
else
    echo "SKIP dump_source: jq not found"
fi

[ "$failures" -eq 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
