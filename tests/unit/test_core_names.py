"""Names become path segments: anything that could escape or confuse the
tree is refused before a single byte is written."""

from __future__ import annotations

import pytest

from swamp.errors import ValidationError
from tests.helpers import PROBE_TYPE, init_repo, invoke, snapshot, write_type

BAD_NAMES = ["../evil", "..", ".", "a/b", "/abs", "/tmp/evil", "a\x00b", "Upper", "", "-lead", "_lead",
             "x" * 65, "a b", "a.b", "a\\b", "é"]
BAD_TYPES = ["../x", "acme/../../x", "acme/..", "/abs/x", "Acme/x", "acme", "acme//x", "acme/x\x00",
             "acme/./x", "acme/x/", "acme\\x"]

NAMED = '''
    from pydantic import BaseModel
    from swamp import Context, ModelType


    class Args(BaseModel):
        name: str = "ok"


    named = ModelType("acme/named", version="2026.01.01.1", global_arguments=Args)
    named.resource("thing", lifetime="infinite")
    named.file("blob")


    @named.method()
    def resource(args, ctx: Context) -> None:
        ctx.write_resource("thing", args.name, {"a": 1})


    @named.method()
    def file(args, ctx: Context) -> None:
        with ctx.file_writer("blob", args.name) as w:
            w.write("x")
'''


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    """One repository for the module: every test here either changes nothing
    (and checks that) or only adds a run record."""
    r = init_repo(tmp_path_factory.mktemp("names") / "repo")
    write_type(r, "probe.py", PROBE_TYPE)
    write_type(r, "named.py", NAMED)
    assert invoke(r, "model", "create", "acme/probe", "p").code == 0
    assert invoke(r, "model", "method", "run", "p", "write").code == 0
    assert invoke(r, "model", "create", "acme/named", "n").code == 0
    return r


@pytest.mark.parametrize("name", BAD_NAMES)
def test_bad_model_names_are_refused(repo, name):
    before = snapshot(repo.parent)
    r = invoke(repo, "model", "create", "acme/probe", name)
    if name.startswith("-"):  # read as an option: a usage error
        assert r.code == 2 and r.error["code"] == "usage"
    else:
        assert r.code == 1, r
        assert r.error["code"] == "validation"
        assert "^[a-z0-9][a-z0-9_-]*$" in r.error["hint"]
    assert snapshot(repo.parent) == before


def test_a_64_character_name_is_fine(tmp_path):
    r = init_repo(tmp_path / "repo")
    write_type(r, "probe.py", PROBE_TYPE)
    assert invoke(r, "model", "create", "acme/probe", "a" * 64).code == 0


@pytest.mark.parametrize("type_name", BAD_TYPES)
def test_bad_type_names_are_refused(repo, type_name):
    before = snapshot(repo.parent)
    r = invoke(repo, "model", "create", type_name, "fine")
    assert r.code == 1, r
    assert r.error["code"] in ("validation", "not_found")
    assert snapshot(repo.parent) == before


@pytest.mark.parametrize("name", BAD_NAMES + ["latest"])
@pytest.mark.parametrize("command", [["data", "get"], ["data", "versions"], ["data", "delete", "-y"]])
def test_bad_data_names_on_the_command_line(repo, name, command):
    before = snapshot(repo.parent)
    r = invoke(repo, *command[:2], "p", name, *command[2:])
    assert r.code == (2 if name.startswith("-") else 1), r
    assert r.error["code"] in ("validation", "not_found", "usage")
    assert snapshot(repo.parent) == before


@pytest.mark.parametrize("method", ["resource", "file"])
@pytest.mark.parametrize("name", ["../../../escaped", "/tmp/escaped", "latest", "Sub/dir", "a\x00b"])
def test_bad_data_names_from_a_method_write_nothing_but_the_record(repo, method, name):
    before = snapshot(repo.parent)
    r = invoke(repo, "model", "method", "run", "n", method, "--input", f"name={name}")
    assert r.code == 1, r
    assert r.data["status"] == "failed" and "data name" in r.data["error"]
    changed = {k for k, v in snapshot(repo.parent).items() if before.get(k) != v}
    # Only the run's output record and log (and their directories) appear.
    assert changed and all("/.swamp/outputs" in "/" + k for k in changed), changed


@pytest.mark.parametrize("rel", ["../x", "/etc/passwd", "a//b", "a/../../b", "a\\b", "a\x00b", "", "./a"])
def test_the_datastore_refuses_paths_that_escape(repo, rel):
    from swamp.repo.context import Repo

    ds = Repo.open(repo).datastore
    before = snapshot(repo.parent)
    for op in (lambda: ds.write_bytes(rel, b"x"), lambda: ds.read_bytes(rel), lambda: ds.delete(rel),
               lambda: ds.mkdir(rel)):
        with pytest.raises(ValidationError):
            op()
    assert snapshot(repo.parent) == before
