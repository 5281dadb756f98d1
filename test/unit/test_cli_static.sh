#!/bin/sh
# End-to-end test of `ppw-blame static` on binaries made by the real
# toolchain: test chunks are added to compiled objects with objcopy and
# linked (with --build-id) the way ppw-cc links, so the linker's
# concatenation and padding of .ppw.blame is exercised too.
#
# usage: test_cli_static.sh PPW_BLAME MAKE_CHUNK CC OBJCOPY EXPECTED_DIR WORKDIR
# Exits 77 (ctest SKIP) when a tool is missing.
set -u
PPW_BLAME=$1 MAKE_CHUNK=$2 CC=$3 OBJCOPY=$4 EXPECTED=$5 W=$6
. "$(dirname "$0")/cli_helpers.sh"

for tool in "$CC" "$OBJCOPY"; do
    command -v "$tool" >/dev/null 2>&1 || { echo "SKIP: $tool not found"; exit 77; }
done
rm -rf "$W" && mkdir -p "$W" && cd "$W" || exit 1

# Objects: main.o and other.o carry the sample for two units; dup.o carries
# main.o's unit again (same unit_id) and must be loaded once.
"$MAKE_CHUNK" a.bin sample.c && "$MAKE_CHUNK" b.bin other.c && "$MAKE_CHUNK" odd.bin odd.c odd || exit 1
echo 'int main(void) { return 0; }' >main.c
echo 'int other_value = 1;' >other.c
echo 'int dup_value = 2;' >dup.c
echo 'int odd_value = 3;' >odd.c
for obj in main:a other:b dup:a odd:odd; do
    src=${obj%%:*} chunk=${obj#*:}
    "$CC" -c "$src.c" -o "$src.o" || exit 1
    cp "$src.o" "plain-$src.o"
    # Two steps: objcopy applies the alignment only to sections already present.
    "$OBJCOPY" --add-section ".ppw.blame=$chunk.bin" "$src.o" || exit 1
    "$OBJCOPY" --set-section-flags .ppw.blame=contents,readonly \
        --set-section-alignment .ppw.blame=8 "$src.o" || exit 1
done
"$CC" main.o other.o dup.o -Wl,--build-id -o prog || exit 1
# Chunks of 502 and 501 bytes aligned to 8: the linker must have padded.
[ "$(LC_ALL=C readelf -S prog | sed -n '/\.ppw\.blame/{n;s/^ *\([0-9a-f]*\).*/\1/p}')" != 00000000000005e1 ] \
    || fail "expected linker padding between chunks"
"$CC" odd.o plain-main.o -o odd-prog || exit 1

# text output of a linked executable
expect_status 0 "$PPW_BLAME" static prog
diff -u "$EXPECTED/static_sample.txt" out.txt || fail "text output differs"
ok text

# the build-id the linker wrote
want_id=$(LC_ALL=C readelf -n prog 2>/dev/null | sed -n 's/.*Build ID: *//p')
expect_status 0 "$PPW_BLAME" static prog --format json
if [ -n "$want_id" ]; then
    grep -q "^{\"build_id\":\"$want_id\"" out.txt || fail "build_id is not $want_id"
fi
ok build_id

# JSON output: well-formed, shaped as documented
"$EXPECTED/../check_static_json.sh" out.txt odd-prog "$PPW_BLAME" || fail "json checks"
ok json

# control characters stay escaped on one line; task bindings name the shared variable
expect_status 0 "$PPW_BLAME" static odd-prog
grep -qx '  var tab\\x09here\\x0anewline kind=local type=int decl=0 exit=no lines= exclusive=' out.txt \
    || fail "control characters in text output: $(cat out.txt)"
grep -qx '  call 4:1 .omp_outlined. kind=task quote"back\\slash<-arg5:shared(ref)' out.txt \
    || fail "task binding in text output: $(cat out.txt)"
ok text_odd

# --function by name and by linkage name; no match is a data error
expect_status 0 "$PPW_BLAME" static prog --function main.omp_outlined
[ "$(grep -c '^function ' out.txt)" -eq 2 ] || fail "--function should match one function per unit"
expect_status 1 "$PPW_BLAME" static prog --function no_such_function
grep -q "^ppw-blame: error: prog: no function named 'no_such_function'" err.txt || fail "no-match message"
ok function_filter

# relocatable objects read as well as executables
expect_status 0 "$PPW_BLAME" static main.o
grep -q '^function main (grid.c:10)$' out.txt || fail "main.o"
ok object

# strip --strip-all keeps the non-allocated section (docs/FORMATS.md)
if command -v strip >/dev/null 2>&1; then
    strip --strip-all -o stripped prog
    expect_status 0 "$PPW_BLAME" static stripped
    diff -q "$EXPECTED/static_sample.txt" out.txt >/dev/null || fail "stripped output differs"
    ok strip
fi

# errors: one line on stderr, documented status
expect_status 1 "$PPW_BLAME" static plain-main.o
[ "$(cat err.txt)" = "ppw-blame: error: plain-main.o: no .ppw.blame section (not built with ppw-cc or -fpass-plugin=ppw.so)" ] \
    || fail "no-section message: $(cat err.txt)"
expect_status 1 "$PPW_BLAME" static main.c
grep -q '^ppw-blame: error: main.c: not an ELF file' err.txt || fail "not-ELF message"
cp prog corrupt
size=$(wc -c <corrupt)
# flip one byte of the first chunk's payload (found via the magic)
off=$(grep -boa PPWB corrupt | head -1 | cut -d: -f1)
printf '\377' | dd of=corrupt bs=1 seek=$((off + 60)) conv=notrunc 2>/dev/null
expect_status 1 "$PPW_BLAME" static corrupt
grep -q '^ppw-blame: error: corrupt: corrupt data at byte [0-9]*: chunk payload hash mismatch' err.txt \
    || fail "corrupt message: $(cat err.txt)"
[ "$(wc -l <err.txt)" -eq 1 ] || fail "more than one error line"
[ "$(wc -c <corrupt)" -eq "$size" ] || fail "dd changed the size"
expect_status 1 "$PPW_BLAME" static no-such-file
ok data_errors

# no command is `report` on the newest run directory, and there is none here
expect_status 1 "$PPW_BLAME"
grep -q "^ppw-blame: error: no ppw-\* run directory" err.txt || fail "no command: $(cat err.txt)"
expect_status 2 "$PPW_BLAME" frobnicate
grep -q "^ppw-blame: error: unknown command 'frobnicate'" err.txt || fail "unknown command message"
expect_status 2 "$PPW_BLAME" --frobnicate
expect_status 2 "$PPW_BLAME" static
expect_status 2 "$PPW_BLAME" static prog --format xml
expect_status 2 "$PPW_BLAME" static prog --bogus
expect_status 2 "$PPW_BLAME" static prog extra
expect_status 0 "$PPW_BLAME" --help
grep -q static out.txt || fail "--help lists commands"
expect_status 0 "$PPW_BLAME" -h
expect_status 0 "$PPW_BLAME" static --help
expect_status 0 "$PPW_BLAME" --version
grep -q '^ppw-blame [0-9]' out.txt || fail "--version"
ok usage

[ "$failures" -eq 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
