#!/bin/bash
# check_pass.sh CASE BUILD_DIR CLANG [OPT]
#
# One pass test: test/pass/CASE.c is built at -O0 and -O2 with ppw-cc and
# with plain clang.  Checks, in order:
#   1. both builds print the same output and exit with the same status
#      (the plugin never changes what a program computes);
#   2. every expectation in CASE.expect holds at both levels;
#   3. the same variables are found at -O0 and -O2;
#   4. the JSON output parses and has the documented shape;
#   5. opt -verify-each passes with the plugin, alone and in default<O2>.
# CASE.expect: "function NAME" selects a function; other lines are extended
# regexes that must match a line of `ppw-blame static --function NAME`;
# a leading "!" means no line may match; "# cflags: ..." adds flags.
set -euo pipefail
case_name=$1 build=$2 clang=$3
here=$(cd "$(dirname "$0")" && pwd)
source_file=$here/$case_name.c
expect_file=$here/$case_name.expect
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cflags=$(sed -n 's/^# cflags: //p' "$expect_file" 2>/dev/null || true)
# shellcheck disable=SC2206
extra=($cflags)
status=0

fail() {
    echo "FAIL [$case_name] $*"
    status=1
}

run_program() { # binary output-file -> exit status in file.rc
    set +e
    OMP_NUM_THREADS=2 "$1" >"$2" 2>&1
    echo $? >"$2.rc"
    set -e
}

check_expectations() { # static-binary level
    local binary=$1 level=$2 function="" line pattern out
    while IFS= read -r line || [ -n "$line" ]; do
        case $line in
        '' | '#'*) continue ;;
        'function '*)
            function=${line#function }
            out=$work/fn_${level}.txt
            if ! "$build/bin/ppw-blame" static "$binary" --function "$function" >"$out" 2>&1; then
                fail "-$level: ppw-blame static --function $function failed: $(head -1 "$out")"
            fi
            continue ;;
        esac
        pattern=${line#!}
        if [ "$pattern" != "$line" ]; then
            if grep -Eq -- "$pattern" "$out"; then
                fail "-$level $function: unexpected match for: $pattern"
            fi
        elif ! grep -Eq -- "$pattern" "$out"; then
            fail "-$level $function: no line matches: $pattern"
            sed 's/^/    | /' "$out"
        fi
    done <"$expect_file"
}

variables() { # static text -> sorted "function var kind" lines
    awk '/^function /{f=$2} /^  var /{print f, $2, $3}' "$1" | sort
}

for level in O0 O2; do
    with=$work/with_$level without=$work/without_$level
    "$build/bin/ppw-cc" "-$level" "${extra[@]}" "$source_file" -o "$with" 2>"$work/cc_$level.log" ||
        { fail "ppw-cc -$level failed"; cat "$work/cc_$level.log"; continue; }
    if [ -s "$work/cc_$level.log" ]; then
        fail "ppw-cc -$level printed diagnostics"; cat "$work/cc_$level.log"
    fi
    "$clang" -g "-$level" "${extra[@]}" "$source_file" -o "$without"
    run_program "$with" "$work/out_with_$level"
    run_program "$without" "$work/out_without_$level"
    cmp -s "$work/out_with_$level" "$work/out_without_$level" ||
        fail "-$level: output differs with the plugin"
    cmp -s "$work/out_with_$level.rc" "$work/out_without_$level.rc" ||
        fail "-$level: exit status differs with the plugin"
    "$build/bin/ppw-blame" static "$with" >"$work/static_$level.txt"
    check_expectations "$with" "$level"
    # Compiler temporaries never appear as variables, nor do nameless ones.
    if grep -E '^  var ((agg\.)?tmp|coerce|retval|[^ ]*\.addr|) kind=' "$work/static_$level.txt"; then
        fail "-$level: a compiler temporary is reported as a variable"
    fi
    "$build/bin/ppw-blame" static "$with" --format json >"$work/static_$level.json"
    jq -e '.functions | length > 0 and all(.[]; (.name | type == "string")
           and (.variables | all(.[]; (.lines | type == "array")
           and (.exclusive_lines | type == "array") and (.exit | type == "boolean")
           and has("name") and has("kind") and has("type") and has("decl_line")))
           and (.calls | type == "array"))' "$work/static_$level.json" >/dev/null ||
        fail "-$level: JSON output lacks the documented shape"
done

if [ -f "$work/static_O0.txt" ] && [ -f "$work/static_O2.txt" ]; then
    variables "$work/static_O0.txt" >"$work/vars_O0"
    variables "$work/static_O2.txt" >"$work/vars_O2"
    diff -u "$work/vars_O0" "$work/vars_O2" >"$work/vars.diff" ||
        { fail "different variables at -O0 and -O2"; cat "$work/vars.diff"; }
fi

"$clang" -g -O0 -Xclang -disable-llvm-passes -S -emit-llvm "${extra[@]}" "$source_file" \
    -o "$work/input.ll"
opt=$(dirname "$clang")/opt-19
[ -x "$opt" ] || opt=$(command -v opt-19)
"$opt" -load-pass-plugin="$build/lib/ppw.so" -passes=ppw -verify-each -disable-output \
    "$work/input.ll" || fail "opt -passes=ppw -verify-each failed"
"$opt" -load-pass-plugin="$build/lib/ppw.so" -passes='default<O2>' -verify-each \
    -disable-output "$work/input.ll" || fail "opt default<O2> -verify-each with ppw failed"

[ $status -eq 0 ] && echo "PASS [$case_name]"
exit $status
