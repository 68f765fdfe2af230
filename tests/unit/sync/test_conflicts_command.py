"""`swamp datastore conflicts [list]`, `restore PATH` and `drop PATH` on the
conflict copies a sync kept aside: what each lists, that restore puts ours
in place (never over an immutable path) and drop removes only the copy, and
clear errors for a path with no copy or with several."""

from __future__ import annotations

import json

import pytest

from tests.helpers import init_repo, invoke

DOC = "config/shared.json"
VERSION = "data/acme/counter/m1/result/1/raw"


@pytest.fixture
def repo(tmp_path):
    r = init_repo(tmp_path / "r")
    ds = r / ".swamp"
    (ds / "config").mkdir(parents=True, exist_ok=True)
    (ds / DOC).write_text('{"tier": "gold"}')
    (ds / f"{DOC}.conflict-laptop-ab12-7").write_text('{"tier": "silver"}')
    return r


def _ok(repo, *args, json_out=True):
    r = invoke(repo, "datastore", "conflicts", *args, json=json_out)
    assert r.code == 0, r
    return r.data if json_out else r.stdout


def test_list_names_each_copy_and_what_it_conflicts_with(repo):
    for args in ((), ("list",)):
        (entry,) = _ok(repo, *args)
        assert entry["copy"] == f"{DOC}.conflict-laptop-ab12-7"
        assert (entry["path"], entry["peer"], entry["seq"], entry["class"]) == (DOC, "laptop-ab12", 7, "mergeable")
        assert entry["theirs"] is True and entry["same"] is False
    text = _ok(repo, json_out=False)
    assert DOC in text and "restore" in text and "{" not in text.splitlines()[1]


def test_restore_puts_ours_in_place_and_removes_the_copy(repo):
    out = _ok(repo, "restore", DOC)  # the path it conflicts with names its one copy
    assert out["path"] == DOC and out["restored"].endswith(".conflict-laptop-ab12-7")
    assert json.loads((repo / ".swamp" / DOC).read_text()) == {"tier": "silver"}
    assert _ok(repo) == []
    assert "no conflict copies" in _ok(repo, json_out=False)


def test_drop_removes_only_the_copy(repo):
    out = _ok(repo, "drop", f"{DOC}.conflict-laptop-ab12-7")
    assert out == {"path": DOC, "dropped": f"{DOC}.conflict-laptop-ab12-7"}
    assert json.loads((repo / ".swamp" / DOC).read_text()) == {"tier": "gold"}
    assert _ok(repo) == []


def test_unknown_and_ambiguous_paths_are_clear_errors(repo):
    for args in (("restore", "config/nope.json"), ("drop", "config/nope.json.conflict-x-1"), ("drop", ".sync")):
        r = invoke(repo, "datastore", "conflicts", *args)
        assert r.code == 1 and r.error["code"] == "not_found", r
        assert "swamp datastore conflicts" in r.error["hint"]
    (repo / ".swamp" / f"{DOC}.conflict-desk-9").write_text("{}")
    r = invoke(repo, "datastore", "conflicts", "restore", DOC)
    assert r.code == 1 and r.error["code"] == "conflict" and "name the copy" in r.error["hint"]
    plain = invoke(repo, "datastore", "conflicts", "drop", "config/nope.json", json=False)
    assert plain.code == 1 and plain.stderr.startswith("error: ") and "Traceback" not in plain.stderr


def test_a_copy_of_an_immutable_path_is_never_restored_over_it(repo):
    ds = repo / ".swamp"
    (ds / VERSION).parent.mkdir(parents=True)
    (ds / VERSION).write_text("theirs")
    (ds / f"{VERSION}.conflict-laptop-3").write_text("ours")
    r = invoke(repo, "datastore", "conflicts", "restore", f"{VERSION}.conflict-laptop-3")
    assert r.code == 1 and r.error["code"] == "validation" and "drop" in r.error["hint"]
    assert (ds / VERSION).read_text() == "theirs"
