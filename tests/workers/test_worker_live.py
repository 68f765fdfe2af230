"""A placed step while it runs, on real Dask workers (separate processes on
127.0.0.1) and SeaweedFS: a cancel stops it on its worker, its log lines
reach the dispatching run before it ends, and the ephemeral data it writes
comes back to the run (issue 12)."""

from __future__ import annotations

import json
import os
import signal
import textwrap
import time

import pytest

from tests.helpers import cli, ok, popen, write_type
from tests.workers.cluster import dump
from tests.workers.conftest import SECRET

pytestmark = [pytest.mark.slow, pytest.mark.s3]

TYPE = '''
import os
import time

from pydantic import BaseModel
from swamp import Context, ModelType


class Globals(BaseModel):
    token: str = ""


class Args(BaseModel):
    value: str = "v"
    gate: str = ""


live = ModelType("acme/live", version="2026.11.30.1", global_arguments=Globals)
live.resource("result")
live.resource("scratch", lifetime="ephemeral")


@live.method(description="Log a line, wait for the gate file, log another", arguments=Args)
def talk(args, ctx: Context) -> None:
    ctx.log("first line from the worker")
    deadline = time.monotonic() + 120
    while not os.path.exists(args.gate) and time.monotonic() < deadline:
        time.sleep(0.05)
    ctx.log("second line from the worker")
    ctx.write_resource("result", "result", {"value": "talked"})


@live.method(description="Write ephemeral scratch data", arguments=Args)
def scratch(args, ctx: Context) -> None:
    ctx.write_resource("scratch", "scratch", {"value": args.value, "token": args.token})


@live.method(description="Write the result", arguments=Args)
def write(args, ctx: Context) -> None:
    ctx.write_resource("result", "result", {"value": args.value})
'''


def _workflows(tmp) -> dict[str, str]:
    return {
        "sleepy": f"""
            name: sleepy
            jobs:
              - name: j
                steps:
                  - name: nap
                    placement: {{target: live-1, queueTimeout: 20}}
                    task:
                      type: model_method
                      modelIdOrName: sleeper
                      methodName: execute
                      inputs: {{run: 'echo $$ > {tmp}/pid-${{{{ inputs.tag }}}}; exec sleep 120'}}
            inputs:
              properties:
                tag: {{type: string}}
        """,
        "chatty": """
            name: chatty
            inputs:
              properties:
                gate: {type: string}
            jobs:
              - name: j
                steps:
                  - name: talk
                    placement: {target: live-1, queueTimeout: 20}
                    task: {type: model_method, modelIdOrName: talker, methodName: talk,
                           inputs: {gate: "${{ inputs.gate }}"}}
        """,
        "scratchpad": """
            name: scratchpad
            jobs:
              - name: j
                steps:
                  - name: remote
                    placement: {target: live-1, queueTimeout: 20}
                    task: {type: model_method, modelIdOrName: pad, methodName: scratch, inputs: {value: from-worker}}
                  - name: here
                    dependsOn: [{step: remote}]
                    task:
                      type: model_method
                      modelIdOrName: pad
                      methodName: write
                      inputs:
                        value: "${{ data.latest('pad', 'scratch').attributes.value }}+${{ data.latest('pad', 'scratch').attributes.token }}"
        """,
    }


MODELS = {
    ("command/shell", "sleeper"): "type: command/shell\nname: sleeper\nglobalArguments:\n  run: 'true'\n",
    ("acme/live", "talker"): "type: acme/live\nname: talker\n",
    ("acme/live", "pad"): "type: acme/live\nname: pad\nglobalArguments:\n"
                          "  token: \"${{ vault.get('main', 'token') }}\"\n",
}


@pytest.fixture(scope="module")
def live(cluster, tmp_path_factory):
    """The shared cluster plus a worker ``live-1`` (concurrency 1) that
    knows the types and models of this module."""
    tmp = tmp_path_factory.mktemp("live-files")
    write_type(cluster.origin, "live.py", TYPE)
    for (type_, name), body in MODELS.items():
        path = cluster.origin / "models" / type_ / f"{name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
    for name, body in _workflows(tmp).items():
        (cluster.origin / "workflows" / f"workflow-{name}.yaml").write_text(textwrap.dedent(body).lstrip())
    cluster.start_worker("live-1", "region=live", concurrency=1)
    return cluster, tmp


