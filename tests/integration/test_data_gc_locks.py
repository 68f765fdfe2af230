"""Review finding: `data gc` takes every model's lock in turn, even a model
with nothing to collect, so one long method run anywhere makes the whole gc
wait and fail with exit 75; and `data gc --dry-run`, a read, pulls once per
model instead of once (S2)."""

from __future__ import annotations

import subprocess
import textwrap

from tests.helpers import PYTHON, _env, cli, init_repo, invoke

HOLDER = textwrap.dedent('''
    import sys, time
    from swamp.repo.context import Repo
    from swamp.models.definitions import find_definition
    from swamp.models.leases import model_lock_name

    repo = Repo.open(sys.argv[1])
    d = find_definition(repo, sys.argv[2])[1]
    with repo.datastore.lock(model_lock_name(d.type, d.id)):
        print("held", flush=True)
        time.sleep(30)
''')


def ok(repo, *args):
    r = invoke(repo, *args)
    assert r.code == 0, r
    return r.data


def test_gc_does_not_wait_for_a_busy_model_with_nothing_to_collect(tmp_path):
    a = init_repo(tmp_path / "a")
    for name in ("busy", "old"):
        ok(a, "model", "create", "command/shell", name, "--global-arg", f"run=echo {name}")
    ok(a, "model", "method", "run", "busy", "execute")
    for i in range(12):  # command/shell keeps 10 versions
        ok(a, "model", "method", "run", "old", "execute")
    holder = subprocess.Popen([PYTHON, "-c", HOLDER, str(a), "busy"], stdout=subprocess.PIPE, text=True,
                              env=_env())
    try:
        assert holder.stdout.readline().strip() == "held"
        r = cli(a, "data", "gc", "-y", env={"SWAMP_LOCK_TIMEOUT_MS": "1500"})
        assert r.code == 0, r
        assert {(d["model"], d["version"]) for d in r.data["deleted"]} == {("old", 1), ("old", 2)}
    finally:
        holder.kill()
        holder.wait()


def test_gc_dry_run_pulls_once(tmp_path, monkeypatch):
    from swamp.datastore.base import Datastore

    a = init_repo(tmp_path / "a")
    for name in ("m1", "m2", "m3"):
        ok(a, "model", "create", "command/shell", name, "--global-arg", f"run=echo {name}")
        ok(a, "model", "method", "run", name, "execute")
    sessions = []
    real = Datastore.session

    def counting(self, **kw):
        sessions.append(kw)
        return real(self, **kw)

    monkeypatch.setattr(Datastore, "session", counting)
    assert ok(a, "data", "gc", "--dry-run") == {"deleted": [], "dryRun": True}
    assert len(sessions) == 1, sessions


def test_a_method_whose_arguments_query_data_syncs_once(tmp_path, monkeypatch):
    """data.query()/data.findByTag() in a definition open a session of
    their own: on a shared datastore every evaluation is one more pull (S2),
    nested inside the run's own."""
    from swamp.datastore.base import Datastore

    a = init_repo(tmp_path / "a")
    ok(a, "model", "create", "command/shell", "src", "--global-arg", "run=echo src")
    ok(a, "model", "method", "run", "src", "execute")
    ok(a, "model", "create", "command/shell", "use", "--global-arg",
       "run=echo ${{ size(data.query('name == \"result\"')) }} ${{ size(data.findByTag('modelName', 'src')) }}")
    sessions = []
    real = Datastore.session

    def counting(self, **kw):
        sessions.append(kw)
        return real(self, **kw)

    monkeypatch.setattr(Datastore, "session", counting)
    rec = ok(a, "model", "method", "run", "use", "execute")
    assert ok(a, "data", "get", "use", "result")["content"]["stdout"] == "1 2"
    assert len([s for s in sessions if s.get("mutating")]) == 1
    assert len(sessions) == 2, sessions  # the run's own session, and `data get`'s
    assert rec["status"] == "succeeded"


def test_workflow_evaluate_pulls_once_before_reading_data(tmp_path, monkeypatch):
    """`workflow evaluate` resolves data.* expressions: as a read command it
    pulls first, once (it did not pull at all, unless data.query pulled on
    its own, once per call)."""
    from swamp.datastore.base import Datastore

    a = init_repo(tmp_path / "a")
    ok(a, "model", "create", "command/shell", "src", "--global-arg", "run=echo src")
    ok(a, "model", "method", "run", "src", "execute")
    (a / "workflows" / "workflow-w.yaml").write_text(
        "name: w\njobs:\n  - name: j\n    steps:\n      - name: s\n        task:\n"
        "          type: model_method\n          modelIdOrName: src\n          methodName: execute\n"
        "          inputs:\n            run: \"echo ${{ data.latest('src', 'result').content.stdout }}"
        " ${{ size(data.query('name == \\\"log\\\"')) }}\"\n")
    sessions = []
    real = Datastore.session

    def counting(self, **kw):
        sessions.append(kw)
        return real(self, **kw)

    monkeypatch.setattr(Datastore, "session", counting)
    doc = ok(a, "workflow", "evaluate", "w")
    assert doc["jobs"][0]["steps"][0]["task"]["inputs"]["run"] == "echo src 1", doc
    assert sessions == [{"mutating": False}]
