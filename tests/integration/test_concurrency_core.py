"""Several processes at once, processes killed mid-write, and locks: the
versioned data stays whole and the next command works."""

from __future__ import annotations

import json
import random
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from tests.helpers import (PROBE_TYPE, PYTHON, _env, assert_no_torn_versions, cli, init_repo, invoke, popen,
                           visible_versions, write_type)

STREAMER = '''
    import time
    from pathlib import Path

    from pydantic import BaseModel
    from swamp import Context, ModelType


    class Args(BaseModel):
        chunks: int = 10
        chunk_kb: int = 64
        signal_file: str = ""
        pause_ms: int = 0


    streamer = ModelType("acme/streamer", version="2026.01.01.1", global_arguments=Args)
    streamer.file("big", content_type="application/octet-stream", streaming=True)
    streamer.resource("blob", lifetime="infinite")


    @streamer.method()
    def stream(args, ctx: Context) -> None:
        chunk = bytes(range(256)) * (args.chunk_kb * 4)
        with ctx.file_writer("big", "big") as w:
            for i in range(args.chunks):
                w.write(chunk)
                if i == 2 and args.signal_file:
                    Path(args.signal_file).touch()
                if args.pause_ms:
                    time.sleep(args.pause_ms / 1000)


    @streamer.method()
    def blob(args, ctx: Context) -> None:
        ctx.write_resource("blob", "blob", {"pad": "x" * (args.chunk_kb * 1024), "n": args.chunks})
'''

# A worker process: waits for the go file, then runs METHOD of MODEL N times
# in-process, each run tagged with its worker and iteration.
WORKER = textwrap.dedent('''
    import os, sys, time
    from swamp.repo.context import Repo
    from swamp.app.methods import run_method
    from swamp.models.runner import Runner

    repo_dir, model, method, worker, n, go = sys.argv[1:7]
    repo = Repo.open(repo_dir)
    runner = Runner(repo)
    while not os.path.exists(go):
        time.sleep(0.002)
    i = 0
    while int(n) < 0 or i < int(n):
        inputs = {"note": f"{worker}-{i}"} if method == "write" else {"chunks": i, "chunk_kb": 1 + (i * 37) % 300}
        rec = run_method(repo, model, method, inputs=inputs, runner=runner).record
        assert rec.status == "succeeded", rec
        print(f"done {i}", flush=True)
        i += 1
''')


@pytest.fixture
def repo(tmp_path):
    r = init_repo(tmp_path / "repo")
    write_type(r, "probe.py", PROBE_TYPE)
    write_type(r, "streamer.py", STREAMER)
    assert invoke(r, "model", "create", "acme/probe", "c").code == 0
    assert invoke(r, "model", "create", "acme/streamer", "s").code == 0
    return r


