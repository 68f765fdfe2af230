"""The CLI contract through the real console entry point (a subprocess per
command): one JSON document on stdout, JSON errors on stderr, exit codes,
stdin, and broken local types."""

from __future__ import annotations

import json

import pytest

from tests.helpers import PROBE_TYPE, cli, init_repo, write_type


@pytest.fixture
def repo(tmp_path):
    r = init_repo(tmp_path / "repo")
    write_type(r, "probe.py", PROBE_TYPE)
    return r


def ok(r):
    assert r.code == 0, r
    assert r.stderr == "", r
    return r.data  # exactly one JSON document, nothing after it


def fails(r, code, err_code=None):
    assert r.code == code, r
    assert r.stdout == "", r
    assert "Traceback" not in r.stderr
    err = r.error  # one JSON document: {"error", "code", "hint"?}
    if err_code:
        assert err["code"] == err_code, err
    return err


def test_a_session_through_every_core_command(repo, tmp_path):
    """Each command's --json output is one JSON document on stdout."""
    types = ok(cli(repo, "model", "type", "search"))
    assert {"command/shell", "acme/probe"} <= {t["type"] for t in types}
    assert ok(cli(repo, "model", "type", "describe", "acme/probe"))["type"] == "acme/probe"
    created = ok(cli(repo, "model", "create", "acme/probe", "p", "--global-arg", "count=3"))
    assert ok(cli(repo, "model", "get", "p"))["globalArguments"] == {"count": 3}
    assert [m["name"] for m in ok(cli(repo, "model", "search"))] == ["p"]
    assert ok(cli(repo, "model", "validate"))["valid"] is True

    f = tmp_path / "in.json"
    f.write_text('{"note": "file", "times": 2}')
    rec = ok(cli(repo, "model", "method", "run", "p", "write", "--input-file", f, "--input", "label=from-stdin",
                 "--tag", "k=v"))
    assert rec["status"] == "succeeded" and rec["modelName"] == "p" and len(rec["dataArtifacts"]) == 3
    assert ok(cli(repo, "model", "output", "get", rec["id"]))["id"] == rec["id"]
    assert [o["id"] for o in ok(cli(repo, "model", "output", "search", "p"))] == [rec["id"]]
    assert "wrote 2" in ok(cli(repo, "model", "output", "logs", rec["id"]))["log"]

    d = ok(cli(repo, "data", "get", "p", "out"))
    assert d["version"] == 2 and d["tags"]["k"] == "v"
    assert d["content"] == {"count": 3, "label": "from-stdin", "note": "file", "times": 1}
    assert ok(cli(repo, "data", "get", "p", "out", "--version", "1", "--no-content"))["version"] == 1
    assert [r["name"] for r in ok(cli(repo, "data", "list"))] == ["out", "report"]
    assert [v["version"] for v in ok(cli(repo, "data", "versions", "p", "out"))] == [1, 2]
    assert ok(cli(repo, "data", "gc", "--dry-run")) == {"deleted": [], "dryRun": True}
    assert ok(cli(repo, "data", "delete", "p", "report", "-y"))["deletedVersions"] == [1]
    assert ok(cli(repo, "model", "delete", "p", "-y", "--force"))["id"] == created["id"]


def test_global_options_go_before_or_after_the_command(repo):
    cli(repo, "model", "create", "acme/probe", "p")
    before = cli(None, "--json", "--repo-dir", repo, "model", "get", "p", json=False)
    after = cli(repo, "model", "get", "p")
    assert ok(before) == ok(after)


def test_errors_and_exit_codes(repo, tmp_path):
    fails(cli(repo, "model", "get", "nope"), 1, "not_found")
    fails(cli(repo, "model", "create", "acme/probe", "../evil"), 1, "validation")
    fails(cli(repo, "model", "nosuchcommand"), 2, "usage")
    fails(cli(repo, "data", "get", "p"), 2, "usage")  # missing argument
    fails(cli(repo, "data", "get", "p", "out", "--version", "x"), 2, "usage")
    fails(cli(None, "model", "search", cwd=tmp_path), 1, "repo_not_found")
    cli(repo, "model", "create", "acme/probe", "p")
    cli(repo, "model", "method", "run", "p", "write")
    # Deletes need -y when stdin is not a terminal (it is a pipe here).
    err = fails(cli(repo, "data", "delete", "p", "out", input=""), 2, "usage")
    assert "-y" in err["error"]
    fails(cli(repo, "data", "gc", input=""), 2, "usage")
    fails(cli(repo, "model", "delete", "p", input=""), 2, "usage")
    assert [v["version"] for v in ok(cli(repo, "data", "versions", "p", "out"))] == [1]


