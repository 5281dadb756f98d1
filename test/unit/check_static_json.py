"""Checks `ppw-blame static --format json` against the documented shape.

usage: check_static_json.py SAMPLE_JSON ODD_PROG PPW_BLAME
"""
import json
import subprocess
import sys

FUNC_KEYS = ["name", "linkage_name", "file", "line", "outlined_from", "variables", "calls"]
VAR_KEYS = ["name", "kind", "type", "decl_line", "exit", "lines", "exclusive_lines",
            "locations", "parent", "param_index", "flags"]
CALL_KEYS = ["line", "col", "callee", "kind", "bindings"]
BINDING_KEYS = ["var", "formal", "mode", "path"]


def check_shape(doc):
    assert list(doc) == ["build_id", "functions"], list(doc)
    for func in doc["functions"]:
        assert list(func) == FUNC_KEYS, list(func)
        for var in func["variables"]:
            assert list(var) == VAR_KEYS, list(var)
            assert var["lines"] == sorted(set(var["lines"]))
        for call in func["calls"]:
            assert list(call) == CALL_KEYS, list(call)
            for binding in call["bindings"]:
                assert list(binding) == BINDING_KEYS, list(binding)


def check_sample(doc):
    funcs = doc["functions"]
    assert [f["name"] for f in funcs] == ["main", "main.omp_outlined"] * 2
    g, energy, result = funcs[0]["variables"]
    assert g["type"] == "struct grid *" and g["lines"] == [5, 12, 14]
    assert g["exclusive_lines"] == [12] and g["exit"] is False
    assert g["locations"] == ["12:3", "12:7", "14:0", "other.h:5:1"]
    assert g["flags"] == ["written", "passed_by_ref"]
    assert energy["parent"] == "g" and energy["param_index"] is None
    assert result["exit"] is True
    step, fork = funcs[0]["calls"]
    assert step["bindings"][1] == {"var": "result", "formal": -1, "mode": "return", "path": ""}
    assert fork["kind"] == "fork" and fork["bindings"][0]["path"] == "->energy"
    outlined = funcs[1]
    assert outlined["outlined_from"] == "main"
    assert outlined["variables"][0]["param_index"] == 2


def check_odd(ppw_blame, prog):
    out = subprocess.run([ppw_blame, "static", prog, "--format", "json"], check=True,
                         capture_output=True).stdout
    doc = json.loads(out.decode("utf-8"))  # strict UTF-8: invalid bytes must be escaped
    names = [v["name"] for v in doc["functions"][0]["variables"]]
    assert names == ['quote"back\\slash', "tab\there\nnewline", "na\u00efve\ufffd"], names
    assert doc["functions"][0]["variables"][2]["type"] == "char \u20ac"
    assert doc["functions"][0]["file"] == "odd dir/odd.c"
    task = doc["functions"][0]["calls"][0]
    assert task["kind"] == "task" and task["callee"] == ".omp_outlined."
    assert task["bindings"] == [{"var": 'quote"back\\slash', "formal": 5, "mode": "ref",
                                 "path": "shared"}], task
    assert doc["build_id"] == "" or len(doc["build_id"]) >= 32


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        doc = json.load(f)
    check_shape(doc)
    check_sample(doc)
    check_odd(sys.argv[3], sys.argv[2])


if __name__ == "__main__":
    main()