def _steps(run: dict) -> list[dict]:
    return [s for j in run["jobs"] for s in j["steps"]]


def _wait_for(what: str, probe, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = probe()
        if got:
            return got
        time.sleep(0.1)
    pytest.fail(f"timed out waiting for {what}")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for our purpose (its parent has not reaped it yet).
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def _pid(path) -> int | None:
    try:
        text = path.read_text().strip()
    except FileNotFoundError:
        return None
    return int(text) if text else None


def _sleeper_versions(cluster) -> list:
    """Every version of the sleeper's data each live peer sees."""
    seen = []
    for peer in [cluster.origin] + [w.repo for w in cluster.workers.values() if w.proc.poll() is None]:
        for name in ("result", "log"):
            r = cli(peer, "data", "versions", "sleeper", name)
            seen.append(sorted(v["version"] for v in r.data) if r.code == 0 else [])
    return seen


@pytest.mark.parametrize("how", ["workflow cancel", "ctrl-c", "dispatcher killed"])
def test_a_cancel_stops_the_step_on_its_worker(live, how):
    """Cancelled, interrupted, or its dispatching process killed: the
    step's process on the worker is killed, nothing it wrote is published,
    and the worker takes the next step."""
    cluster, tmp = live
    before = _sleeper_versions(cluster)
    proc = popen(cluster.origin, "workflow", "run", "sleepy", "--input", f"tag={how[0]}",
                 *cluster.link)
    try:
        pid = _wait_for("the step's process on the worker", lambda: _pid(tmp / f"pid-{how[0]}"))
        assert _alive(pid)
        if how == "workflow cancel":
            asked = ok(cluster.origin, "workflow", "cancel", "sleepy")
            assert asked["cancelRequested"] is True
        elif how == "ctrl-c":
            proc.send_signal(signal.SIGINT)  # Ctrl-C of the dispatching `workflow run`
        else:
            proc.kill()  # the dispatching process dies: its steps are cancelled, not finished
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    _wait_for("the step's process to be killed", lambda: not _alive(pid), timeout=30)
    if how != "dispatcher killed":  # (a killed run's record is a peer's to mark interrupted)
        latest = ok(cluster.origin, "workflow", "history", "list", "sleepy")[0]
        run = ok(cluster.origin, "workflow", "history", "get", latest["id"])
        assert run["status"] == "cancelled", (out, err, run)
        (step,) = _steps(run)
        assert step["error"].startswith("cancelled"), step
    assert _sleeper_versions(cluster) == before  # nothing of it published, on any peer
    # The worker is free: the next step placed on it runs.
    got = ok(cluster.origin, "model", "method", "run", "hello", "execute", "--input", "run=echo next",
             "--placement", "region=live", *cluster.link)
    assert got["status"] == "succeeded" and got["worker"] == "live-1"
    # Nothing the cancelled step wrote turns up later either: the version
    # numbers stay contiguous (only this test's own runs wrote any).
    ok(cluster.origin, "model", "method", "run", "sleeper", "execute", "--input", "run=echo after")
    versions = [v["version"] for v in ok(cluster.origin, "data", "versions", "sleeper", "result")]
    assert versions == list(range(1, len(versions) + 1))


def test_a_worker_stopped_mid_step_takes_the_steps_process_with_it(live):
    cluster, tmp = live
    before = _sleeper_versions(cluster)
    stopping = cluster.start_worker("stopping-1", "region=stopping", concurrency=1)
    pid_file = tmp / "pid-stopping"
    proc = popen(cluster.origin, "model", "method", "run", "sleeper", "execute", "--input",
                 f"run=echo $$ > {pid_file}; exec sleep 120", "--placement", "region=stopping",
                 *cluster.link)
    try:
        pid = _wait_for("the step's process on the worker", lambda: _pid(pid_file))
        stopping.proc.send_signal(signal.SIGTERM)  # the worker is stopped (as its service manager would)
        stopping.proc.wait(timeout=60)
        out, err = proc.communicate(timeout=60)
    finally:
        for p in (proc, stopping.proc):
            if p.poll() is None:
                p.kill()
    _wait_for("the step's process to be gone", lambda: not _alive(pid), timeout=30)
    assert proc.returncode != 0 and "worker lost" in err, (out, err)
    assert _sleeper_versions(cluster) == before


def test_a_placed_steps_log_lines_reach_the_run_while_it_runs(live):
    cluster, tmp = live
    proc = popen(cluster.origin, "workflow", "run", "chatty", "--input", f"gate={tmp}/gate-cli",
                 *cluster.link)
    try:
        def first_line():
            r = cli(cluster.origin, "workflow", "logs", "chatty")
            return r.code == 0 and r.data["status"] == "running" and "first line from the worker" in r.data["log"] \
                and r.data
        seen = _wait_for("the first line in the run's log", first_line)
        assert "second line from the worker" not in seen["log"]  # the step has not ended: it waits for the gate
        (tmp / "gate-cli").write_text("go")
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    run = json.loads(out)
    assert run["status"] == "succeeded", (out, err)
    log = ok(cluster.origin, "workflow", "logs", "chatty")["log"]
    assert log.index("first line from the worker") < log.index("second line from the worker")


def test_the_status_line_of_workflow_run_shows_a_placed_steps_line_while_it_runs(live):
    import pty
    import select
    import sys

    from tests.helpers import _env

    cluster, tmp = live
    gate = tmp / "gate-tty"
    pid, fd = pty.fork()
    if pid == 0:  # `swamp workflow run` on a terminal, whose status line shows the last line logged
        os.chdir(cluster.origin)
        os.execve(sys.executable, [sys.executable, "-m", "swamp", "workflow", "run", "chatty", "--input",
                                   f"gate={gate}", *cluster.link], _env(None))
    out, deadline = b"", time.monotonic() + 90
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                out += chunk
            if not gate.exists() and b"first line from the worker" in out:
                assert b"talk succeeded" not in out  # seen while the step runs: it waits for the gate
                gate.write_text("go")
    finally:
        if not gate.exists():
            gate.write_text("go")
        _, status = os.waitpid(pid, 0)
    text = out.decode(errors="replace")
    assert b"first line from the worker" in out, text
    assert os.waitstatus_to_exitcode(status) == 0, text


def test_serves_run_stream_carries_a_placed_steps_log_lines_as_they_come(live):
    from tests.serve.server import Serve

    cluster, tmp = live
    server = Serve(cluster.origin, *cluster.link)
    seen = []
    try:
        for event, data in server.events("/api/v1/workflows/chatty/run", {"inputs": {"gate": f"{tmp}/gate-serve"}}):
            seen.append((event, data))
            if event == "log" and "first line from the worker" in data.get("line", ""):
                assert data["step"] == "talk" and data["job"] == "j"
                assert not any(e == "result" for e, _ in seen)  # the run has not ended: the step waits
                (tmp / "gate-serve").write_text("go")
            if event in ("result", "error"):
                break
    finally:
        server.stop()
    lines = [d["line"] for e, d in seen if e == "log"]
    assert "first line from the worker" in lines and "second line from the worker" in lines, seen
    assert seen[-1][0] == "result" and seen[-1][1]["status"] == 200, seen[-1]


def test_ephemeral_data_of_a_placed_step_reaches_later_steps_and_is_never_written(live):
    cluster, _ = live
    run = cluster.run("scratchpad")
    assert run["status"] == "succeeded", run
    remote, here = _steps(run)
    assert remote["worker"] == "live-1" and not here.get("worker")
    result = ok(cluster.origin, "data", "get", "pad", "result")["content"]
    assert result == {"value": "from-worker+***"}  # the secret came back redacted
    for peer in [cluster.origin, cluster.workers["live-1"].repo]:
        names = {row["name"] for row in ok(peer, "data", "list", "pad")}
        assert names == {"result"}, (peer, names)  # the scratch data was never written, on either side
    assert SECRET not in dump(run)
