"""Definitions: model create/get/search/validate/delete, --global-arg
coercion, and the errors a user meets in hand-edited YAML."""

from __future__ import annotations

import pytest

from swamp.util import yamlio
from tests.helpers import PROBE_TYPE, init_repo, invoke, snapshot, write_type


@pytest.fixture
def repo(tmp_path):
    r = init_repo(tmp_path / "repo")
    write_type(r, "probe.py", PROBE_TYPE)
    return r


def definition(repo, name="p", type_="acme/probe"):
    return repo / "models" / type_ / f"{name}.yaml"


def test_create_coerces_global_args_to_the_schema_types(repo):
    r = invoke(repo, "model", "create", "acme/probe", "p", "--global-arg", "count=3",
               "--global-arg", "label=007", "--global-arg", "ratio=0.25", "--global-arg", "enabled=true")
    assert r.code == 0, r
    out = r.data
    assert set(out) == {"id", "name", "type", "path"}
    assert out["name"] == "p" and out["type"] == "acme/probe"
    assert out["path"] == "models/acme/probe/p.yaml"
    on_disk = yamlio.load(repo / out["path"])
    assert on_disk["globalArguments"] == {"count": 3, "label": "007", "ratio": 0.25, "enabled": True}
    assert on_disk["id"] == out["id"]
    got = invoke(repo, "model", "get", "p").data
    assert got["globalArguments"]["count"] == 3 and got["globalArguments"]["label"] == "007"


def test_create_shell_model(repo):
    r = invoke(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo a=b",
               "--global-arg", "timeout=5000", "--global-arg", 'env={"A": "1"}')
    assert r.code == 0, r
    args = yamlio.load(repo / r.data["path"])["globalArguments"]
    assert args == {"run": "echo a=b", "timeout": 5000, "env": {"A": "1"}}


@pytest.mark.parametrize("arg,needle,hint", [
    ("count=many", "count: 'many' is not a valid integer", None),
    ("cuont=3", "cuont", "did you mean 'count'?"),
    ("enabled=perhaps", "enabled: 'perhaps' is not a valid boolean", None),
])
def test_create_with_bad_global_args_writes_nothing(repo, arg, needle, hint):
    before = snapshot(repo)
    r = invoke(repo, "model", "create", "acme/probe", "p", "--global-arg", arg)
    assert r.code == 1, r
    assert needle in r.error["error"]
    if hint:
        assert r.error["hint"] == hint
    assert snapshot(repo) == before


def test_create_without_a_required_argument_defers_it_to_the_run(repo):
    # Upstream parity (issue 14 item 1): a run can give it with --input; a
    # run without it is refused, naming it, before anything is written.
    assert invoke(repo, "model", "create", "command/shell", "hello").code == 0
    before = snapshot(repo)
    r = invoke(repo, "model", "method", "run", "hello", "execute")
    assert r.code == 1, r
    assert "missing argument(s) run" in r.error["error"] and "--input run=" in r.error["hint"]
    assert snapshot(repo) == before


def test_create_twice_is_a_conflict(repo):
    assert invoke(repo, "model", "create", "acme/probe", "p").code == 0
    r = invoke(repo, "model", "create", "command/shell", "p", "--global-arg", "run=true")
    assert r.code == 1 and r.error["code"] == "conflict"


def test_create_global_arg_without_equals_is_a_usage_error(repo):
    r = invoke(repo, "model", "create", "acme/probe", "p", "--global-arg", "count")
    assert r.code == 2 and r.error["code"] == "usage"


def test_get_by_name_or_id_and_unknown_names(repo):
    mid = invoke(repo, "model", "create", "acme/probe", "probe-one").data["id"]
    by_name = invoke(repo, "model", "get", "probe-one").data
    by_id = invoke(repo, "model", "get", mid).data
    assert by_name == by_id
    assert by_name["type"] == "acme/probe" and by_name["path"] == "models/acme/probe/probe-one.yaml"
    r = invoke(repo, "model", "get", "probe-on")
    assert r.code == 1 and r.error["code"] == "not_found"
    assert "probe-one" in r.error["hint"]


def test_search_is_sorted_and_filters(repo):
    for name in ["zeta", "alpha", "mid"]:
        assert invoke(repo, "model", "create", "acme/probe", name).code == 0
    assert invoke(repo, "model", "create", "command/shell", "sh", "--global-arg", "run=true").code == 0
    rows = invoke(repo, "model", "search").data
    assert [r["name"] for r in rows] == ["alpha", "mid", "sh", "zeta"]
    assert [r["name"] for r in invoke(repo, "model", "search", "shell").data] == ["sh"]
    assert [r["name"] for r in invoke(repo, "model", "search", "et").data] == ["zeta"]


