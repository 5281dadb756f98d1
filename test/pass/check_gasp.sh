#!/bin/bash
# check_gasp.sh CASE BUILD_DIR CLANG: the GASP instrumentation (docs/gasp.md).
#
#   ir       FileCheck over instrumented IR: gasp_calls.c and gasp_omp.c
#            (default options) and gasp_inline.c (inst-functions) at -O0 and
#            -O2, gasp_functions.ll through opt, gasp_exempt.c through ppw-cc
#   options  PPW_PASS_OPTIONS: the default, inst-functions, no-inst, inst-only
#            files, the last option winning, unknown tokens and names, an
#            unreadable file failing the compile
#   link     instrumented programs linked without libppw run as the plain
#            build does (output, exit status) at -O0 and -O2
#   stub     with a test-only tool (gasp_stub.c): a function called 1000
#            times gives 1000 START and 1000 END events, and operand values
#            (the malloc size and pointer, the mutex address) arrive intact
#   verify   opt-19 -verify-each over instrumented IR
#   doc      docs/gasp.md names every wrapped callee and every tag of
#            ppw/gasp_events.h
#   shmem    OpenSHMEM calls of every operand layout (context first,
#            strided, atomics, collectives) carry the documented operands
#            and element size (gasp_shmem.c, against do-nothing entries)
# Exit 77 means skipped.
set -euo pipefail
case_=$1 build=$2 clang=$3
here=$(cd "$(dirname "$0")" && pwd)
include=$(cd "$here/../../include" && pwd)
plugin=$build/lib/ppw.so
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=$(dirname "$clang")
opt=$bin/opt-19
[ -x "$opt" ] || opt=$(command -v opt-19)
status=0

fail() {
    echo "FAIL [gasp.$case_] $*"
    status=1
}

# emit_ir OUT OPTIONS CFLAGS...: IR from clang with the plugin.
emit_ir() {
    local out=$1 options=$2
    shift 2
    PPW_PASS_OPTIONS=$options "$clang" -g -fpass-plugin="$plugin" -S -emit-llvm "$@" -o "$out"
}

# events IR: "tag type" of every inserted call, one per line; a wrapped
# call's tag without its GASP_PPW_SITE bit (2^30, ppw/gasp.h).
events() {
    sed -n 's/.*@gasp_event_notify(ptr null, i32 \([0-9]*\), i32 \([0-9]\),.*/\1 \2/p' "$1" |
        awk '{ print ($1 >= 1073741824 ? $1 - 1073741824 : $1), $2 }'
}

case_ir() {
    local filecheck=$bin/FileCheck
    [ -x "$filecheck" ] || filecheck=$(command -v FileCheck-19 || command -v FileCheck || true)
    [ -n "$filecheck" ] || { echo "SKIP: FileCheck not found"; exit 77; }
    local level
    for level in O0 O2; do
        emit_ir "$work/calls.ll" "" "-$level" "$here/gasp_calls.c"
        "$filecheck" "$here/gasp_calls.c" --input-file "$work/calls.ll" ||
            fail "gasp_calls.c -$level"
        emit_ir "$work/omp.ll" "" "-$level" -fopenmp "$here/gasp_omp.c"
        "$filecheck" "$here/gasp_omp.c" --input-file "$work/omp.ll" || fail "gasp_omp.c -$level"
        emit_ir "$work/inline.ll" inst-functions "-$level" "$here/gasp_inline.c"
        "$filecheck" --check-prefixes=CHECK,$level "$here/gasp_inline.c" \
            --input-file "$work/inline.ll" || fail "gasp_inline.c -$level"
    done
    PPW_PASS_OPTIONS=inst-functions "$opt" -load-pass-plugin="$plugin" -passes=ppw-instrument -S \
        "$here/gasp_functions.ll" -o "$work/functions.ll"
    "$filecheck" "$here/gasp_functions.ll" --input-file "$work/functions.ll" ||
        fail "gasp_functions.ll"
    env -u PPW_PASS_OPTIONS "$build/bin/ppw-cc" --inst-functions -O0 -S -emit-llvm \
        "$here/gasp_exempt.c" -o "$work/exempt.ll"
    "$filecheck" "$here/gasp_exempt.c" --input-file "$work/exempt.ll" || fail "gasp_exempt.c"
}

