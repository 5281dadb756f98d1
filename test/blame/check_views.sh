#!/bin/sh
# ppw-blame report, code and lines on folded stacks over programs built
# with ppw-cc: the two golden tables of seed 002 (Figures 3.3 and 4.9) at
# -O0 and -O2, transfer through calls, OpenMP forks and tasks, pthreads,
# fields, globals and library calls, the blame point, output shapes, text
# width, and errors.
#
# usage: check_views.sh BUILD_DIR SOURCE_DIR WORKDIR [JQ]
# Exits 77 (ctest SKIP) when jq is missing.
set -u
BUILD=$1 SRC=$2 W=$3 JQ=${4:-jq}
PPW_BLAME=$BUILD/bin/ppw-blame PPW_CC=$BUILD/bin/ppw-cc
. "$SRC/test/unit/cli_helpers.sh"
. "$SRC/test/lib/names.sh" # compiler_names_re

command -v "$JQ" >/dev/null 2>&1 || { echo "SKIP: jq not found"; exit 77; }
rm -rf "$W" && mkdir -p "$W" && cd "$W" || exit 1

# width_ok: no line of out.txt is wider than 100 columns
width_ok() {
    awk -v what="$1" 'length($0) > 100 { print what ": " length($0) " columns: " $0; bad = 1 }
                      END { exit bad }' out.txt >&2 || fail "$1: text wider than 100 columns"
}
build() { # NAME SOURCE LEVEL [FLAGS...]
    name=$1 source=$2 level=$3
    shift 3
    "$PPW_CC" "-$level" "$@" "$source" -o "$name" 2>cc.log || { fail "ppw-cc $name"; cat cc.log; }
}
# var FUNCTION NAME: the jq expression of that variable's record
var() { echo "(.variables[] | select(.function == $1 and .name == \"$2\"))"; }
near() { echo "((($1) - ($2)) | fabs < 0.05)"; }

