"""Only enrolled parties use the workers (issue 23, item 4): the attacks of
the security review's P7 against the secure setup of docs/workers.md (a
team CA, tls:// scheduler, enrolled workers), each refused.

- a party without the team's certificate (a plain Dask client, TLS without
  a certificate, a certificate of another CA) cannot connect to the
  scheduler or to a worker, so it runs no code there and reads no task state;
- a rogue worker carrying the same labels cannot join and gets no step;
- a worker listens on loopback for a scheduler on this machine, never on
  every interface;
- the enrolled setup itself works: a placed step with a secret runs."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import pytest

from tests.helpers import _env, cli
from tests.workers.conftest import SECRET

from swamp.workers import team_certs

pytestmark = [pytest.mark.slow, pytest.mark.s3]

# Run as a separate process, the way an attacker would: only the address and
# what it holds. Prints {attempt: "connected" | "refused: ..."}.
ATTACKER = r'''
import asyncio, json, socket, ssl, sys
from distributed.comm import connect
from distributed.security import Security

scheduler, worker, rogue_dir, team_dir = sys.argv[1:5]

def security(folder, name):
    return Security(require_encryption=True, tls_ca_file=f"{folder}/ca.pem",
                    tls_client_cert=f"{folder}/{name}.pem", tls_client_key=f"{folder}/{name}-key.pem")

async def dask_connect(address, sec):
    try:
        kw = sec.get_connection_args("client") if sec else {}
        comm = await connect(address, timeout=4, **kw)
        await comm.write({"op": "identity"})  # answered only to someone the server accepted
        reply = await asyncio.wait_for(comm.read(), 4)
        await comm.close()
        return "connected" if isinstance(reply, dict) else f"refused: {reply!r}"
    except BaseException as e:  # noqa: BLE001 - any failure is a refusal
        return f"refused: {type(e).__name__}"

def tls_without_certificate(address):
    host, port = address.split("://")[1].rsplit(":", 1)
    ctx = ssl.create_default_context(cafile=f"{team_dir}/ca.pem")
    ctx.check_hostname = False
    try:
        with socket.create_connection((host, int(port)), timeout=4) as raw:
            with ctx.wrap_socket(raw) as s:
                s.sendall(b"\0" * 16)
                data = s.recv(1)
                return "connected" if data else "refused: closed"
    except (OSError, ssl.SSLError) as e:
        return f"refused: {type(e).__name__}"

async def main():
    out = {}
    for who, address in (("scheduler", scheduler), ("worker", worker)):
        out[f"{who}: plain tcp"] = await dask_connect(address.replace("tls://", "tcp://"), None)
        out[f"{who}: tls, no certificate"] = tls_without_certificate(address)
        out[f"{who}: another CA's certificate"] = await dask_connect(address, security(rogue_dir, "dispatcher"))
        out[f"{who}: the team's certificate"] = await dask_connect(address, security(team_dir, "dispatcher"))
    print(json.dumps(out))

asyncio.run(main())
'''

# A Dask worker with the swamp resources and the labels of us-1, holding a
# certificate of another CA; it writes down every task it is given.
ROGUE_WORKER = r'''
import asyncio, sys
from distributed import Worker
from distributed.security import Security

scheduler, rogue_dir, capture = sys.argv[1:4]
sec = Security(require_encryption=True, tls_ca_file=f"{rogue_dir}/ca.pem",
               tls_worker_cert=f"{rogue_dir}/us-1.pem", tls_worker_key=f"{rogue_dir}/us-1-key.pem",
               tls_client_cert=f"{rogue_dir}/us-1.pem", tls_client_key=f"{rogue_dir}/us-1-key.pem")

class Grab:
    def setup(self, worker):
        self.worker = worker
    def transition(self, key, start, finish, **kw):
        with open(capture, "a") as f:
            f.write(f"{key}\n")

async def main():
    try:
        w = await Worker(scheduler, name="us-rogue", nthreads=2, resources={"swamp": 2, "region=us": 2},
                         security=sec, death_timeout=8, plugins={Grab()}, host="127.0.0.1")
    except BaseException as e:  # noqa: BLE001
        print("could not join:", type(e).__name__)
        sys.exit(3)
    print("joined")
    await w.finished()

asyncio.run(main())
'''


@pytest.fixture(scope="module")
def rogue_ca(tmp_path_factory):
    """Another CA, with certificates named as the team's are."""
    folder = tmp_path_factory.mktemp("rogue-ca")
    team_certs.create_ca(folder)
    for name in ("dispatcher", "us-1"):
        team_certs.issue(folder, name)
    return folder


def test_the_enrolled_setup_runs_a_placed_step_with_its_secret(cluster):
    run = cluster.run("secret")
    assert run["status"] == "succeeded", run
    (step,) = [s for j in run["jobs"] for s in j["steps"]]
    assert step["worker"] == "us-1"
    got = cli(cluster.origin, "data", "get", "secretive", "result").data["content"]["stdout"].strip()
    assert got == hashlib.sha256(SECRET.encode()).hexdigest()