# expect_events OPTIONS WANT: the tags of the events gasp_calls.c gets.
expect_events() {
    local options=$1 want=$2 got
    emit_ir "$work/o.ll" "$options" -O0 "$here/gasp_calls.c" 2>"$work/o.err"
    got=$(events "$work/o.ll" | cut -d' ' -f1 | sort -u | tr '\n' ' ')
    [ "$got" = "$want" ] || fail "PPW_PASS_OPTIONS='$options': tags [$got], expected [$want]"
}

case_options() {
    local calls="1001 1002 1003 1004 1100 1101 1102 1104 " rc err
    expect_events "" "$calls"
    expect_events "inst" "$calls"
    expect_events "inst-local" "$calls"
    expect_events "inst-functions" "1001 1002 1003 1004 1007 1100 1101 1102 1104 "
    expect_events "verbose inst-functions" "1001 1002 1003 1004 1007 1100 1101 1102 1104 "
    grep -q 'GASP events: 2 functions with entry/exit, 8 calls wrapped' "$work/o.err" ||
        fail "verbose: no GASP summary: $(cat "$work/o.err")"
    expect_events "no-inst" ""
    grep -q '@gasp_event_notify\|__ppw_gasp' "$work/o.ll" && fail "no-inst: GASP symbols remain"
    # The last inst option wins; other tokens do not disturb.
    expect_events "inst-functions,no-inst" ""
    expect_events "no-inst, inst" "$calls"
    expect_events "no-export,inst-functions" "1001 1002 1003 1004 1007 1100 1101 1102 1104 "

    # Tokens are whole words: 'noverbose' is no 'verbose', and is warned about once.
    expect_events "noverbose" "$calls"
    [ "$(grep -c "unknown option 'noverbose' ignored" "$work/o.err")" = 1 ] ||
        fail "unknown token: $(cat "$work/o.err")"
    grep -q 'GASP events' "$work/o.err" && fail "'noverbose' turned verbose on"

    # inst-only: exactly the named events; comments, blank lines; one warning
    # per unknown name.
    printf '# locks only\n\nGASP_PTHREAD_MUTEX_LOCK\nGASP_NO_SUCH_EVENT  # ignored\n' \
        >"$work/only.txt"
    expect_events "inst-only=$work/only.txt" "1102 "
    [ "$(grep -c 'ppw: warning:' "$work/o.err")" = 1 ] &&
        grep -q "only.txt:4: unknown GASP event 'GASP_NO_SUCH_EVENT' ignored" "$work/o.err" ||
        fail "inst-only unknown name: $(cat "$work/o.err")"
    printf 'GASP_C_FUNC\n' >"$work/func.txt"
    expect_events "inst-only=$work/func.txt" "1007 "
    expect_events "inst-functions,inst-only=$work/only.txt" "1102 "

    # An unreadable file fails the compile with one clear error, no output.
    rc=0
    err=$(PPW_PASS_OPTIONS="inst-only=$work/missing.txt" "$clang" -g -fpass-plugin="$plugin" \
        -c "$here/gasp_calls.c" -o "$work/missing.o" 2>&1) || rc=$?
    [ $rc -ne 0 ] || fail "unreadable inst-only file: the compile succeeded"
    [ ! -e "$work/missing.o" ] || fail "unreadable inst-only file: an object was written"
    grep -q "error: ppw: cannot read the inst-only file '$work/missing.txt': No such file" \
        <<<"$err" || fail "unreadable inst-only file: $err"
    rc=0
    err=$(PPW_PASS_OPTIONS="inst-only=" "$clang" -g -fpass-plugin="$plugin" \
        -c "$here/gasp_calls.c" -o "$work/empty.o" 2>&1) || rc=$?
    [ $rc -ne 0 ] && grep -q 'error: ppw: inst-only= names no file' <<<"$err" ||
        fail "inst-only=: $err"
}

# A program and how to build it, for link and stub.
programs=("gasp_count.c" "gasp_calls.c" "gasp_omp.c -fopenmp" "gasp_inline.c")

