#!/bin/bash
# ctest cases for ppw-cc (registered in tools/ppw-cc/CMakeLists.txt):
#
#   test_ppw_cc.sh CASE BUILD_DIR SOURCE_DIR
#
# CASE is show, errors, compile, install or inst.  Exit 77 means skipped.
set -euo pipefail
case_=$1 build=$(cd "$2" && pwd) src=$(cd "$3" && pwd)
cc=$build/bin/ppw-cc
PPW_CLANG=$(sed -n 's/^PPW_CLANG:FILEPATH=//p' "$build/CMakeCache.txt")
# Physical path: ppw-cc prints canonical paths, and the checks compare them.
tmp=$(cd "$(mktemp -d "${TMPDIR:-/tmp}/ppw-cc-test.XXXXXX")" && pwd -P)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
expect_eq() { [ "$1" = "$2" ] || fail "$3: expected [$2], got [$1]"; }

# An ASan-built plugin cannot load into clang-19, which is not ASan-built.
plugin_loadable() { ! nm -D --undefined-only "$build/lib/ppw.so" | grep -q __asan_; }

# The link flags ppw-cc appends for a build tree or prefix whose lib is $1.
link_flags() { echo "-L$1 -Wl,-rpath,$1 -lppw -Wl,--build-id"; }