def test_nobody_without_the_teams_certificate_can_talk_to_the_scheduler_or_a_worker(cluster, rogue_ca):
    worker = next(r["address"] for r in cluster.list() if r["name"] == "eu-1")
    assert worker.startswith("tls://")
    p = subprocess.run([sys.executable, "-c", ATTACKER, cluster.scheduler, worker, str(rogue_ca), str(cluster.certs)],
                       capture_output=True, text=True, env=_env(), timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    got = json.loads(p.stdout.strip().splitlines()[-1])
    for who in ("scheduler", "worker"):
        assert got[f"{who}: the team's certificate"] == "connected", got  # the probe can tell
        for attempt in ("plain tcp", "tls, no certificate", "another CA's certificate"):
            assert got[f"{who}: {attempt}"].startswith("refused"), (who, attempt, got)


def test_a_rogue_worker_with_the_same_labels_cannot_join_and_gets_no_step(cluster, rogue_ca, tmp_path):
    capture = tmp_path / "captured.txt"
    rogue = subprocess.Popen([sys.executable, "-c", ROGUE_WORKER, cluster.scheduler, str(rogue_ca), str(capture)],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=_env())
    try:
        run = cluster.run("secret")  # placed on us-1, whose labels the rogue carries
        out, _ = rogue.communicate(timeout=60)
    finally:
        if rogue.poll() is None:
            rogue.kill()
    assert rogue.returncode == 3 and "could not join" in out, out[-2000:]
    assert "us-rogue" not in {w["name"] for w in cluster.list()}
    (step,) = [s for j in run["jobs"] for s in j["steps"]]
    assert run["status"] == "succeeded" and step["worker"] == "us-1", run
    assert not capture.exists() or capture.read_text() == ""


def test_swamp_worker_start_with_another_cas_certificate_is_refused(cluster, rogue_ca):
    r = cli(cluster.peer("worker-impostor"), "worker", "start", "--scheduler", cluster.scheduler,
            "--team-certs", str(rogue_ca), "--cert-name", "us-1", "--label", "region=us", "--name", "impostor",
            timeout=120)
    assert r.code != 0
    assert r.error["code"] == "scheduler_unreachable" and "team CA" in r.error["hint"], r
    assert "impostor" not in {w["name"] for w in cluster.list()}


def test_a_worker_listens_on_loopback_for_a_scheduler_on_this_machine(cluster):
    import psutil

    for w in cluster.workers.values():
        listening = {c.laddr.ip for c in psutil.Process(w.proc.pid).net_connections(kind="inet")
                     if c.status == psutil.CONN_LISTEN}
        assert listening and listening <= {"127.0.0.1"}, (w.name, listening)
    for row in cluster.list():
        assert row["address"].startswith("tls://127.0.0.1:"), row


def test_a_tcp_scheduler_is_refused_without_the_insecure_flag(cluster):
    """The enrolled scheduler is tls://; the same commands aimed at a plain
    tcp:// address are refused before anything is sent."""
    tcp = cluster.scheduler.replace("tls://", "tcp://")
    for args, flag in ((["workflow", "run", "secret"], "--insecure-scheduler"),
                       (["model", "method", "run", "hello", "execute", "--placement", "region=eu"],
                        "--insecure-scheduler"),
                       (["worker", "list"], "--insecure")):
        r = cli(cluster.origin, *args, "--scheduler", tcp)
        assert r.code == 2, (args, r)
        assert r.error["code"] == "insecure_link" and flag in r.error["hint"], r


# An enrolled party (here: with the team's dispatcher certificate) reads the
# scheduler's task state while a placed step that carries a secret is queued
# and runs, the way P7 did. Prints {"steps seen": n, "secret found": bool}.
TASK_STATE_READER = r'''
import json, pickle, sys, time
from distributed import Client
from distributed.security import Security

scheduler, team_dir, secret, deadline = sys.argv[1], sys.argv[2], sys.argv[3].encode(), time.monotonic() + 60
sec = Security(require_encryption=True, tls_ca_file=f"{team_dir}/ca.pem",
               tls_client_cert=f"{team_dir}/dispatcher.pem", tls_client_key=f"{team_dir}/dispatcher-key.pem")
client = Client(scheduler, security=sec, timeout=20)

def grab(dask_scheduler=None):
    out = []
    for key, ts in dask_scheduler.tasks.items():
        try:
            blob = pickle.dumps(ts.run_spec, protocol=5)
        except Exception as e:  # noqa: BLE001
            blob = repr(e).encode()
        out.append((str(key), blob))
    return out

seen, found = set(), False
while time.monotonic() < deadline:
    steps = [(key, blob) for key, blob in client.run_on_scheduler(grab) if key.startswith("swamp-step-")]
    if seen and not steps:
        break  # the step came and went: its whole life in the scheduler was read
    for key, blob in steps:
        seen.add(key)
        found = found or secret in blob
    time.sleep(0.1)
print(json.dumps({"steps seen": len(seen), "secret found": found}))
client.close()
'''


def test_a_placed_steps_secret_is_not_in_the_schedulers_task_state_in_clear(cluster):
    import time

    from tests.helpers import popen

    model = cluster.origin / "models" / "command" / "shell" / "lingering.yaml"
    model.write_text("type: command/shell\nname: lingering\nglobalArguments:\n"
                     "  run: 'sleep 4; printf %s \"$TOKEN\" | sha256sum | cut -c1-64'\n"
                     "  env:\n    TOKEN: \"${{ vault.get('main', 'token') }}\"\n")
    (cluster.origin / "workflows" / "workflow-lingering.yaml").write_text(
        "name: lingering\njobs:\n  - name: j\n    steps:\n      - name: use\n"
        "        placement: {labels: {region: us}, queueTimeout: 20}\n"
        "        task: {type: model_method, modelIdOrName: lingering, methodName: execute}\n")
    reader = subprocess.Popen([sys.executable, "-c", TASK_STATE_READER, cluster.scheduler, str(cluster.certs),
                               SECRET], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
    time.sleep(3)  # the reader is connected and looking before the step is sent
    run = popen(cluster.origin, "workflow", "run", "lingering", *cluster.link)
    out, err = run.communicate(timeout=120)
    got, rerr = reader.communicate(timeout=120)
    assert json.loads(out)["status"] == "succeeded", (out, err)
    seen = json.loads(got.strip().splitlines()[-1])
    assert seen["steps seen"] >= 1, (got, rerr[-2000:])  # it did read the step's task
    assert seen["secret found"] is False
    digest = cli(cluster.origin, "data", "get", "lingering", "result").data["content"]["stdout"].strip()
    assert digest == hashlib.sha256(SECRET.encode()).hexdigest()  # the worker opened it


def test_with_the_insecure_flags_a_plain_tcp_setup_still_works_and_says_so(cluster, tmp_path):
    import socket

    from tests.fixtures.servers import _spawn, free_port, stop_processes, wait_until

    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    log = tmp_path / "scheduler.log"
    procs = [_spawn([sys.executable, "-m", "swamp", "worker", "scheduler", "--port", str(port), "--insecure"],
                    log, env=_env())]
    try:
        wait_until("the plain scheduler", lambda: socket.create_connection(("127.0.0.1", port), 1).close(),
                   procs, log)
        repo = cluster.peer("worker-plain")
        wlog = tmp_path / "worker.log"
        procs.append(_spawn([sys.executable, "-m", "swamp", "worker", "start", "--scheduler", address, "--insecure",
                             "--name", "plain-1", "--label", "region=plain", "--repo-dir", str(repo)], wlog,
                            env=_env()))

        def listed() -> None:
            r = cli(cluster.origin, "worker", "list", "--scheduler", address, "--insecure")
            assert [w["name"] for w in r.data] == ["plain-1"], r

        wait_until("the plain worker", listed, procs, wlog)
        r = cli(cluster.origin, "model", "method", "run", "hello", "execute", "--placement", "region=plain",
                "--scheduler", address, "--insecure-scheduler", timeout=120)
        assert r.code == 0 and r.data["worker"] == "plain-1", r
        assert "warning: INSECURE link" in r.stderr
        for text in (log.read_text(), wlog.read_text()):
            assert "warning: INSECURE link" in text
        row = cli(cluster.origin, "worker", "list", "--scheduler", address, "--insecure").data[0]
        assert row["address"].startswith("tcp://127.0.0.1:")  # still on loopback, not every interface
    finally:
        stop_processes(procs)


def _http_ports(pid: int) -> dict[int, int]:
    """{port: status of GET /metrics} for each port of ``pid`` that answers HTTP /health."""
    import urllib.error
    import urllib.request

    import psutil

    out = {}
    for c in psutil.Process(pid).net_connections(kind="inet"):
        if c.status != psutil.CONN_LISTEN:
            continue
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{c.laddr.port}/health", timeout=5) as r:
                assert r.read() == b"ok"
        except (OSError, AssertionError):
            continue  # the TLS port: not HTTP
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{c.laddr.port}/metrics", timeout=5) as r:
                out[c.laddr.port] = r.status
        except urllib.error.HTTPError as e:
            out[c.laddr.port] = e.code
    return out


def test_the_unauthenticated_http_ports_of_scheduler_and_workers_answer_a_health_check_only(cluster):
    """Dask always opens an HTTP port beside the TLS one, without
    authentication: it must not list workers, task keys or metrics."""
    scheduler = next(p for p in cluster.procs if p.args[3:5] == ["worker", "scheduler"])
    for pid in [scheduler.pid] + [w.proc.pid for w in cluster.workers.values()]:
        ports = _http_ports(pid)
        assert len(ports) == 1 and set(ports.values()) == {404}, (pid, ports)