case_link() {
    local entry level source flags
    for entry in "${programs[@]}"; do
        read -r source flags <<<"$entry"
        for level in O0 O2; do
            # shellcheck disable=SC2086
            "$clang" -g "-$level" $flags "$here/$source" -o "$work/plain"
            # shellcheck disable=SC2086
            PPW_PASS_OPTIONS=inst-functions "$clang" -g "-$level" -fpass-plugin="$plugin" $flags \
                "$here/$source" -o "$work/inst"
            nm "$work/inst" | grep -q ' w gasp_event_notify$' ||
                fail "$source -$level: gasp_event_notify is not a weak reference"
            readelf -d "$work/inst" | grep -q 'libppw' && fail "$source -$level needs libppw"
            local want got want_rc=0 got_rc=0
            # Addresses differ between two binaries; everything else must not.
            want=$(OMP_NUM_THREADS=2 "$work/plain" | grep -v 0x) || want_rc=$?
            got=$(OMP_NUM_THREADS=2 "$work/inst" | grep -v 0x) || got_rc=$?
            [ "$got" = "$want" ] || fail "$source -$level: output [$got], plain build [$want]"
            [ $got_rc = $want_rc ] || fail "$source -$level: exit $got_rc, plain build $want_rc"
        done
    done
}

case_stub() {
    local level out err
    "$clang" -g -O2 -std=c11 -I"$include" -c "$here/gasp_stub.c" -o "$work/stub.o"
    for level in O0 O2; do
        PPW_PASS_OPTIONS=inst-functions "$clang" -g "-$level" -fpass-plugin="$plugin" \
            -c "$here/gasp_count.c" -o "$work/count.o"
        "$clang" "$work/count.o" "$work/stub.o" -o "$work/count"
        "$work/count" >"$work/out" 2>"$work/err" || true
        out=$(cat "$work/out") err=$(cat "$work/err")
        local size buffer lock
        size=$(sed -n 's/^malloc \(0x[0-9a-f]*\) -> .*/\1/p' <<<"$out")
        buffer=$(sed -n 's/^malloc .* -> \(0x[0-9a-f]*\)$/\1/p' <<<"$out")
        lock=$(sed -n 's/^lock \(0x[0-9a-f]*\)$/\1/p' <<<"$out")
        local line
        for line in "init 64" \
            "func classify START 1000 END 1000" \
            "func main START 1 END 1" \
            "GASP_C_MALLOC START gasp_count.c:27:20 $size" \
            "GASP_C_MALLOC END gasp_count.c:27:20 $size $buffer" \
            "GASP_PTHREAD_MUTEX_LOCK START gasp_count.c:28:5 $lock" \
            "GASP_PTHREAD_MUTEX_LOCK END gasp_count.c:28:5 $lock 0" \
            "GASP_PTHREAD_MUTEX_UNLOCK END gasp_count.c:30:5 $lock 0" \
            "GASP_C_FREE START gasp_count.c:35:5 $buffer" \
            "GASP_C_FREE END gasp_count.c:35:5 $buffer"; do
            grep -qxF -- "$line" <<<"$err" || fail "-$level: the tool did not report: $line"
        done
        [ "$(grep -c '^func ' <<<"$err")" = 2 ] || fail "-$level: function events: $err"
        [ $status = 0 ] || { echo "program: $out"; echo "tool: $err"; }
    done
}

# OpenSHMEM's operands, where the typed, context and strided forms keep
# them (OpenSHMEM 1.4): each event carries the remote address, the count
# and the PE as docs/gasp.md lists them, then the element size.
case_shmem() {
    local level out err
    "$clang" -g -O2 -std=c11 -I"$include" -c "$here/gasp_stub.c" -o "$work/stub.o"
    "$clang" -O2 -c "$here/gasp_shmem_lib.c" -o "$work/shmem_lib.o"
    for level in O0 O2; do
        "$clang" -g "-$level" -fpass-plugin="$plugin" -c "$here/gasp_shmem.c" -o "$work/shmem.o"
        "$clang" "$work/shmem.o" "$work/shmem_lib.o" "$work/stub.o" -o "$work/shmem"
        "$work/shmem" >"$work/out" 2>"$work/err" || fail "-$level: the program failed"
        out=$(cat "$work/out") err=$(cat "$work/err")
        at() { sed -n "s/^$1 //p" <<<"$out"; }
        local line site
        # the calls' lines in gasp_shmem.c, in order
        for line in "GASP_SHMEM_PUT shmem_ctx_int_iput $(at ints) 0x7 0x3 0x4" \
            "GASP_SHMEM_ATOMIC shmem_ctx_long_atomic_compare_swap $(at long1) 0x2 0x8" \
            "GASP_SHMEM_ALLTOALL shmem_alltoalls64 0x9 0x8" \
            "GASP_SHMEM_G shmem_double_g $(at double1) 0x1 0x8" \
            "GASP_SHMEM_P shmem_ctx_double_p $(at double2) 0x3 0x8" \
            "GASP_SHMEM_WAIT_UNTIL shmem_long_wait_until $(at long3) 0x8" \
            "GASP_SHMEM_REDUCE shmem_int_sum_to_all 0x5 0x4" \
            "GASP_SHMEM_GET_NBI shmem_getmem_nbi $(at byte16) 0xb 0x2 0x1"; do
            read -r tag callee operands <<<"$line"
            site=$(grep -n "^    [a-z ]*= *$callee(\|^    $callee(" "$here/gasp_shmem.c" | cut -d: -f1)
            grep -q "^$tag START gasp_shmem.c:$site:[0-9]* $operands\$" <<<"$err" ||
                fail "-$level: $callee: want $tag START gasp_shmem.c:$site $operands; the tool saw: $(grep "^$tag " <<<"$err")"
        done
    done
}