def test_a_failing_run_prints_its_record_and_exits_1(repo):
    cli(repo, "model", "create", "acme/probe", "p")
    r = cli(repo, "model", "method", "run", "p", "explode")
    assert r.code == 1, r
    rec = r.data
    assert rec["status"] == "failed" and rec["error"] == "RuntimeError: boom"
    assert "Traceback" not in r.stderr
    assert ok(cli(repo, "data", "get", "p", "partial"))["content"] == {"before": "failure"}
    # A record of failure, not a crash: human mode says what happened, too.
    r = cli(repo, "model", "method", "run", "p", "explode", json=False)
    assert r.code == 1 and "failed" in r.stdout and "boom" in r.stdout


def test_validate_failure_prints_the_report_and_exits_1(repo):
    cli(repo, "model", "create", "acme/probe", "p")
    (repo / "models" / "acme" / "probe" / "p.yaml").write_text("type: acme/probe\nname: p\nbogus: 1\n")
    r = cli(repo, "model", "validate")
    assert r.code == 1, r
    out = r.data
    assert out["valid"] is False and "bogus" in out["models"][0]["errors"][0]


def test_human_output_is_not_json(repo):
    cli(repo, "model", "create", "acme/probe", "b")
    cli(repo, "model", "create", "acme/probe", "a")
    r = cli(repo, "model", "search", json=False)
    assert r.code == 0
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["NAME", "TYPE", "PATH"]
    assert [ln.split()[0] for ln in lines[1:]] == ["a", "b"]
    r = cli(repo, "model", "get", "nope", json=False)
    assert r.code == 1 and r.stderr.startswith("error: ") and "hint: " in r.stderr
    assert cli(repo, "model", "search", "-q", json=False).stdout == ""


def test_repo_init_through_the_console_script(tmp_path):
    out = ok(cli(None, "repo", "init", tmp_path / "fresh", cwd=tmp_path))
    assert out["path"] == str(tmp_path / "fresh") and "AGENTS.md" in out["created"]
    fails(cli(None, "repo", "init", tmp_path / "fresh", cwd=tmp_path), 1, "exists")
    # Commands find the repository from a subdirectory.
    sub = tmp_path / "fresh" / "models"
    assert ok(cli(None, "model", "search", cwd=sub)) == []


def test_help_and_version():
    r = cli(None, "--help", json=False)
    assert r.code == 0 and "model" in r.stdout and "data" in r.stdout
    r = cli(None, "--version", json=False)
    assert r.code == 0 and r.stdout.startswith("swamp ")


def test_a_broken_local_type_does_not_break_shell_runs(repo):
    broken = write_type(repo, "broken.py", "import this_module_does_not_exist\n")
    r = cli(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hi")
    ok(r)
    rec = ok(cli(repo, "model", "method", "run", "hello", "execute"))
    assert rec["status"] == "succeeded"
    assert ok(cli(repo, "data", "get", "hello", "result"))["content"]["stdout"] == "hi"
    # The probe type in a healthy file also keeps working.
    ok(cli(repo, "model", "create", "acme/probe", "p"))
    assert ok(cli(repo, "model", "method", "run", "p", "write"))["status"] == "succeeded"
    # Search lists what loaded and names the broken file and line on stderr.
    r = cli(repo, "model", "type", "search")
    assert r.code == 0
    assert {"command/shell", "acme/probe"} <= {t["type"] for t in r.data}
    assert f"{broken}:1" in r.stderr and "ModuleNotFoundError" in r.stderr
    # A definition of a type from the broken file gets an error naming it.
    (repo / "models" / "acme" / "gone").mkdir(parents=True)
    (repo / "models" / "acme" / "gone" / "g.yaml").write_text(
        "type: acme/gone\nname: g\nid: 7d0b8a52-6a4e-4a43-8e63-1f4b7d1b5a10\n")
    err = fails(cli(repo, "model", "method", "run", "g", "x"), 1)
    assert f"{broken}:1" in err["error"]


def test_json_documents_are_parseable_with_a_strict_parser(repo):
    """Non-ASCII and control characters survive the JSON round trip."""
    cli(repo, "model", "create", "command/shell", "u", "--global-arg", "run=printf 'h\\303\\251\\ttab\\n'")
    rec = ok(cli(repo, "model", "method", "run", "u", "execute"))
    assert rec["status"] == "succeeded"
    out = cli(repo, "data", "get", "u", "result")
    assert json.loads(out.stdout, strict=True)["content"]["stdout"] == "hé\ttab"