def start_workers(repo, tmp_path, model, method, count, runs, env=None):
    go = tmp_path / "go"
    procs = [subprocess.Popen([PYTHON, "-c", WORKER, str(repo), model, method, f"w{k}", str(runs), str(go)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(env))
             for k in range(count)]
    return go, procs


def data_versions(repo, model, name):
    r = invoke(repo, "data", "versions", model, name)
    return [] if r.code else [v["version"] for v in r.data]


def test_four_processes_ten_runs_each_lose_and_reuse_nothing(repo, tmp_path):
    go, procs = start_workers(repo, tmp_path, "c", "write", 4, 10)
    time.sleep(0.3)  # let every worker import and reach the barrier
    go.touch()
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
    assert data_versions(repo, "c", "out") == list(range(1, 41))
    assert data_versions(repo, "c", "report") == list(range(1, 41))
    notes = {}
    for v in range(1, 41):
        d = invoke(repo, "data", "get", "c", "out", "--version", str(v)).data
        notes[d["content"]["note"]] = v
    assert set(notes) == {f"w{k}-{i}" for k in range(4) for i in range(10)}, "each version has its own content"
    for k in range(4):  # each worker's runs got increasing versions, in order
        mine = [notes[f"w{k}-{i}"] for i in range(10)]
        assert mine == sorted(mine)
    runs = invoke(repo, "model", "output", "search", "c", "--limit", "100").data
    assert len(runs) == 40 and all(r["status"] == "succeeded" for r in runs)
    assert assert_no_torn_versions(repo) == 80


def test_two_cli_processes_at_once(repo):
    results = {}

    def loop(k):
        results[k] = [cli(repo, "model", "method", "run", "c", "write", "--input", f"note=cli{k}-{i}")
                      for i in range(3)]

    threads = [threading.Thread(target=loop, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    versions = []
    for rs in results.values():
        for r in rs:
            assert r.code == 0, r
            versions += [a["version"] for a in r.data["dataArtifacts"] if a["name"] == "out"]
    assert sorted(versions) == list(range(1, 7))
    assert data_versions(repo, "c", "out") == list(range(1, 7))


def wait_for(path: Path, proc, timeout=20.0):
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def test_kill_during_a_streamed_write_leaves_no_torn_version(repo, tmp_path):
    signal_file = tmp_path / "streaming"
    p = popen(repo, "model", "method", "run", "s", "stream", "--input", "chunks=100000",
              "--input", f"signal_file={signal_file}", "--input", "pause_ms=1")
    wait_for(signal_file, p)
    p.kill()
    p.wait()
    # Bytes were on disk (in a temp file) but no version is visible.
    partial = [f for f in (repo / ".swamp" / "data").rglob("*") if f.is_file()]
    assert partial and all(f.name.startswith(".tmp-") for f in partial)
    assert data_versions(repo, "s", "big") == []
    assert invoke(repo, "data", "get", "s", "big").code == 1
    assert invoke(repo, "data", "list").data == []
    # A record is written once, in its final state: a killed run has none.
    r = invoke(repo, "model", "output", "search", "s")
    assert r.code == 0 and r.data == []
    # The next command works at once and never reuses the torn version.
    t0 = time.monotonic()
    r = cli(repo, "model", "method", "run", "s", "stream", "--input", "chunks=3",
            env={"SWAMP_LOCK_TIMEOUT_MS": "5000"})
    assert r.code == 0, r
    assert time.monotonic() - t0 < 5
    assert [a["version"] for a in r.data["dataArtifacts"]] == [2]
    assert data_versions(repo, "s", "big") == [2]
    d = invoke(repo, "data", "get", "s", "big", "--no-content").data
    assert d["size"] == 3 * 64 * 1024
    assert assert_no_torn_versions(repo) == 1


def test_kill_at_random_moments_during_runs(repo, tmp_path):
    rng = random.Random(20261130)
    for round_ in range(4):
        go, (p,) = start_workers(repo, tmp_path, "s", "blob" if round_ % 2 else "stream", 1, -1)
        go.touch()
        # Let it get going (one run done), then kill it at a random moment.
        assert p.stdout.readline().startswith("done"), p.stderr.read()
        time.sleep(rng.uniform(0.0, 0.15))
        p.kill()
        p.wait()
        go.unlink()
        checked = assert_no_torn_versions(repo)
        assert checked >= round_ + 1
    before = {(m["name"], m["version"]) for _, m, _ in visible_versions(repo)}
    claimed = max(int(d.name) for d in (repo / ".swamp" / "data").rglob("*")
                  if d.is_dir() and d.name.isdigit() and d.parent.name == "big")
    r = cli(repo, "model", "method", "run", "s", "stream", "--input", "chunks=2",
            env={"SWAMP_LOCK_TIMEOUT_MS": "5000"})
    assert r.code == 0, r
    new = r.data["dataArtifacts"][0]["version"]
    assert new == claimed + 1, "a fresh version, never one a killed writer claimed"
    after = {(m["name"], m["version"]) for _, m, _ in visible_versions(repo)}
    assert after == before | {("big", new)}
    assert assert_no_torn_versions(repo) == len(after)


# ------------------------------------------------------------------ locks
HOLDER = textwrap.dedent('''
    import sys, time
    from swamp.repo.context import Repo
    from swamp.models.definitions import find_definition
    from swamp.models.leases import model_lock_name

    repo = Repo.open(sys.argv[1])
    d = find_definition(repo, sys.argv[2])[1]
    with repo.datastore.lock(model_lock_name(d.type, d.id)):
        print("held", flush=True)
        time.sleep(float(sys.argv[3]))
''')


def model_lease(repo, name):
    """(the lease store of the repository's filesystem datastore, the
    object key of model ``name``'s lease)."""
    from swamp.models.leases import model_lock_name
    from swamp.models.definitions import find_definition
    from swamp.repo.context import Repo

    r = Repo.open(repo)
    d = find_definition(r, name)[1]
    store, layout = r.datastore._lease_store()
    return store, layout.lease(model_lock_name(d.type, d.id))


def held_locks(repo) -> list[str]:
    from swamp.repo.context import Repo

    return [s["name"] for s in Repo.open(repo).datastore.lock_status()]


def test_a_lock_held_by_a_live_process_times_out_with_75_naming_it(repo):
    holder = subprocess.Popen([PYTHON, "-c", HOLDER, str(repo), "c", "30"], stdout=subprocess.PIPE, text=True,
                              env=_env())
    try:
        assert holder.stdout.readline().strip() == "held"
        t0 = time.monotonic()
        r = cli(repo, "model", "method", "run", "c", "write", env={"SWAMP_LOCK_TIMEOUT_MS": "300"})
        assert r.code == 75, r
        assert r.stdout == ""
        err = r.error
        assert err["code"] == "lock_timeout"
        assert f"pid {holder.pid}" in err["error"] and socket.gethostname() in err["error"]
        assert "300 ms" in err["error"]
        assert time.monotonic() - t0 < 10
        # Other models are not blocked.
        assert invoke(repo, "model", "method", "run", "s", "blob").code == 0
        # Nothing was written for the run that could not start.
        assert data_versions(repo, "c", "out") == []
        # Without --json: the same message on stderr.
        r = cli(repo, "data", "delete", "c", "out", "-y", json=False, env={"SWAMP_LOCK_TIMEOUT_MS": "100"})
        assert r.code == 75 and f"pid {holder.pid}" in r.stderr
    finally:
        holder.kill()
        holder.wait()


def write_lease(repo, name: str, *, host: str, pid: int, ttl_ms: int = 30_000, machine: str | None = None) -> None:
    """A lease left by a holder that stopped heartbeating (``machine``: its
    boot and PID namespace, as a holder on this machine records them)."""
    store, key = model_lease(repo, name)
    store.put(key, json.dumps({"name": "x", "holder": f"someone@{host}", "host": host, "pid": pid,
                               **({"machine": machine} if machine else {}),
                               "nonce": "abc", "ttlMs": ttl_ms, "acquiredAt": "2026-01-01T00:00:00.000Z"}).encode())


def test_a_stale_lock_is_taken_over(repo):
    # No clock is trusted: stale once the taker has watched it unchanged for its ttl.
    write_lease(repo, "c", host="elsewhere.example", pid=4242, ttl_ms=500)
    r = cli(repo, "model", "method", "run", "c", "write", env={"SWAMP_LOCK_TIMEOUT_MS": "5000"})
    assert r.code == 0, r
    assert held_locks(repo) == [], "released after the run"


def test_a_fresh_lock_from_another_host_is_respected(repo):
    write_lease(repo, "c", host="elsewhere.example", pid=4242)
    r = cli(repo, "model", "method", "run", "c", "write", env={"SWAMP_LOCK_TIMEOUT_MS": "300"})
    assert r.code == 75, r
    assert "someone@elsewhere.example" in r.error["error"] and "pid 4242" in r.error["error"]
    assert len(held_locks(repo)) == 1


def test_a_lock_left_by_a_dead_process_on_this_host_is_taken_over_at_once(repo):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    import os

    from swamp.datastore.locks import machine_identity

    write_lease(repo, "c", host=socket.gethostname(), pid=dead.pid, machine=machine_identity(os.getpid()))
    r = cli(repo, "model", "method", "run", "c", "write", env={"SWAMP_LOCK_TIMEOUT_MS": "2000"})
    assert r.code == 0, r


def test_a_lock_with_our_host_name_from_another_machine_waits_for_its_ttl(repo):
    # Same host name, pid not running here, but recorded on another machine
    # (or PID namespace), or by an older swamp that recorded none: not ours to judge.
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    for machine in ("another-boot:4026531836", None):
        write_lease(repo, "c", host=socket.gethostname(), pid=dead.pid, machine=machine)
        r = cli(repo, "model", "method", "run", "c", "write", env={"SWAMP_LOCK_TIMEOUT_MS": "300"})
        assert r.code == 75, r
        assert f"pid {dead.pid}" in r.error["error"]


def test_ctrl_c_records_a_cancelled_run_and_releases_the_lock(repo, tmp_path):
    signal_file = tmp_path / "streaming"
    p = popen(repo, "model", "method", "run", "s", "stream", "--input", "chunks=100000",
              "--input", f"signal_file={signal_file}", "--input", "pause_ms=1")
    wait_for(signal_file, p)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=20)
    assert p.returncode == 130, (out, err)
    assert json.loads(err) == {"error": "interrupted", "code": "interrupted"}
    runs = invoke(repo, "model", "output", "search", "s").data
    assert [r["status"] for r in runs] == ["cancelled"]
    assert invoke(repo, "model", "output", "get", runs[0]["id"]).data["error"] == "interrupted"
    assert data_versions(repo, "s", "big") == []
    # no half-written content left: the interrupted version is a tombstone, as a deleted one is
    assert sorted(p.name for p in (repo / ".swamp" / "data").rglob("big/*/*")) == ["tombstone"]
    assert held_locks(repo) == []
    r = cli(repo, "model", "method", "run", "s", "stream", "--input", "chunks=1",
            env={"SWAMP_LOCK_TIMEOUT_MS": "1000"})
    # Its number is never given out again (another process may have pushed its content).
    assert r.code == 0 and r.data["dataArtifacts"][0]["version"] == 2
