# Source names in every output (docs/ppw-blame.md, "Names"), for the
# scripts that run programs for real (sh and bash): source it; the caller
# defines fail().
#
# Functions the compiler makes and no view may name (basic regular
# expression, for grep): OpenMP's outlined bodies and their debug
# wrappers, and task entries.
compiler_names_re='omp_outlined\|_debug__\|\.omp_task_entry'

# source_names_only BLAME RUN BINARY: every view and export of run RUN, in
# every format, names no compiler-made function (omp_outlined, _debug__,
# .omp_task_entry.) and no frame of libppw (the functions the run's dump
# finds in libppw's module, less _init and _fini, which every shared
# object has and a library frame of another may show; `ppw-blame
# intrusion` reports their cost).  The
# folded export with locations is the one exception: `report --folded`
# needs its linkage names to attribute the samples again.  Leaves in
# names_ppw the libppw functions sampled, '|'-separated.  Every variable
# row of report, in both views, has a declaration line.
source_names_only() {
    names_blame=$1 names_run=$2 names_bin=$3
    names_ppw=$("$names_blame" dump "$names_run" --what samples --format json |
        "${JQ:-jq}" -r '[.samples[].glued[] | select(.module // "" | test("/libppw[^/]*$"))
            | .function, .source[].function | select(. != null)]
            | unique - ["_init", "_fini"] | .[]' | tr '\n' '|')
    names_ppw=${names_ppw%|}
    # and the source files of libppw's frames, which `lines` never lists
    "$names_blame" dump "$names_run" --what samples --format json |
        "${JQ:-jq}" '[.samples[].glued[] | select(.module // "" | test("/libppw[^/]*$"))
            | .source[].file | select(. != null)] | unique' >names.files
    "$names_blame" lines "$names_run" --binary "$names_bin" --top 0 --format json >names.out ||
        fail "ppw-blame lines: $(cat names.out)"
    "${JQ:-jq}" -e --slurpfile f names.files '[.lines[].file] - $f[0] == [.lines[].file]' \
        names.out >/dev/null || fail "ppw-blame lines lists libppw's lines: $("${JQ:-jq}" -c \
        --slurpfile f names.files '[.lines[] | select(.file | IN($f[0][])) | "\(.file):\(.line)"]' \
        names.out)"
    for names_cmd in "report" "report --format json" "report --format tsv" "report --format csv" \
        "report --view access" "code" "code --format json" "code --format tsv" "code --format csv" \
        "code --flat" "code --flat --format json" "lines" "lines --format json" \
        "lines --format tsv" "lines --format csv" "imbalance" "imbalance --format json" \
        "imbalance --format csv" "analyze" "analyze --format json" "flame -o -" \
        "flame --variables -o -" "html -o -" "export --to speedscope" \
        "export --to speedscope --variables" "export --to folded --no-locations" \
        "export --to folded --no-locations --variables" "export --to pprof"; do
        # shellcheck disable=SC2086
        "$names_blame" $names_cmd "$names_run" --binary "$names_bin" --top 0 >names.out \
            2>names.err ||
            "$names_blame" $names_cmd "$names_run" --binary "$names_bin" >names.out 2>names.err ||
            { fail "ppw-blame $names_cmd: $(cat names.err)"; continue; }
        gzip -dcf names.out >names.txt
        names_re=$compiler_names_re
        if grep -aq "$names_re" names.txt; then
            fail "ppw-blame $names_cmd names compiler-made functions: \
$(grep -ao "[^ \";]*\($names_re\)[^ \";]*" names.txt | sort -u | head -5 | tr '\n' ' ')"
        fi
        case $names_cmd in code* | export* | flame*) ;; *) continue ;; esac
        if [ -n "$names_ppw" ] && grep -aEq "(^|[\";> ])($names_ppw)([\"; <]|$)" names.txt; then
            fail "ppw-blame $names_cmd shows libppw's frames: \
$(grep -aEo "(^|[\";> ])($names_ppw)([\"; <]|$)" names.txt | sort -u | head -5 | tr '\n' ' ')"
        fi
    done
    # every variable row has a declaration line, in both views
    for names_view in blame access; do
        "$names_blame" report "$names_run" --binary "$names_bin" --top 0 --format json \
            --view "$names_view" >names.out 2>names.err ||
            { fail "ppw-blame report --view $names_view: $(cat names.err)"; continue; }
        "${JQ:-jq}" -e '[.variables[] | select(.decl | test(":[1-9][0-9]*$") | not)] == []' \
            names.out >/dev/null || fail "report --view $names_view: variables without a \
declaration line: $("${JQ:-jq}" -c '[.variables[] | select(.decl | test(":[1-9][0-9]*$") | not)
                | [.name, .function, .decl]]' names.out)"
    done
    echo "  source names only: $(echo "$names_ppw" | tr '|' '\n' | grep -c .) functions of libppw" \
        "sampled, none shown; every variable row has a declaration line"
    rm -f names.out names.err names.txt names.files
}
