"""model method run: inputs from every source, tags, output records and
logs, failing methods, and the builtin command/shell."""

from __future__ import annotations

import json

import pytest

from tests.helpers import PROBE_TYPE, assert_no_torn_versions, init_repo, invoke, snapshot, write_type

RECORD_KEYS = {"id", "modelName", "methodName", "status", "startedAt", "completedAt", "durationMs",
               "dataArtifacts"}


@pytest.fixture
def repo(tmp_path):
    r = init_repo(tmp_path / "repo")
    write_type(r, "probe.py", PROBE_TYPE)
    assert invoke(r, "model", "create", "acme/probe", "p", "--global-arg", "count=7").code == 0
    return r


def run(repo, *args, input=None):
    return invoke(repo, "model", "method", "run", *args, input=input)


def out_content(repo, *extra):
    r = invoke(repo, "data", "get", "p", "out", *extra)
    assert r.code == 0, r
    return r.data


def test_run_writes_versions_and_returns_the_record(repo):
    r = run(repo, "p", "write", "--input", "note=hello", "--input", "times=2")
    assert r.code == 0, r
    rec = r.data
    assert RECORD_KEYS <= set(rec)
    assert rec["modelName"] == "p" and rec["methodName"] == "write" and rec["status"] == "succeeded"
    assert "error" not in rec
    assert rec["startedAt"] <= rec["completedAt"] and rec["durationMs"] >= 0
    assert rec["dataArtifacts"] == [
        {"name": "out", "specName": "out", "version": 1, "kind": "resource"},
        {"name": "out", "specName": "out", "version": 2, "kind": "resource"},
        {"name": "report", "specName": "report", "version": 1, "kind": "file"},
    ]
    d = out_content(repo)
    assert d["version"] == 2
    assert d["content"] == {"count": 7, "label": "x", "note": "hello", "times": 1}
    report = invoke(repo, "data", "get", "p", "report").data
    assert report["content"] == "count=7 label=x\n" and report["kind"] == "file"
    assert assert_no_torn_versions(repo) == 3


def test_inputs_override_global_arguments_and_are_coerced(repo):
    r = run(repo, "p", "write", "--input", "count=9", "--input", "label=42", "--input", "enabled=no")
    assert r.code == 0, r
    assert out_content(repo)["content"]["count"] == 9
    assert out_content(repo)["content"]["label"] == "42"


def test_input_sources_layer_file_or_stdin_then_input(repo, tmp_path):
    f = tmp_path / "inputs.yaml"
    f.write_text("note: from-file\ntimes: 1\nlabel: file-label\ncount: 1\n")
    r = run(repo, "p", "write", "--input-file", f, "--input", "note=from-flag")
    assert r.code == 0, r
    c = out_content(repo)["content"]
    assert c == {"count": 1, "label": "file-label", "note": "from-flag", "times": 0}
    assert sorted(r.data["inputs"]) == ["count", "label", "note", "times"]
    stdin = json.dumps({"note": "from-stdin", "label": "stdin-label"})
    r = run(repo, "p", "write", "--stdin", "--input", "note=from-flag", input=stdin)
    assert r.code == 0, r
    assert out_content(repo)["content"]["label"] == "stdin-label"
    assert out_content(repo)["content"]["note"] == "from-flag"
    # Both at once is refused (CLI.md): which one wins would be a guess.
    assert run(repo, "p", "write", "--input-file", f, "--stdin", input=stdin).code == 2


def test_input_as_json_object_and_from_a_file(repo, tmp_path):
    (tmp_path / "note.txt").write_text("text from a file")
    r = run(repo, "p", "write", "--input", '{"times": 1, "label": "json"}', "--input", f"note=@{tmp_path}/note.txt")
    assert r.code == 0, r
    c = out_content(repo)["content"]
    assert c["label"] == "json" and c["note"] == "text from a file"
    assert run(repo, "p", "write", "--input", "note=@@literal").code == 0
    assert out_content(repo)["content"]["note"] == "@literal"


def test_input_file_that_is_not_a_map(repo, tmp_path):
    f = tmp_path / "list.yaml"
    f.write_text("- a\n- b\n")
    r = run(repo, "p", "write", "--input-file", f)
    assert r.code == 1 and "must be a map" in r.error["error"]