# ---- golden: Figure 3.3 (foo at lines 5-17, called from main at line 22) ----
cat >fig33.folded <<'EOF'
# seed 002 Figure 3.3: sample points 1, 2 and 3
main@22;foo@9 1
main@22;foo@10 1
main@22;foo@14 1
EOF
for level in O0 O2; do
    build fig33_$level "$SRC/test/pass/fig33.c" $level
    expect_status 0 "$PPW_BLAME" report --folded fig33.folded --binary fig33_$level --format json \
        --top 0
    # the seed's Table 3.1 for foo's variables, exactly: with the blame
    # point at foo, x is foo's parameter
    expect_status 0 "$PPW_BLAME" report --folded fig33.folded --binary fig33_$level --format json \
        --top 0 --blame-point foo
    check "fig33 $level foo" "$(near "$(var '"foo"' i).inclusive" 33.33) and
        $(near "$(var '"foo"' temp).inclusive" 66.67) and $(near "$(var '"foo"' x).inclusive" 100)
        and ([$(var '"foo"' med)] | length == 0)
        and $(near "$(var '"foo"' i).exclusive" 33.33) and $(near "$(var '"foo"' temp).exclusive" 33.33)
        and $(near "$(var '"foo"' x).exclusive" 33.33)"
    # up to main: x is main's data (one datum, one row, x its alias); r
    # receives foo's return value, which holds temp's blame.  foo's scalar
    # locals i and temp are temporaries of that data, not listed by
    # default (rule 11)...
    expect_status 0 "$PPW_BLAME" report --folded fig33.folded --binary fig33_$level --format json \
        --top 0
    check "fig33 $level temporaries" "$(near "$(var '"main"' data).inclusive" 100) and
        $(near "$(var '"main"' r).inclusive" 66.67) and ([$(var '"foo"' i), $(var '"foo"' temp)]
        | length == 0) and .temporaries_not_listed == 2"
    # ... and the same numbers with them
    expect_status 0 "$PPW_BLAME" report --folded fig33.folded --binary fig33_$level --format json \
        --top 0 --temporaries
    check "fig33 $level main" "$(near "$(var '"main"' data).inclusive" 100) and
        $(near "$(var '"main"' r).inclusive" 66.67) and .total_samples == 3
        and ([$(var '"foo"' x)] | length == 0) and $(var '"main"' data).aliases == [{\"name\": \"x\", \"function\": \"foo\"}]
        and $(near "$(var '"foo"' i).inclusive" 33.33) and $(near "$(var '"foo"' temp).inclusive" 66.67)"
    check "fig33 $level exclusive" "$(near "$(var '"foo"' i).exclusive" 33.33) and
        $(near "$(var '"foo"' temp).exclusive" 33.33)
        and $(near "$(var '"main"' data).exclusive" 33.33) and $(var '"main"' r).exclusive == 0"
    check "fig33 $level context" "$(var '"foo"' temp).context == \"main > foo\" and
        $(var '"main"' data).context == \"main\""
done
ok fig33

# ---- golden: Figure 4.9 (statements at lines 1-5, fig49 called at 2005) ----
cat >fig49.folded <<'EOF'
main@2005;fig49@1 1
main@2005;fig49@fig49.c:2 1
main@2005;fig49@2:9 1
main@2005;fig49@3 1
main@2005;fig49@5 1
EOF
for level in O0 O2; do
    build fig49_$level "$SRC/test/pass/fig49.c" $level
    # fig49's locals, as the figure's table lists them (temporaries of
    # main's call: --temporaries, rule 11)
    expect_status 0 "$PPW_BLAME" report --folded fig49.folded --binary fig49_$level --format json \
        --temporaries
    for row in "a 20 20" "b 80 40" "c 100 20" "i 20 20"; do
        set -- $row
        check "fig49 $level $1" "$(near "$(var '"fig49"' "$1").inclusive" "$2") and
            $(near "$(var '"fig49"' "$1").exclusive" "$3")"
    done
done
ok fig49

# ---- what no variable was charged with, by cause ----
# foo@0: line 0 (2); under foo@9 in libomp: charged to foo's line 9 by the
# library rule for blame, and for access too (3: line 9, the loop header,
# reads x, which its variable subscripts); before main (4); main's line
# 20, the opening brace, in no set (5); foo@9 itself blames i (1).
printf 'main@22;foo@9 1\nmain@22;foo@0 2\nmain@22;foo@9;__kmpc_barrier 3\n_start;__libc_start_main 4\nmain@20 5\n' \
    >causes.folded
expect_status 0 "$PPW_BLAME" report --folded causes.folded --binary fig33_O0 --format json
check causes '.unattributed == {"blame": {"runtime_wait": 0, "no_graph": 4, "line_0": 2, "no_variable": 5},
    "access": {"runtime_wait": 0, "no_graph": 4, "line_0": 2, "no_variable": 5}}'
expect_status 0 "$PPW_BLAME" report --folded causes.folded --binary fig33_O0
grep -q "^note: 73.3% of the samples blame no variable:$" out.txt &&
    grep -q "^      26.7% no blame graph, 13.3% line 0, 33.3% lines of no variable$" out.txt ||
    fail "causes text: $(cat out.txt)"
ok causes

# ---- the report's JSON shape ----
expect_status 0 "$PPW_BLAME" report --folded fig33.folded --binary fig33_O0 --format json \
    --temporaries
check shape 'keys_unsorted == ["total_samples", "metric", "variables", "view", "accessed_samples",
        "unattributed", "temporaries_not_listed"]
    and (.unattributed | keys_unsorted == ["blame", "access"] and (.blame | keys_unsorted ==
        ["runtime_wait", "no_graph", "line_0", "no_variable"]))
    and .view == "blame" and .accessed_samples == 2
    and (.metric | keys_unsorted == ["name", "unit", "total"]) and .metric.total == 3
    and all(.variables[]; keys_unsorted == ["name", "function", "kind", "type", "decl",
        "context", "samples", "inclusive", "exclusive", "access", "read", "write", "aliases"]
        and (.inclusive > 0 and .inclusive <= 100) and (.exclusive <= .inclusive)
        and (.access >= 0 and .access <= 100) and ((.read + .write - .access) | fabs < 1e-9)
        and (.decl | test(":[0-9]+$")) and (.samples | type == "number"))
    and ([.variables[].inclusive] == ([.variables[].inclusive] | sort | reverse))
    and .temporaries_not_listed == 0'
check kinds "$(var '"main"' data).kind == \"local\" and $(var '"foo"' i).kind == \"local\"
    and $(var '"main"' data).type == \"int[10]\" and ($(var '"main"' data).decl | endswith(\"fig33.c:21\"))"
expect_status 0 "$PPW_BLAME" report --folded fig33.folded --binary fig33_O0 --format json \
    --blame-point foo