case_verify() {
    local source flags entry
    for entry in "${programs[@]}"; do
        read -r source flags <<<"$entry"
        # shellcheck disable=SC2086
        "$clang" -g -O0 -Xclang -disable-llvm-passes -S -emit-llvm $flags "$here/$source" \
            -o "$work/input.ll"
        PPW_PASS_OPTIONS=inst-functions "$opt" -load-pass-plugin="$plugin" \
            -passes=ppw-instrument -verify-each -disable-output "$work/input.ll" ||
            fail "$source: opt -passes=ppw-instrument -verify-each"
        PPW_PASS_OPTIONS=inst-functions "$opt" -load-pass-plugin="$plugin" \
            -passes='default<O2>' -verify-each -disable-output "$work/input.ll" ||
            fail "$source: opt default<O2> -verify-each with the plugin"
        # clang itself does not verify its output in release builds.
        # shellcheck disable=SC2086
        emit_ir "$work/out.ll" inst-functions -O2 $flags "$here/$source"
        "$opt" -passes=verify -disable-output "$work/out.ll" ||
            fail "$source: clang -O2 output does not verify"
    done
}

# table MACRO ROW: one line per row of the X-macro table, expanded by clang.
# table TABLE '(ROW ARGS) FIELD': FIELD of every row, one per line.  A
# field made of several string literals ("shmem_" "int" "_put") is joined.
table() {
    printf '#include <ppw/gasp_events.h>\n#define ROW%s @\n%s(ROW)\n' "$2" "$1" |
        "$clang" -E -P -I"$include" -x c - | tr '@\n' '\n ' | sed 's/" *"//g' |
        sed -n 's/^ *"\(.*\)" *$/\1/p'
}

# OpenSHMEM's variants as the page names them: shmem_TYPE_put for every
# shmem_<type>_put, shmem_putN for put8..put128, shmem_TYPE_OP_to_all for
# the reductions; the shmem_ctx_ forms under the plain ones.
shmem_form() {
    sed -E 's/^shmem_ctx_/shmem_/
        s/^shmem_(float|double|longdouble|char|schar|short|int|long|longlong|uchar|ushort|uint|ulong|ulonglong|int8|int16|int32|int64|uint8|uint16|uint32|uint64|size|ptrdiff|complexf|complexd)_/shmem_TYPE_/
        s/^shmem_(put|get|iput|iget)(8|16|32|64|128)/shmem_\1N/
        s/^shmem_(broadcast|collect|fcollect|alltoall|alltoalls)(32|64)$/shmem_\1N/
        s/_(and|or|xor|max|min|sum|prod)_to_all$/_OP_to_all/'
}

case_doc() {
    local doc=$here/../../docs/gasp.md name callees tags
    callees=$(table PPW_GASP_CALLS '(tag, callee, op, mask, result) callee' | shmem_form | sort -u)
    tags=$(table PPW_GASP_TAGS '(tag, name, op) name')
    [ "$(wc -w <<<"$callees")" -gt 40 ] && [ "$(wc -w <<<"$tags")" -gt 40 ] ||
        fail "the tables did not expand: [$callees] [$tags]"
    for name in $callees $tags; do
        grep -q "\`$name\`" "$doc" || fail "docs/gasp.md does not name $name"
    done
}

"case_$case_"
[ $status -eq 0 ] && echo "PASS [gasp.$case_]"
exit $status