@pytest.mark.parametrize("args,code,needle,hint", [
    (["--input", "nte=x"], 1, "nte", "did you mean 'note'?"),
    (["--input", "times=lots"], 1, "times: 'lots' is not a valid integer", None),
    (["--input", '{"times": "x"}'], 1, "times", None),
    (["--input", "novalue"], 2, "KEY=VALUE", None),
    (["--input", "{not json"], 2, "not valid JSON", None),
])
def test_bad_inputs_are_refused_before_anything_is_written(repo, args, code, needle, hint):
    before = snapshot(repo)
    r = run(repo, "p", "write", *args)
    assert r.code == code, r
    assert needle in r.error["error"]
    if hint:
        assert r.error["hint"] == hint
    assert snapshot(repo) == before


def test_unknown_method_and_model(repo):
    before = snapshot(repo)
    r = run(repo, "p", "wirte")
    assert r.code == 1 and r.error["hint"] == "did you mean 'write'?"
    r = run(repo, "nope", "write")
    assert r.code == 1 and r.error["code"] == "not_found"
    assert snapshot(repo) == before


def test_tags_land_on_data_and_the_record(repo):
    r = run(repo, "p", "write", "--tag", "env=prod", "--tag", "team=core")
    assert r.code == 0, r
    assert r.data["tags"] == {"env": "prod", "team": "core"}
    tags = out_content(repo)["tags"]
    assert tags["env"] == "prod" and tags["team"] == "core" and tags["modelName"] == "p"
    assert run(repo, "p", "write", "--tag", "bad").code == 2


def test_a_failing_method_is_recorded_and_keeps_what_it_wrote(repo):
    r = run(repo, "p", "explode")
    assert r.code == 1, r
    rec = r.data  # the record is printed even though the run failed
    assert rec["status"] == "failed"
    assert rec["error"] == "RuntimeError: boom"
    assert rec["dataArtifacts"] == [{"name": "partial", "specName": "all", "version": 1, "kind": "resource"}]
    kept = invoke(repo, "data", "get", "p", "partial")
    assert kept.code == 0 and kept.data["content"] == {"before": "failure"}

    got = invoke(repo, "model", "output", "get", rec["id"])
    assert got.code == 0 and got.data["status"] == "failed" and got.data["error"] == "RuntimeError: boom"
    logs = invoke(repo, "model", "output", "logs", rec["id"])
    assert logs.code == 0
    assert "about to fail" in logs.data["log"] and "RuntimeError: boom" in logs.data["log"]
    assert "Traceback" in logs.data["log"]


def test_output_search_and_logs(repo):
    first = run(repo, "p", "write").data
    failed = run(repo, "p", "explode").data
    invoke(repo, "model", "create", "command/shell", "sh", "--global-arg", "run=true")
    shell = run(repo, "sh", "execute").data
    rows = invoke(repo, "model", "output", "search").data
    assert [r["id"] for r in rows] == [shell["id"], failed["id"], first["id"]]  # newest first
    assert set(rows[0]) >= {"id", "modelName", "methodName", "status", "startedAt"}
    assert [r["id"] for r in invoke(repo, "model", "output", "search", "p").data] == [failed["id"], first["id"]]
    assert [r["id"] for r in invoke(repo, "model", "output", "search", "--status", "failed").data] == [failed["id"]]
    assert [r["id"] for r in invoke(repo, "model", "output", "search", "--method", "write").data] == [first["id"]]
    assert len(invoke(repo, "model", "output", "search", "--limit", "1").data) == 1
    log = invoke(repo, "model", "output", "logs", first["id"]).data["log"]
    assert "wrote 1" in log
    r = invoke(repo, "model", "output", "get", "no-such-id")
    assert r.code == 1 and r.error["code"] == "not_found"


def test_method_reads_the_highest_version(repo):
    run(repo, "p", "write", "--input", "times=3")
    assert run(repo, "p", "get").code == 0
    seen = invoke(repo, "data", "get", "p", "seen").data["content"]
    assert seen == {"last": {"count": 7, "label": "x", "note": "", "times": 2}}


# ----------------------------------------------------------- command/shell
def shell(repo, name, *args):
    r = invoke(repo, "model", "create", "command/shell", name, *[x for a in args for x in ("--global-arg", a)])
    assert r.code == 0, r


def test_shell_records_output_exit_code_and_log(repo):
    shell(repo, "hello", "run=echo hi; echo oops >&2; echo $GREETING", 'env={"GREETING": "hey"}')
    r = run(repo, "hello", "execute")
    assert r.code == 0, r
    kinds = {(a["name"], a["kind"]) for a in r.data["dataArtifacts"]}
    assert kinds == {("result", "resource"), ("log", "file")}
    res = invoke(repo, "data", "get", "hello", "result").data["content"]
    assert res["exitCode"] == 0 and res["stdout"] == "hi\nhey" and res["stderr"] == "oops"
    assert res["command"] == "echo hi; echo oops >&2; echo $GREETING"
    assert set(res) == {"exitCode", "executedAt", "command", "durationMs", "stdout", "stderr"}
    log = invoke(repo, "data", "get", "hello", "log").data["content"]
    assert "hi\n" in log and "oops\n" in log