check kinds_param "$(var '"foo"' x).kind == \"parameter\" and $(var '"foo"' x).type == \"int *\"
    and ($(var '"foo"' x).decl | endswith(\"fig33.c:5\"))"
ok report_json

# ---- the access view: foo's write through x (line 14) is main's data's ----
expect_status 0 "$PPW_BLAME" report --folded fig33.folded --binary fig33_O0 --format json \
    --view access --top 0
# (and foo@9, the loop's control line, reads x: its variable subscripts x)
check access_fig33 '.view == "access" and ([.variables[] | [.function, .name]] == [["main", "data"]])
    and (.variables[0] | ((.read - 100 / 3) | fabs < 1e-6) and ((.write - 100 / 3) | fabs < 1e-6)
    and .inclusive == 100)'
ok access

# ---- transfer: fields through a pointer parameter, by access path ----
build fields "$SRC/test/pass/fields.c" O0
echo 'main@20;heat@12 4' >fields.folded
expect_status 0 "$PPW_BLAME" report --folded fields.folded --binary fields --format json
check fields "$(var '"main"' g).inclusive == 100 and
    $(var '"main"' 'g.cells[].energy').inclusive == 100 and $(var '"main"' g.cells).exclusive == 100
    and ([.variables[] | select(.function == \"heat\")] | length == 0)
    and $(var '"main"' 'g.cells[].energy').aliases == [{\"name\": \"g->cells[].energy\", \"function\": \"heat\"}]"
ok fields

# ---- pthread_create: the worker's argument and its fields ----
build pthread_struct "$SRC/test/pass/pthread_struct.c" O0 -pthread
echo 'main@29;worker@13 3' >pthread.folded
echo 'main@29;worker@14 1' >>pthread.folded
expect_status 0 "$PPW_BLAME" report --folded pthread.folded --binary pthread_struct --format json \
    --temporaries
check pthread "$(var '"main"' jobs).inclusive == 100 and
    $(var '"main"' 'jobs[].result').inclusive == 100 and $(var '"main"' 'jobs[].result').exclusive == 25
    and ([$(var '"worker"' 'arg->result')] | length == 0) and $(var '"worker"' s).inclusive == 75
    and ([$(var '"main"' data)] | length == 0)"
ok pthread

# ---- OpenMP: a parallel for (fork) and a task ----
build omp_for "$SRC/test/pass/omp_for.c" O0 -fopenmp
echo 'main@10;main.omp_outlined@10;main.omp_outlined_debug__@12 2' >omp.folded
echo 'main@10;main.omp_outlined@10;main.omp_outlined_debug__@13 2' >>omp.folded
expect_status 0 "$PPW_BLAME" report --folded omp.folded --binary omp_for --format json
check omp_for "$(var '"main"' a).inclusive == 50 and $(var '"main"' sum).inclusive == 100 and
    $(var '"main"' a).exclusive == 50 and ([$(var '"main"' n)] | length == 0)
    and ([.variables[] | select(.kind == \"parameter\")] | length == 0)"
# names: the variables of the outlined loop are main's: the reduction's
# private sum, declared by the compiler inside it, is main's sum (one row
# per datum), a is main's a; the wrapper and its _debug__ twin are one
# frame (the loop index below)
construct='main [omp parallel for, omp_for.c:10]'
check omp_for_names "all(.variables[]; .function == \"main\" and .context == \"main\")"
# and so is the loop index the source declares in it
echo 'main@10;main.omp_outlined@10;main.omp_outlined_debug__@11 1' >index.folded
expect_status 0 "$PPW_BLAME" report --folded index.folded --binary omp_for --format json
check omp_for_index "[.variables[] | select(.name == \"i\") | [.function, .context]] | unique
    == [[\"main\", \"main > $construct\"]]"
# the outlined functions' parameters are main's shared variables: listed
# only when the blame point stops inside
expect_status 0 "$PPW_BLAME" report --folded omp.folded --binary omp_for --format json \
    --blame-point main.omp_outlined
check omp_for_blame_point "all(.variables[]; .function == \"main\"
        and .context == \"main > $construct\")
    and (.variables[] | select(.name == \"a\") | .inclusive == 50 and .kind == \"parameter\")
    and any(.variables[]; .name == \"sum\" and .kind == \"parameter\")"
build omp_task "$SRC/test/pass/omp_task.c" O0 -fopenmp
echo 'main@8;main.omp_outlined@8;main.omp_outlined_debug__@11;.omp_task_entry.@11;.omp_outlined.@12 5' \
    >task.folded
expect_status 0 "$PPW_BLAME" report --folded task.folded --binary omp_task --format json
check omp_task "([.variables[] | select(.name == \"x\") | [.function, .inclusive, .exclusive, .context]])
    == [[\"main\", 100, 100, \"main\"]]"
ok openmp

# ---- names in the code views: a frame per construct, runtime chains as one
# frame named for what the program called, libppw left out ----
expect_status 0 "$PPW_BLAME" code --folded omp.folded --binary omp_for --format json
check code_construct "(.tree[0].children | length == 1) and (.tree[0].children[0]
    | .function == \"$construct\" and .call_line == 10 and .self_samples == 4)"
expect_status 0 "$PPW_BLAME" code --folded task.folded --binary omp_task --format json
check code_task '.tree[0].children[0] | .function == "main [omp parallel, omp_task.c:8]"
    and .call_line == 8 and (.children[0] | .function == "main [omp task, omp_task.c:11]"
        and .call_line == 11 and .self_samples == 5 and .children == [])'
outlined='main@10;main.omp_outlined@10;main.omp_outlined_debug__'
{
    echo "$outlined@10;__kmpc_for_static_init_4;[libomp.so.5];[libomp.so.5] 3"
    echo "$outlined@13;__kmpc_reduce_nowait;__kmp_barrier 2"
    echo "$outlined@12;gasp_event_notify;ppw_measure_event 1"
    echo "main@10;__kmpc_fork_call;[libomp.so.5];[libppw.so.0];write 1"
    echo "[libomp.so.5];[libomp.so.5] 1"
} >runtime.folded
expect_status 0 "$PPW_BLAME" code --folded runtime.folded --binary omp_for --format json
check code_runtime "(.tree | map({function, self_samples}))
        == [{function: \"main\", self_samples: 0}, {function: \"[libomp]\", self_samples: 1}]
    and ([.tree[0].children[] | {function, self_samples, n: (.children | length)}]
         | sort_by(.function))
        == [{function: \"[omp parallel]\", self_samples: 1, n: 0},
            {function: \"$construct\", self_samples: 1, n: 2}]
    and ([.tree[0].children[] | select(.function == \"$construct\") | .children[]
          | {function, self_samples, children}] | sort_by(.function))
        == [{function: \"[omp for]\", self_samples: 3, children: []},
            {function: \"[omp reduction]\", self_samples: 2, children: []}]"
# every view and export names source functions only, in every format (but
# the folded export with locations, which report --folded reads back: it
# needs the linkage names)
for input in "omp.folded omp_for" "task.folded omp_task" "runtime.folded omp_for"; do
    set -- $input
    for view in report "report --format json" "report --format tsv" "report --format csv" \
        "report --view access" code "code --format json" "code --format tsv" "code --format csv" \
        "code --flat" lines "lines --format json" "lines --format csv" imbalance \
        "imbalance --format json" "imbalance --format csv" "flame -o -" "flame --variables -o -" \
        "html -o -" "export --to speedscope" "export --to folded --no-locations --variables" \
        "export --to pprof"; do
        # shellcheck disable=SC2086
        expect_status 0 "$PPW_BLAME" $view --folded "$1" --binary "$2"
        ! gzip -dcf out.txt | grep -aq "$compiler_names_re\\|gasp_\\|ppw_" ||
            fail "$view on $1 names a compiler-made or libppw function: $(gzip -dcf out.txt |
                grep -ao "[^ ;\"]*\\($compiler_names_re\\|gasp_\\|ppw_\\)[^ ;\"]*" |
                sort -u | head -3)"
    done
done
ok names_code

# ---- the context wraps at its ' > ', never cut; widths as below ----
# joined: the text report's context lines for the first variable, joined
# back into one line
joined() {
    awk -v in35="$(printf '%35sin ' '')" -v more="$(printf '%38s> ' '')" \
        -v on="$(printf '%40s' '')" '
        !going && !done && index($0, in35) == 1 { ctx = substr($0, 39); going = 1; next }
        going && index($0, more) == 1 { ctx = ctx " > " substr($0, 41); next }
        going && index($0, on) == 1 && substr($0, 41, 1) != " " { ctx = ctx substr($0, 41); next }
        going { done = 1; going = 0 }
        END { print ctx }' out.txt
}
expect_status 0 "$PPW_BLAME" report --folded task.folded --binary omp_task --blame-point .omp_outlined.
width_ok "report of a task"
grep -q '^ \{35\}in main > main \[omp parallel, omp_task.c:8\]$' out.txt &&
    grep -q '^ \{38\}> main \[omp task, omp_task.c:11\]$' out.txt ||
    fail "the task's context does not wrap at ' > ': $(cat out.txt)"
ok wrap

# ---- a declaration line for a variable of code the compiler made without
# one: a taskloop's task body has line 0, its loop variable i none of its
# own; the first line of i's blame set (the loop's, 14) stands for it ----
build taskloop "$SRC/test/e2e/omp_taskloop.c" O0 -fopenmp
echo '.omp_outlined.@15 2' >taskloop.folded
expect_status 0 "$PPW_BLAME" report --folded taskloop.folded --binary taskloop --format json --top 0
check taskloop_decl '[.variables[] | select(.name == "i") | .decl | endswith("omp_taskloop.c:14")]
    == [true] and all(.variables[]; .decl | test(":[1-9][0-9]*$"))'
ok taskloop_decl

# ---- globals are one program-level variable ----
build globals "$SRC/test/pass/globals.c" O0
printf 'main@21;add@8 3\nmain@23;reset@15 1\nmain@23;reset@14 1\n' >globals.folded
expect_status 0 "$PPW_BLAME" report --folded globals.folded --binary globals --format json
check globals '([.variables[] | select(.name == "total")] | length == 1)
    and (.variables[] | select(.name == "total") | .function == null and .context == null
         and .kind == "global" and .inclusive == 80)
    and (.variables[] | select(.name == "resets") | .kind == "static" and .function == "reset")'
ok globals

# ---- library code: charged to the call site, and to the written argument ----
build libcall "$SRC/test/blame/libcall.c" O2
printf 'main@12;strcpy 2\nmain@12;__strcpy_avx2 1\nmain@10;__memset_avx2_unaligned 1\n' >lib.folded
expect_status 0 "$PPW_BLAME" report --folded lib.folded --binary libcall --format json
check library "$(var '"main"' dst).inclusive == 100 and $(var '"main"' dst).exclusive == 75 and
    $(var '"main"' src).exclusive == 25"
ok library

# ---- the access view through calls: shares move to the caller's actuals ----
# (the load of the pointer g->cells only locates the element: not counted)
# (acc FUNCTION NAME: [read, write] of that variable, rounded to 0.01)
acc() { echo "($(var "$1" "$2") | [.read, .write] | map(. * 100 | round / 100))"; }
expect_status 0 "$PPW_BLAME" report --folded fields.folded --binary fields --format json --view access
check access_fields "$(acc '"main"' 'g.cells[].energy') == [50, 50] and (.variables | length == 1)"
expect_status 0 "$PPW_BLAME" report --folded pthread.folded --binary pthread_struct --format json \
    --view access
check access_pthread "$(acc '"main"' 'jobs[].data') == [75, 0] and
    $(acc '"main"' 'jobs[].result') == [0, 12.5] and $(acc '"main"' 'jobs[].id') == [12.5, 0]"
expect_status 0 "$PPW_BLAME" report --folded omp.folded --binary omp_for --format json --view access
check access_omp_for "$(acc '"main"' a) == [50, 50] and (.variables | length == 1)"
expect_status 0 "$PPW_BLAME" report --folded task.folded --binary omp_task --format json --view access
check access_omp_task "$(acc '"main"' x) == [0, 50]
    and (.variables[] | select(.name == \"n\") | [.read, .write]) == [50, 0]"
expect_status 0 "$PPW_BLAME" report --folded globals.folded --binary globals --format json --view access
check access_globals "$(acc null total) == [30, 50] and $(acc '"reset"' resets) == [10, 10]"
expect_status 0 "$PPW_BLAME" report --folded lib.folded --binary libcall --format json --view access
check access_library "$(acc '"main"' src) == [37.5, 25] and $(acc '"main"' dst) == [0, 37.5]"
ok access_transfer

# ---- options: --exclusive, --top, --blame-point, formats ----
expect_status 0 "$PPW_BLAME" report --folded fig33.folded --binary fig33_O0 --format json \
    --exclusive --top 2
check exclusive_top '(.variables | length == 2) and .view == "exclusive"
    and ([.variables[].exclusive] == ([.variables[].exclusive] | sort | reverse))'
cp out.txt exclusive_flag.json
expect_status 0 "$PPW_BLAME" report --folded fig33.folded --binary fig33_O0 --format json \
    --view exclusive --top 2
cmp -s out.txt exclusive_flag.json || fail "--view exclusive differs from --exclusive"
expect_status 0 "$PPW_BLAME" report --folded fig33.folded --binary fig33_O0 --format json \
    --blame-point foo --top 0
check blame_point '([.variables[].function] | unique) == ["foo"]'
expect_status 0 "$PPW_BLAME" report --folded fig33.folded --binary fig33_O0 --format tsv --top 0
awk -F'\t' 'NR == 1 { n = NF } NF != n || NF != 17 { exit 1 }' out.txt ||
    fail "tsv: every row has the 17 columns of the header"
grep -q "^data	main	local	int\[10\]	.*fig33.c	21	main	3	1	100.000	33.333" out.txt ||
    fail "tsv row of data: $(cat out.txt)"
ok options

# ---- code and lines ----
expect_status 0 "$PPW_BLAME" code --folded fig33.folded --binary fig33_O0 --format json
check code_tree '.total_samples == 3 and (.tree | length == 1) and .tree[0].function == "main"
    and .tree[0].inclusive == 100 and .tree[0].self == 0 and .tree[0].call_line == null
    and (.tree[0].children[0] | .function == "foo" and .call_line == 22 and .self == 100
         and .self_samples == 3 and .children == [])'
expect_status 0 "$PPW_BLAME" code --folded fig33.folded --binary fig33_O0 --flat --format json
check code_flat '.functions == [{"function": "foo", "samples": 3, "self_samples": 3,
    "inclusive": 100, "self": 100}, {"function": "main", "samples": 3, "self_samples": 0,
    "inclusive": 100, "self": 0}]'
expect_status 0 "$PPW_BLAME" code --folded lib.folded --binary libcall --flat --format json
# strcpy and its CPU variant are one call of the program, named by the call
# on line 12; the memset on line 10 is no call of the graph: named by its
# entry, __memset_avx2_unaligned
check code_library '.functions == [
    {"function": "main", "samples": 4, "self_samples": 0, "inclusive": 100, "self": 0},
    {"function": "[strcpy]", "samples": 3, "self_samples": 3, "inclusive": 75, "self": 75},
    {"function": "[memset]", "samples": 1, "self_samples": 1, "inclusive": 25, "self": 25}]'
expect_status 0 "$PPW_BLAME" lines --folded fig33.folded --binary fig33_O0 --format json
check lines '(.lines | length == 4) and (.lines[0:3] | all(.self_samples == 1 and .function == "foo"))
    and ([.lines[0:3][].line] | sort) == [9, 10, 14]
    and (.lines[3] | .line == 22 and .self == 0 and .inclusive == 100
         and (.file | endswith("fig33.c")))'
expect_status 0 "$PPW_BLAME" lines --folded lib.folded --binary libcall --format json
check lines_library '.lines[0] | .line == 12 and .self_samples == 3 and .function == "main"'
ok code_lines

# ---- text: aligned, within 100 columns ----
build wide "$SRC/test/blame/wide.c" O0
deep=main@22
i=0
while [ $i -lt 40 ]; do
    deep="$deep;a_function_with_a_really_long_name_to_check_the_widths_of_every_view_of_ppw_blame@13"
    i=$((i + 1))
done
echo "$deep;a_function_with_a_really_long_name_to_check_the_widths_of_every_view_of_ppw_blame@15 7" \
    >wide.folded
for view in report "report --exclusive" code "code --flat" lines; do
    # shellcheck disable=SC2086
    expect_status 0 "$PPW_BLAME" $view --folded wide.folded --binary wide --top 0
    width_ok "$view"
done
expect_status 0 "$PPW_BLAME" report --folded wide.folded --binary wide --format json --top 0
check wide "$(var '"main"' s).inclusive == 100"
# the deep function's context is longer than a line: all of it is there
context=$("$JQ" -r '.variables[0].context' out.txt)
expect_status 0 "$PPW_BLAME" report --folded wide.folded --binary wide --top 1
[ "$(joined)" = "$context" ] || fail "wide: the text context '$(joined)' is not '$context'"
! grep -q '^ *in \.\.\.' out.txt || fail "wide: a context was cut: $(cat out.txt)"
expect_status 0 "$PPW_BLAME" report --folded fig33.folded --binary fig33_O0 --temporaries
width_ok report
grep -q '^ 100.0   33.3         3         -  data  *local  *int\[10\]  *fig33.c:21$' out.txt ||
    fail "report text row of data: $(cat out.txt)"
grep -q '^ *in main > foo$' out.txt || fail "report text context line"
expect_status 0 "$PPW_BLAME" report --folded fig33.folded --binary fig33_O0
grep -q '^note: 2 scalar locals of called functions not listed (--temporaries)$' out.txt &&
    ! grep -q '^ *in main > foo$' out.txt || fail "report text without temporaries: $(cat out.txt)"
ok text

# ---- errors ----
printf 'main@22;foo@9 1\nmain@22;foo@9\n' >bad.folded
expect_status 1 "$PPW_BLAME" report --folded bad.folded --binary fig33_O0
one_error_line "bad.folded:2: expected frames and a count, as in 'main@20;foo@9 3'"
printf 'main@22;foo@9 0x10\n' >bad.folded
expect_status 1 "$PPW_BLAME" report --folded bad.folded --binary fig33_O0
one_error_line "bad.folded:1: the count '0x10' is not a whole number from 1 to 10^15"
printf 'main@22;foo@x9 1\n' >bad.folded
expect_status 1 "$PPW_BLAME" report --folded bad.folded --binary fig33_O0
one_error_line "bad.folded:1: frame 'foo@x9': the line must be a number"
printf '\n# comment\nmain@22;;foo@9 1\n' >bad.folded
expect_status 1 "$PPW_BLAME" report --folded bad.folded --binary fig33_O0
one_error_line "bad.folded:3: frame '' has no function name"
printf 'main@22;fooo@9 1\n' >bad.folded
expect_status 1 "$PPW_BLAME" lines --folded bad.folded --binary fig33_O0
one_error_line "bad.folded:1: no function named 'fooo' in the static graphs of fig33_O0"
printf 'main@22;foo 1\n' >bad.folded
expect_status 1 "$PPW_BLAME" code --folded bad.folded --binary fig33_O0
one_error_line "bad.folded:1: frame 'foo' has a blame graph: give its location (foo@LINE, or foo@0 without a line)"
printf 'main@22;foo@9;%%3g 1\n' >bad.folded
expect_status 1 "$PPW_BLAME" report --folded bad.folded --binary fig33_O0
one_error_line "bad.folded:1: frame '%3g': a '%' in the name must start an escape %XX (%25 is '%')"
printf 'main@22;foo@9;memcpy@@a%%00.c:3:1 1\n' >bad.folded
expect_status 1 "$PPW_BLAME" report --folded bad.folded --binary fig33_O0
one_error_line "bad.folded:1: frame 'memcpy@@a%00.c:3:1': a '%' in the file must start an escape"
printf 'main@22;-;foo@9 1\n' >bad.folded
expect_status 1 "$PPW_BLAME" report --folded bad.folded --binary fig33_O0
one_error_line "bad.folded:1: frame '-': '-' is a stack without frames, alone on its line"
expect_status 1 "$PPW_BLAME" report --folded fig33.folded --binary no-such-binary
one_error_line "no-such-binary: "
expect_status 1 "$PPW_BLAME" report --folded no-such.folded --binary fig33_O0
one_error_line "no-such.folded: No such file or directory"
cc -O0 "$SRC/test/pass/fig33.c" -o plain 2>/dev/null
expect_status 1 "$PPW_BLAME" report --folded fig33.folded --binary plain
one_error_line "plain: no .ppw.blame section (not built with ppw-cc"
expect_status 1 "$PPW_BLAME" report --folded fig33.folded --binary fig33_O0 --blame-point nosuch
one_error_line "blame point: no function named 'nosuch'"
expect_status 2 "$PPW_BLAME" report --folded fig33.folded
one_error_line "report: --folded needs --binary BIN"
expect_status 2 "$PPW_BLAME" report somedir --folded fig33.folded --binary fig33_O0
one_error_line "report: give a run directory or --folded FILE, not both"
expect_status 2 "$PPW_BLAME" report --folded fig33.folded --binary fig33_O0 --format xml
one_error_line "report: unknown format 'xml' (expected text, tsv, csv or json)"
expect_status 2 "$PPW_BLAME" report --folded fig33.folded --binary fig33_O0 --view writes
one_error_line "report: unknown view 'writes' (expected blame, exclusive or access)"
expect_status 2 "$PPW_BLAME" report --folded fig33.folded --binary fig33_O0 --view access --exclusive
one_error_line "report: --exclusive contradicts --view access"
expect_status 2 "$PPW_BLAME" code --folded fig33.folded --binary fig33_O0 --top -1
one_error_line "code: --top needs a number"
expect_status 2 "$PPW_BLAME" lines --folded fig33.folded --binary fig33_O0 --flat
one_error_line "lines: unknown option '--flat'"
ok errors

# ---- the folded grammar (docs/FORMATS.md section 3): line 0, code without
# a graph with a location (@@), unknown functions, escapes, frameless
# stacks.  Blame ignores frames without a graph and blames nothing at line
# 0 of its own, so forms.folded blames what plain.folded does; code and
# lines show the names and locations as written.
cat >plain.folded <<'EOF'
main@22;foo@9 2
main@22;foo@fig33.c:0:0 1
main@22;foo@10 3
main@12 4
EOF
cat >forms.folded <<'EOF'
# foo's frame at line 0; memcpy with a location (@@) and escaped names of
# code without a graph; an unknown function; no frames
main@22;foo@9 1
main@22;foo@9;str%3Bcpy%20x 1
main@fig33.c:22:0;foo@fig33.c:0:0 1
main@22;foo@10;memcpy@@string.c:12:3 2
main@22;foo@10;memcpy;??;?? 1
- 4
EOF
for view in "report --top 0" "code --flat --top 0" "lines --top 0"; do
    # shellcheck disable=SC2086
    expect_status 0 "$PPW_BLAME" $view --folded forms.folded --binary fig33_O0 --format json
    cp out.txt a.json
    check "$view: forms.folded total" '.total_samples == 10'
    # shellcheck disable=SC2086
    expect_status 0 "$PPW_BLAME" $view --folded plain.folded --binary fig33_O0 --format json
    case $view in
    report*)
        "$JQ" -e --slurpfile a a.json '[.variables[] | [.function, .name, .samples, .exclusive]] ==
            [$a[0].variables[] | [.function, .name, .samples, .exclusive]]' out.txt >/dev/null ||
            fail "forms.folded and plain.folded blame differently: $(cat a.json)" ;;
    code*)
        "$JQ" -e '([.functions[] | select(.function == "[str;cpy x]") | .self_samples] == [1]) and
            ([.functions[] | select(.function == null) | .self_samples] == [1]) and
            ([.functions[] | select(.function == "main") | .samples] == [6])' a.json >/dev/null ||
            fail "escaped and unknown names: $(cat a.json)" ;;
    lines*)
        # library code is the calling line's (docs/ppw-blame.md, "Names")
        "$JQ" -e '([.lines[] | select(.file == "string.c")] == []) and
            ([.lines[] | select(.line == 10) | .self_samples] == [3])' a.json >/dev/null ||
            fail "lines of forms.folded: $(cat a.json)" ;;
    esac
done
ok folded_grammar

# ---- odd folded input: an error line or a report, never a crash ----
long=$(printf '%0300d' 0)
i=0
deep=main@22
while [ $i -lt 3000 ]; do deep="$deep;foo@9"; i=$((i + 1)); done
for line in "main@22;foo@9 99999999999999999999999" "main@22;foo@9 1000000000000000" \
    "@ 1" "main@ 1" "main@22; 1" "main@22;foo@9;" "main@22;foo@:9 1" "main@22;foo@a:b:c:9:3 1" \
    "main@22;foo@9:99999999999 1" "main@22;foo@0 1" "main@22;f$long@9 1" "main@22;foo@9$long 1" \
    "main@22;foo@fig33.c:9:0 1" "main@22;foo@9	2" "main@22;foo@9 1\r" "main@22;foo@9 1 2" \
    "$deep 4" "main@22;memcpy;$long 1" "main@22;foo@9:1:2:3 1" "main@22;föö@9 1" \
    "- 1" "-- 1" "main@22;foo@@ 1" "main@22;foo@@9 1" "% 1" "%%41 1" "main@22;??@9 1" \
    "main@22;@@9 1" "main@22;x@@%41:1:2 1" "main@22;foo@9;memcpy@@:1:2 1" "main@22;%3F%3F 1"; do
    printf '%b\n' "$line" >odd.folded
    "$PPW_BLAME" report --folded odd.folded --binary fig33_O0 --format json >out.txt 2>err.txt
    status=$?
    case $status in
    0) "$JQ" -e '.total_samples >= 1' out.txt >/dev/null || fail "odd input '$line': $(cat out.txt)" ;;
    1) [ "$(wc -l <err.txt)" -eq 1 ] || fail "odd input '$line': $(cat err.txt)" ;;
    *) fail "odd input '$line' exited $status: $(cat err.txt)" ;;
    esac
done
printf 'main@22;foo@9 1\n\0main@22;foo@9 1\n' >odd.folded
expect_status 1 "$PPW_BLAME" report --folded odd.folded --binary fig33_O0
one_error_line "odd.folded:2: a NUL byte in the line"
ok odd_input

[ "$failures" -eq 0 ] && echo "PASS" || { echo "$failures failure(s)"; exit 1; }
