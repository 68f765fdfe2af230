"""Every name a list shows is one the commands that take names accept, on a
shared datastore where this peer lacks the other peer's files: a model id
from `data list` works in `data get` / `data versions`; a workflow name from
`workflow history search` works in `history get`, `history logs`,
`history NAME` and `history search --workflow`."""

from __future__ import annotations

from tests.helpers import cli, init_repo, ok, write_workflow


def _two_peers(tmp_path):
    shared = tmp_path / "shared"
    a = init_repo(tmp_path / "a")
    ok(a, "datastore", "setup", "filesystem", "--path", str(shared))
    ok(a, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hi")
    write_workflow(a, "greet", """
        jobs:
          - name: main
            steps:
              - name: say
                task: {type: model_method, modelIdOrName: hello, methodName: execute}
    """)
    ok(a, "workflow", "run", "greet")
    b = init_repo(tmp_path / "b")  # no models/ or workflows/ of a's
    ok(b, "datastore", "setup", "filesystem", "--path", str(shared))
    return a, b


def test_each_name_data_list_and_history_search_show_is_taken_by_the_commands_that_take_names(tmp_path):
    _, b = _two_peers(tmp_path)

    rows = ok(b, "data", "list")
    assert {r["name"] for r in rows} >= {"result"}
    for row in rows:
        got = ok(b, "data", "get", row["model"], row["name"])
        assert got["version"] == row["latestVersion"]
        assert [v["version"] for v in ok(b, "data", "versions", row["model"], row["name"])][-1] == \
            row["latestVersion"]
    assert {r["name"] for r in ok(b, "data", "list", rows[0]["model"])} >= {"result"}

    runs = ok(b, "workflow", "history", "search")
    assert [r["workflowName"] for r in runs] == ["greet"]
    name, run_id = runs[0]["workflowName"], runs[0]["id"]
    assert ok(b, "workflow", "history", "get", name)["id"] == run_id
    assert ok(b, "workflow", "history", "logs", name)["id"] == run_id
    assert [r["id"] for r in ok(b, "workflow", "history", name)] == [run_id]
    assert [r["id"] for r in ok(b, "workflow", "history", "search", "--workflow", name)] == [run_id]


def test_a_name_no_list_shows_is_still_refused_clearly(tmp_path):
    _, b = _two_peers(tmp_path)
    for args in (["data", "get", "00000000-0000-4000-8000-000000000000", "result"],
                 ["workflow", "history", "get", "nope"],
                 ["workflow", "history", "nope"]):
        r = cli(b, *args)
        assert r.code != 0
        assert r.error["code"] == "not_found", r
        assert "Traceback" not in r.stderr