def test_shell_runs_in_the_repo_root_by_default(repo, tmp_path):
    shell(repo, "where", "run=pwd")
    run(repo, "where", "execute")
    assert invoke(repo, "data", "get", "where", "result").data["content"]["stdout"] == str(repo)
    other = tmp_path / "elsewhere"
    other.mkdir()
    run(repo, "where", "execute", "--input", f"workingDir={other}")
    assert invoke(repo, "data", "get", "where", "result").data["content"]["stdout"] == str(other)


def test_shell_non_zero_exit_fails_writes_no_result_and_keeps_the_log(repo):
    shell(repo, "bad", "run=echo partial; exit 3")
    r = run(repo, "bad", "execute")
    assert r.code == 1, r
    assert r.data["status"] == "failed" and "3" in r.data["error"]
    assert [a["name"] for a in r.data["dataArtifacts"]] == ["log"]
    assert invoke(repo, "data", "get", "bad", "result").code == 1  # nothing to build on
    assert invoke(repo, "data", "get", "bad", "log").data["content"] == "partial\n"
    r = run(repo, "bad", "execute", "--input", "ignoreExitCode=true")
    assert r.code == 0 and r.data["status"] == "succeeded"
    res = invoke(repo, "data", "get", "bad", "result").data
    assert res["version"] == 1 and res["content"]["exitCode"] == 3 and res["content"]["stdout"] == "partial"


def test_shell_timeout(repo):
    shell(repo, "slow", "run=sleep 5", "timeout=200")
    r = run(repo, "slow", "execute")
    assert r.code == 1 and r.data["status"] == "failed" and "timed out" in r.data["error"]
    assert r.data["durationMs"] < 4000
    assert invoke(repo, "data", "get", "slow", "result").code == 1


def test_method_arguments_from_the_definition_and_input_overrides(repo):
    from swamp.util import yamlio

    path = repo / "models" / "acme" / "probe" / "p.yaml"
    doc = yamlio.load(path)
    doc["methods"] = {"write": {"arguments": {"note": "from-definition", "times": 2}}}
    path.write_text(yamlio.dumps(doc))
    assert run(repo, "p", "write").code == 0
    c = out_content(repo)["content"]
    assert c["note"] == "from-definition" and c["times"] == 1 and c["count"] == 7
    assert run(repo, "p", "write", "--input", "note=override").code == 0
    assert out_content(repo)["content"]["note"] == "override"
    doc["methods"]["write"]["arguments"]["times"] = "twice"
    path.write_text(yamlio.dumps(doc))
    before = snapshot(repo)
    r = run(repo, "p", "write")
    assert r.code == 1 and "times" in r.error["error"]
    assert snapshot(repo) == before


def test_malformed_input_file_names_the_file_and_line(repo, tmp_path):
    f = tmp_path / "bad.yaml"
    f.write_text("note: ok\ntimes: [1,\n")
    r = run(repo, "p", "write", "--input-file", f)
    assert r.code == 1
    assert f"malformed YAML in {f}:" in r.error["error"]
    r = run(repo, "p", "write", "--stdin", input="{note: [")
    assert r.code == 1 and "malformed YAML in <stdin>:" in r.error["error"]


def test_a_method_reads_another_models_data_and_deletes_its_own(repo):
    run(repo, "p", "write", "--input", "note=first")
    run(repo, "p", "write", "--input", "note=second")
    assert invoke(repo, "model", "create", "acme/probe", "q").code == 0
    assert run(repo, "q", "peek").code == 0
    assert invoke(repo, "data", "get", "q", "peeked").data["content"]["seen"]["note"] == "second"
    assert run(repo, "q", "peek", "--input", "version=1").code == 0
    assert invoke(repo, "data", "get", "q", "peeked").data["content"]["seen"]["note"] == "first"
    assert run(repo, "q", "peek", "--input", "other=q").code == 0  # q has no out yet: None
    assert invoke(repo, "data", "get", "q", "peeked").data["content"] == {"seen": None}
    r = run(repo, "q", "peek", "--input", "other=nobody")
    assert r.code == 1 and r.data["status"] == "failed" and "nobody" in r.data["error"]

    r = run(repo, "p", "forget")
    assert r.code == 0 and r.data["dataArtifacts"] == []
    assert invoke(repo, "data", "get", "p", "out").code == 1
    assert [d["name"] for d in invoke(repo, "data", "list", "p").data] == ["report"]
