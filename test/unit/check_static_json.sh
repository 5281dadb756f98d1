#!/bin/bash
# check_static_json.sh SAMPLE_JSON ODD_PROG PPW_BLAME: checks
# `ppw-blame static --format json` against the documented shape and the
# sample graph's contents, with jq.
set -euo pipefail
sample=$1 odd=$2 ppw_blame=$3

check() { # name, jq filter (must be true), file
    jq -e "$2" "$3" >/dev/null || { echo "json check failed: $1"; exit 1; }
}

check shape '
  (keys_unsorted == ["build_id", "functions"]) and all(.functions[];
    keys_unsorted == ["name", "linkage_name", "file", "line", "outlined_from", "variables", "calls",
                     "accesses", "flows", "flags"]
    and all(.accesses[]; keys_unsorted == ["file", "line", "col", "variable", "reads", "writes"])
    and all(.flows[]; keys_unsorted == ["from", "to"] and (.to | length > 0))
    and all(.variables[];
      keys_unsorted == ["name", "kind", "type", "decl_line", "exit", "lines", "exclusive_lines",
                        "locations", "parent", "param_index", "flags"]
      and .lines == (.lines | unique))
    and all(.calls[]; keys_unsorted == ["line", "col", "callee", "kind", "bindings"]
      and all(.bindings[]; keys_unsorted == ["var", "formal", "mode", "path"])))' "$sample"

check sample '
  ([.functions[].name] == ["main", "main.omp_outlined", "main", "main.omp_outlined"])
  and (.functions[0].variables as [$g, $energy, $result]
    | $g.type == "struct grid *" and $g.lines == [5, 12, 14]
      and $g.exclusive_lines == [12] and $g.exit == false
      and $g.locations == ["12:3", "12:7", "14:0", "other.h:5:1"]
      and $g.flags == ["written", "passed_by_ref"]
      and $energy.parent == "g" and $energy.param_index == null
      and $result.exit == true)
  and (.functions[0].calls as [$step, $fork]
    | $step.bindings[1] == {"var": "result", "formal": -1, "mode": "return", "path": ""}
      and $fork.kind == "fork" and $fork.bindings[0].path == "->energy")
  and (.functions[0].accesses | length == 4 and .[2] == {"file": "grid.c", "line": 13, "col": 9,
       "variable": "g->cells[].energy", "reads": 1, "writes": 1} and .[3].file == "other.h")
  and .functions[1].accesses == []
  and .functions[1].outlined_from == "main"
  and .functions[1].variables[0].param_index == 2' "$sample"

out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$ppw_blame" static "$odd" --format json >"$out"
# invalid bytes must be escaped: the output is strict UTF-8
iconv -f UTF-8 -t UTF-8 "$out" >/dev/null || { echo "json check failed: not UTF-8"; exit 1; }
check odd '
  ([.functions[0].variables[].name] == ["quote\"back\\slash", "tab\there\nnewline", "na\u00efve\ufffd"])
  and .functions[0].variables[2].type == "char \u20ac"
  and .functions[0].file == "odd dir/odd.c"
  and (.functions[0].calls[0] | .kind == "task" and .callee == ".omp_outlined."
       and .bindings == [{"var": "quote\"back\\slash", "formal": 5, "mode": "ref", "path": "shared"}])
  and (.build_id == "" or (.build_id | length) >= 32)' "$out"
