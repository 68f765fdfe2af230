"""Model types: search, describe (argument schemas as JSON Schema), local
types from extensions/models/, and broken local type files."""

from __future__ import annotations

import pytest

from tests.helpers import PROBE_TYPE, init_repo, invoke, write_type


@pytest.fixture
def repo(tmp_path):
    return init_repo(tmp_path / "repo")


def test_type_search_lists_builtin_and_local_types_sorted(repo):
    write_type(repo, "probe.py", PROBE_TYPE)
    r = invoke(repo, "model", "type", "search")
    assert r.code == 0, r
    rows = r.data
    types = [row["type"] for row in rows]
    assert types == sorted(types)
    assert {"acme/probe", "command/shell"} <= set(types)
    shell = next(row for row in rows if row["type"] == "command/shell")
    assert set(shell) == {"type", "version", "description"}
    assert shell["version"] and shell["description"]

    r = invoke(repo, "model", "type", "search", "probe")
    assert [row["type"] for row in r.data] == ["acme/probe"]
    r = invoke(repo, "model", "type", "search", "nothing-matches-this")
    assert r.code == 0 and r.data == []


def test_type_search_works_outside_a_repository(tmp_path):
    r = invoke(None, "model", "type", "search", "shell")
    assert r.code == 0, r
    assert [row["type"] for row in r.data] == ["command/shell"]


def test_describe_shell_gives_json_schema(repo):
    r = invoke(repo, "model", "type", "describe", "command/shell")
    assert r.code == 0, r
    d = r.data
    assert d["type"] == "command/shell"
    ga = d["globalArguments"]
    assert ga["type"] == "object"
    assert ga["required"] == ["run"]
    assert ga["additionalProperties"] is False
    props = ga["properties"]
    assert props["run"]["type"] == "string"
    assert props["env"]["type"] == "object"
    assert props["ignoreExitCode"]["type"] == "boolean"
    assert {"minimum": 1, "type": "integer"} in props["timeout"]["anyOf"]
    assert "execute" in d["methods"]
    assert set(d["resources"]["result"]["schema"]["properties"]) == {
        "exitCode", "executedAt", "command", "durationMs", "stdout", "stderr"}
    assert "log" in d["files"]


def test_describe_local_type_shows_method_arguments(repo):
    write_type(repo, "probe.py", PROBE_TYPE)
    d = invoke(repo, "model", "type", "describe", "acme/probe").data
    assert d["version"] == "2026.01.01.1"
    assert d["globalArguments"]["properties"]["count"] == {"default": 1, "title": "Count", "type": "integer"}
    write = d["methods"]["write"]
    assert write["description"] == "Write out"
    assert set(write["arguments"]["properties"]) == {"note", "times"}
    assert d["methods"]["get"]["kind"] == "read"
    assert d["methods"]["explode"]["kind"] == "action"
    assert d["resources"]["out"]["garbageCollection"] == 3
    assert d["resources"]["aged"]["garbageCollection"] == "1h"
    assert d["files"]["report"]["contentType"] == "text/plain"


def test_describe_unknown_type_suggests_the_close_one(repo):
    r = invoke(repo, "model", "type", "describe", "command/shel")
    assert r.code == 1, r
    assert r.error["code"] == "not_found"
    assert "command/shell" in r.error["hint"]


BROKEN_SYNTAX = """\
from swamp import ModelType

broken = ModelType("acme/broken", version="2026.01.01.1")

def oops(:
    pass
"""

BROKEN_IMPORT = """\
from swamp import ModelType

x = 1
raise RuntimeError("this extension cannot start")
"""

BAD_DECLARATION = """\
from swamp import ModelType

bad = ModelType("acme/bad", version="not-calver")
"""


@pytest.mark.parametrize("source,line,needle", [
    (BROKEN_SYNTAX, 5, "invalid syntax"),
    (BROKEN_IMPORT, 4, "RuntimeError: this extension cannot start"),
    (BAD_DECLARATION, 3, "CalVer"),
])
def test_broken_local_type_is_reported_with_file_and_line(repo, source, line, needle):
    path = write_type(repo, "broken.py", source)
    write_type(repo, "probe.py", PROBE_TYPE)
    # Search still lists every type that loaded, and warns about the file.
    r = invoke(repo, "model", "type", "search")
    assert r.code == 0, r
    assert {"acme/probe", "command/shell"} <= {row["type"] for row in r.data}
    assert f"{path}:{line}" in r.stderr
    assert needle in r.stderr
    # Asking for a type that is not there names the broken file.
    r = invoke(repo, "model", "type", "describe", "acme/broken")
    assert r.code == 1
    assert f"{path}:{line}" in r.error["error"]
    # Types that do not need the broken file keep working.
    assert invoke(repo, "model", "type", "describe", "command/shell").code == 0
    assert invoke(repo, "model", "type", "describe", "acme/probe").code == 0
    r = invoke(repo, "model", "create", "acme/probe", "p1", "--global-arg", "count=2")
    assert r.code == 0, r


def test_two_files_declaring_one_type_is_an_error_naming_both(repo):
    first = write_type(repo, "a_probe.py", PROBE_TYPE)
    second = write_type(repo, "b_probe.py", PROBE_TYPE)
    r = invoke(repo, "model", "type", "search", "probe")
    assert r.code == 0
    assert r.data == []  # neither wins: which one ran would depend on file names
    assert str(second) in r.stderr and str(first) in r.stderr
    r = invoke(repo, "model", "type", "describe", "acme/probe")
    assert r.code == 1 and r.error["code"] == "type_load_error"
    assert str(first) in r.error["error"] and str(second) in r.error["error"]


BAD_SIGNATURE = """\
from pydantic import BaseModel
from swamp import ModelType

class A(BaseModel):
    pass

t = ModelType("acme/sig", version="2026.01.01.1", global_arguments=A)

@t.method(description="forgot ctx")
def run(args):
    pass
"""


def test_a_method_with_the_wrong_signature_is_refused_when_its_type_loads(repo):
    path = write_type(repo, "sig.py", BAD_SIGNATURE)
    r = invoke(repo, "model", "type", "describe", "acme/sig")
    assert r.code == 1
    assert f"{path}:9" in r.error["error"]
    assert "must take two arguments (args, ctx)" in r.error["error"]


def test_data_and_definitions_stay_readable_when_their_type_file_breaks(repo):
    path = write_type(repo, "probe.py", PROBE_TYPE)
    assert invoke(repo, "model", "create", "acme/probe", "p").code == 0
    assert invoke(repo, "model", "method", "run", "p", "write").code == 0
    path.write_text(path.read_text() + "\nthis is not python\n")
    line = len(path.read_text().splitlines())
    assert invoke(repo, "data", "get", "p", "out").data["version"] == 1
    assert [r["name"] for r in invoke(repo, "data", "list").data] == ["out", "report"]
    assert invoke(repo, "model", "get", "p").code == 0
    assert [m["name"] for m in invoke(repo, "model", "search").data] == ["p"]
    assert invoke(repo, "model", "output", "search").code == 0
    r = invoke(repo, "model", "validate")
    assert r.code == 1 and f"{path}:{line}" in r.data["models"][0]["errors"][0]
    r = invoke(repo, "model", "method", "run", "p", "write")
    assert r.code == 1 and f"{path}:{line}" in r.error["error"]
    assert invoke(repo, "data", "versions", "p", "out").data[-1]["version"] == 1