case_show() {
    local lib out
    lib=$(cd "$build/lib" && pwd -P)
    for mode in -c -S -E -M -MM -fsyntax-only -### --version -dumpversion -print-resource-dir; do
        out=$("$cc" --ppw-show "$mode" a.c)
        [[ $out != *-lppw* ]] || fail "$mode must not link: $out"
        [ "$mode" != -### ] || mode="'-###'" # quoted for the shell
        [[ $out == *" -g -fpass-plugin=$lib/ppw.so $mode a.c" ]] || fail "$mode: $out"
    done
    out=$("$cc" -O2 --ppw-show a.c b.o -fopenmp -o 'my prog' -MD)
    expect_eq "${out#* }" "-g -fpass-plugin=$lib/ppw.so -O2 a.c b.o -fopenmp -o 'my prog' -MD $(link_flags "$lib")" "link"
    # libppw before libmpi (OMPI_CC=ppw-cc mpicc appends -lmpi), so that its
    # PMPI wrappers are found first.
    out=$("$cc" --ppw-show a.c -I inc -L /x -lmpi -lm)
    expect_eq "${out#* }" "-g -fpass-plugin=$lib/ppw.so a.c -I inc -L /x $(link_flags "$lib") -lmpi -lm" "before -lmpi"
    out=$("$cc" --ppw-show a.c /usr/lib/libmpi.so.40)
    expect_eq "${out#* }" "-g -fpass-plugin=$lib/ppw.so a.c $(link_flags "$lib") /usr/lib/libmpi.so.40" "before libmpi"
    out=$("$cc" --ppw-show -v)
    [[ $out != *-lppw* ]] || fail "no inputs must not link: $out"
    out=$("$cc" --ppw-show -o out -I inc -x c -)
    [[ $out == *-lppw* ]] || fail "stdin input must link: $out"
    out=$(PPW_CC=/opt/x/clang "$cc" --ppw-show -c a.c)
    expect_eq "${out%% *}" /opt/x/clang "PPW_CC"
    "$cc" --ppw-help | grep -q -- --ppw-show || fail "--ppw-help"
}

case_errors() {
    local rc=0 err
    # ppw.so missing: a copy of ppw-cc whose ../lib is empty.
    mkdir -p "$tmp/bin" "$tmp/lib"
    cp "$cc" "$tmp/bin/ppw-cc"
    err=$("$tmp/bin/ppw-cc" -c a.c 2>&1) || rc=$?
    expect_eq "$rc" 1 "missing plugin: exit status"
    expect_eq "$(wc -l <<<"$err")" 1 "missing plugin: one line"
    [[ $err == "ppw-cc: error: pass plugin $tmp/lib/ppw.so: No such file or directory"* ]] ||
        fail "missing plugin: $err"
    rc=0
    err=$(PPW_CC=/nonexistent/clang "$cc" -c a.c 2>&1) || rc=$?
    expect_eq "$rc" 127 "missing compiler: exit status"
    [[ $err == "ppw-cc: error: cannot run compiler '/nonexistent/clang'"* ]] ||
        fail "missing compiler: $err"
    rc=0
    err=$("$cc" --ppw-nonsense 2>&1) || rc=$?
    expect_eq "$rc" 1 "unknown --ppw- option"
}

# Build examples/demo with ppw-cc ($1) in several ways; outputs must match
# a plain clang build.
build_demo() {
    local ppwcc=$1 heat=$src/examples/demo/heat.c want got
    "$(sed -n 's/^PPW_CLANG:FILEPATH=//p' "$build/CMakeCache.txt")" -O2 "$heat" -o "$tmp/plain"
    want=$("$tmp/plain" 2000 200)
    "$ppwcc" -O2 -c "$heat" -o "$tmp/heat.o"
    "$ppwcc" "$tmp/heat.o" -o "$tmp/heat-linked"
    "$ppwcc" -O0 "$heat" -o "$tmp/heat-O0"
    "$ppwcc" -O2 -fopenmp "$heat" -o "$tmp/heat-omp"
    for exe in heat-linked heat-O0 heat-omp; do
        got=$(OMP_NUM_THREADS=2 "$tmp/$exe" 2000 200)
        expect_eq "$got" "$want" "$exe output"
        readelf -n "$tmp/$exe" | grep -q 'Build ID' || fail "$exe has no build-id"
        readelf -d "$tmp/$exe" | grep -q 'libppw\.so' || fail "$exe does not need libppw"
    done
}

case_compile() {
    plugin_loadable || { echo "SKIP: ppw.so is ASan-instrumented; clang-19 cannot load it"; exit 77; }
    build_demo "$cc"
}

case_install() {
    local prefix=$tmp/prefix
    cmake --install "$build" --prefix "$prefix" >/dev/null
    for f in bin/ppw-cc bin/ppw-blame lib/ppw.so lib/libppw.so; do
        [ -e "$prefix/$f" ] || fail "install lacks $f"
    done
    local out
    out=$("$prefix/bin/ppw-cc" --ppw-show a.c)
    [[ $out == *" -fpass-plugin=$prefix/lib/ppw.so a.c $(link_flags "$prefix/lib")" ]] ||
        fail "installed ppw-cc: $out"
    plugin_loadable || { echo "SKIP: ppw.so is ASan-instrumented; clang-19 cannot load it"; exit 77; }
    build_demo "$prefix/bin/ppw-cc"
    readelf -d "$tmp/heat-omp" | grep -q "RUNPATH.*\[$prefix/lib\]" || fail "rpath is not $prefix/lib"
}

# GASP's flags become PPW_PASS_OPTIONS tokens, after the environment's own.
case_inst() {
    local lib out rc err plugin_flag
    lib=$(cd "$build/lib" && pwd -P)
    plugin_flag="-fpass-plugin=$lib/ppw.so"
    unset PPW_PASS_OPTIONS
    for flag in inst inst-local no-inst; do
        out=$("$cc" --ppw-show "--$flag" -c a.c)
        expect_eq "$out" "PPW_PASS_OPTIONS=$flag $PPW_CLANG -g $plugin_flag -c a.c" "--$flag"
    done
    # Function events: the marker flag that reveals no_instrument_function.
    out=$("$cc" --ppw-show -O2 --inst-functions -c a.c)
    expect_eq "$out" "PPW_PASS_OPTIONS=inst-functions,inst-marker $PPW_CLANG -g $plugin_flag \
-finstrument-functions-after-inlining -O2 -c a.c" "--inst-functions"
    out=$("$cc" --ppw-show --inst-only=sel.txt -c a.c)
    expect_eq "$out" "PPW_PASS_OPTIONS=inst-only=sel.txt,inst-marker $PPW_CLANG -g $plugin_flag \
-finstrument-functions-after-inlining -c a.c" "--inst-only=FILE"
    expect_eq "$("$cc" --ppw-show --inst-only sel.txt -c a.c)" "$out" "--inst-only FILE"
    # The file is no input: nothing to link.
    out=$("$cc" --ppw-show --inst-only sel.txt -v)
    [[ $out != *-lppw* ]] || fail "--inst-only FILE counted as an input: $out"
    # A user's own -finstrument-functions* keeps its attributes: no marker.
    out=$("$cc" --ppw-show --inst-functions -finstrument-functions -c a.c)
    expect_eq "$out" "PPW_PASS_OPTIONS=inst-functions $PPW_CLANG -g $plugin_flag \
-finstrument-functions -c a.c" "user -finstrument-functions"
    # Merged after the environment's options, quoted when needed.
    out=$(PPW_PASS_OPTIONS='verbose no-export' "$cc" --ppw-show --no-inst -c a.c)
    expect_eq "$out" "PPW_PASS_OPTIONS='verbose no-export,no-inst' $PPW_CLANG -g $plugin_flag -c a.c" \
        "merge"
    out=$(PPW_PASS_OPTIONS=verbose "$cc" --ppw-show -c a.c)
    expect_eq "${out%% *}" "PPW_PASS_OPTIONS=verbose" "inherited"
    # ... and the compiler really gets them.
    printf '#!/bin/sh\necho "$PPW_PASS_OPTIONS"\n' >"$tmp/fakecc"
    chmod +x "$tmp/fakecc"
    out=$(PPW_CC=$tmp/fakecc PPW_PASS_OPTIONS=verbose "$cc" --inst -c a.c)
    expect_eq "$out" "verbose,inst" "environment of the compiler"
    out=$(PPW_CC=$tmp/fakecc "$cc" -c a.c)
    expect_eq "$out" "" "no options: no variable"
    for bad in "--inst-only" "--inst-only=" "--inst-only=a,b" "--inst-only=a b"; do
        rc=0
        err=$("$cc" --ppw-show -c a.c "$bad" 2>&1) || rc=$?
        expect_eq "$rc" 1 "$bad: exit status"
        expect_eq "$(wc -l <<<"$err")" 1 "$bad: one line"
        [[ $err == "ppw-cc: error: --inst-only"* ]] || fail "$bad: $err"
    done
    "$cc" --ppw-help | grep -q -- --inst-functions || fail "--ppw-help lacks --inst-functions"

    plugin_loadable || { echo "SKIP: ppw.so is ASan-instrumented; clang-19 cannot load it"; exit 77; }
    local heat=$src/examples/demo/heat.c
    "$cc" -O2 --no-inst -c "$heat" -o "$tmp/none.o"
    nm "$tmp/none.o" | grep -q gasp && fail "--no-inst: GASP symbols in the object"
    "$cc" -O2 --inst-functions -c "$heat" -o "$tmp/func.o"
    nm "$tmp/func.o" | grep -q ' w gasp_event_notify$' || fail "--inst-functions: no weak tool"
    nm "$tmp/func.o" | grep -q cyg_profile && fail "--inst-functions: __cyg_profile calls remain"
    return 0
}

cd "$tmp"
"case_$case_"
echo "ok: ppw-cc $case_"