def test_validate_reports_each_model(repo):
    invoke(repo, "model", "create", "acme/probe", "good")
    invoke(repo, "model", "create", "acme/probe", "bad")
    path = definition(repo, "bad")
    doc = yamlio.load(path)
    doc["globalArguments"] = {"count": "many"}
    path.write_text(yamlio.dumps(doc))

    r = invoke(repo, "model", "validate", "good")
    assert r.code == 0 and r.data["valid"] is True
    r = invoke(repo, "model", "validate")
    assert r.code == 1, r
    out = r.data  # the report is still printed on stdout
    assert out["valid"] is False
    by_name = {m["name"]: m for m in out["models"]}
    assert by_name["good"]["valid"] is True
    assert by_name["bad"]["valid"] is False
    assert any("count" in e and "integer" in e for e in by_name["bad"]["errors"])


def test_malformed_yaml_names_the_file_and_line(repo):
    invoke(repo, "model", "create", "acme/probe", "p")
    path = definition(repo)
    path.write_text("type: acme/probe\nname: p\nglobalArguments:\n  count: [1, 2\n  label: x\n")
    r = invoke(repo, "model", "get", "p")
    assert r.code == 1, r
    msg = r.error["error"]
    assert "malformed YAML" in msg
    assert f"{path}:" in msg
    line = int(msg.split(f"{path}:")[1].split(":")[0])
    assert 4 <= line <= 5
    r = invoke(repo, "model", "validate")
    assert r.code == 1 and str(path) in r.data["models"][0]["errors"][0]


@pytest.mark.parametrize("doc,where,hint", [
    ({"globalArgument": {}}, "globalArgument", "did you mean 'globalArguments'?"),
    ({"methods": {"write": {"argumnts": {}}}}, "methods.write.argumnts", "did you mean 'arguments'?"),
    ({"tgas": {"a": "b"}}, "tgas", "did you mean 'tags'?"),
])
def test_unknown_keys_in_a_definition_get_did_you_mean(repo, doc, where, hint):
    invoke(repo, "model", "create", "acme/probe", "p")
    path = definition(repo)
    path.write_text(yamlio.dumps({**yamlio.load(path), **doc}))
    r = invoke(repo, "model", "get", "p")
    assert r.code == 1, r
    assert r.error["code"] == "validation"
    assert str(path) in r.error["error"]
    assert f"{where}: unknown key" in r.error["error"]
    assert r.error["hint"] == hint


def test_wrong_types_in_a_definition_name_the_field_path(repo):
    invoke(repo, "model", "create", "acme/probe", "p")
    path = definition(repo)
    path.write_text(yamlio.dumps({**yamlio.load(path), "tags": {"team": ["a", "b"]}, "version": "one"}))
    r = invoke(repo, "model", "get", "p")
    assert r.code == 1
    msg = r.error["error"]
    assert "tags.team" in msg and "version" in msg


def test_unknown_global_argument_in_yaml_is_caught_by_validate(repo):
    invoke(repo, "model", "create", "acme/probe", "p")
    path = definition(repo)
    path.write_text(yamlio.dumps({**yamlio.load(path), "globalArguments": {"lable": "x"}}))
    r = invoke(repo, "model", "validate", "p")
    assert r.code == 1
    assert any("lable" in e for e in r.data["models"][0]["errors"])


def test_name_in_file_must_match_file_name(repo):
    invoke(repo, "model", "create", "acme/probe", "p")
    path = definition(repo)
    path.write_text(yamlio.dumps({**yamlio.load(path), "name": "q"}))
    r = invoke(repo, "model", "get", "p")
    assert r.code == 1 and "does not match the file name" in r.error["error"]


def test_expressions_are_kept_verbatim(repo):
    r = invoke(repo, "model", "create", "acme/probe", "p", "--global-arg", "label=${{ inputs.who }}",
               "--global-arg", "count=${{ 2 + 3 }}")
    assert r.code == 0, r
    args = yamlio.load(definition(repo))["globalArguments"]
    assert args == {"label": "${{ inputs.who }}", "count": "${{ 2 + 3 }}"}
    assert invoke(repo, "model", "get", "p").data["globalArguments"] == args
    assert invoke(repo, "model", "validate", "p").data["valid"] is True


def test_delete_needs_confirmation_without_a_terminal(repo):
    invoke(repo, "model", "create", "acme/probe", "p")
    r = invoke(repo, "model", "delete", "p")
    assert r.code == 2, r
    assert "-y" in r.error["error"]
    assert definition(repo).exists()
    r = invoke(repo, "model", "delete", "p", "-y")
    assert r.code == 0, r
    assert r.data["name"] == "p" and r.data["deletedData"] == []
    assert not definition(repo).exists()
    assert invoke(repo, "model", "get", "p").code == 1
