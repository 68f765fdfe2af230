"""Workers benchmark, on a SeaweedFS datastore started here:

1. A workflow of N forEach steps (default 200) of a short shell command,
   run in-process (the baseline) and placed on two local Dask workers
   (each `--concurrency 2`): wall time, steps per second, time per step.
2. The dispatch latency of one step through swamp's dispatcher beside a
   bare Dask `client.submit` of the same function with the same job.
3. Cancel latency: from the cancel to the step's process gone (a shell
   step `exec sleep 120`, its pid read from a file it writes), for a
   `model method run` interrupted here by Ctrl-C (SIGINT) or by `swamp
   model cancel` (the local baselines), a placed step whose `workflow run --scheduler` gets Ctrl-C
   (SIGINT), and a step, local or placed, cancelled with `swamp workflow
   cancel` from another process (which goes through the datastore: the request is
   pushed, the run sees it on its next pull, at most a second later).
   Each also until the cancelled command has exited.

    .venv/bin/python bench/workers_bench.py [--steps 200] [--runs 15] [--cancels 3] [--link tls|tcp]

`--link tls` (the default) is the secure setup of docs/workers.md: a team
CA made here, `swamp worker scheduler`, mutual TLS everywhere; `--link tcp`
the plain links (`--insecure`) the figures before TLS were taken on.

Prints a table and writes bench/results/workers-<time>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))
from tests.fixtures import servers  # noqa: E402  (starts nothing at import)

LANES = 8  # models the steps spread over: the engine runs one model's steps one after another


def swamp(repo: Path, *args, check: bool = True) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SWAMP_")}
    return subprocess.run([sys.executable, "-m", "swamp", *args, "--repo-dir", str(repo), "--json"],
                          capture_output=True, text=True, check=check, env=env)


def workflow(name: str, steps: int, placed: bool) -> str:
    items = ", ".join(str(i) for i in range(steps))
    placement = "        placement: {labels: {pool: bench}, queueTimeout: 60}\n" if placed else ""
    return (f"name: {name}\njobs:\n  - name: j\n    steps:\n"
            f"      - name: \"s-${{{{ self.i }}}}\"\n"
            f"        forEach: {{item: i, in: \"${{{{ [{items}] }}}}\"}}\n"
            f"{placement}"
            f"        task: {{type: model_method, modelIdOrName: \"h${{{{ self.i % {LANES} }}}}\", "
            f"methodName: execute}}\n")


def checkout(path: Path, origin: Path | None, setup: list[str]) -> Path:
    from swamp.repo.init import init_repo

    init_repo(path)
    if origin is None:
        for k in range(LANES):
            swamp(path, "model", "create", "command/shell", f"h{k}", "--global-arg", "run=echo hi")
    else:
        import shutil

        shutil.copytree(origin / "models", path / "models", dirs_exist_ok=True)
    swamp(path, "datastore", "setup", *setup)
    return path


def timed_run(origin: Path, name: str, *extra: str) -> tuple[float, dict]:
    t0 = time.perf_counter()
    r = swamp(origin, "workflow", "run", name, *extra, check=False)
    elapsed = time.perf_counter() - t0
    run = json.loads(r.stdout)
    failed = {s["name"]: s.get("error") for j in run["jobs"] for s in j["steps"] if s["status"] != "succeeded"}
    assert run["status"] == "succeeded", (len(failed), dict(list(failed.items())[:5]), r.stderr[-1000:])
    return elapsed, run


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--cancels", type=int, default=3)
    ap.add_argument("--link", choices=("tls", "tcp"), default="tls")
    opts = ap.parse_args()
    LINK["kind"] = opts.link
    tmp = Path(tempfile.mkdtemp(prefix="swamp-workers-bench-"))
    server = servers.start_seaweed_mini(tmp)
    procs: list = []
    try:
        results = run(server, tmp, opts.steps, opts.runs, opts.cancels, procs)
    finally:
        servers.stop_processes(procs + list(server.processes))
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / f"workers-{time.strftime('%Y%m%dT%H%M%S')}.json").write_text(json.dumps(results, indent=2))


#: the links the cluster runs on: "tls" (team certificates) or "tcp" (--insecure); and their options
LINK: dict = {"kind": "tls", "worker": [], "dispatch": [], "certs": None}


def start_cluster(tmp: Path, origin: Path, setup: list[str], procs: list) -> str:
    port = servers.free_port()
    log = tmp / "scheduler.log"
    if LINK["kind"] == "tls":
        from swamp.workers import team_certs

        certs = LINK["certs"] = tmp / "certs"
        team_certs.create_ca(certs)
        for name in ("scheduler", "dispatcher", "w1", "w2"):
            team_certs.issue(certs, name)
        LINK["worker"] = LINK["dispatch"] = ["--team-certs", str(certs)]
        cmd = [sys.executable, "-m", "swamp", "worker", "scheduler", "--port", str(port), *LINK["worker"]]
    else:
        LINK["worker"], LINK["dispatch"] = ["--insecure"], ["--insecure-scheduler"]
        cmd = [sys.executable, "-m", "swamp", "worker", "scheduler", "--port", str(port), "--insecure"]
    procs.append(servers._spawn(cmd, log))
    servers.wait_until("scheduler", lambda: socket.create_connection(("127.0.0.1", port), 1).close(), procs, log)
    address = f"{LINK['kind']}://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SWAMP_")}
    for n in (1, 2):
        repo = checkout(tmp / f"worker-{n}", origin, setup)
        procs.append(servers._spawn([sys.executable, "-m", "swamp", "worker", "start", "--scheduler", address,
                                     *LINK["worker"], "--label", "pool=bench", "--name", f"w{n}",
                                     "--concurrency", "2", "--repo-dir", str(repo)], tmp / f"worker-{n}.log",
                                    env=env))

    def two() -> None:
        rows = json.loads(swamp(origin, "worker", "list", "--scheduler", address, *LINK["worker"]).stdout)
        assert len(rows) == 2

    servers.wait_until("two workers", two, procs, tmp / "worker-1.log")
    return address


def run(server, tmp: Path, steps: int, runs: int, cancels: int, procs: list) -> dict:
    setup = ["s3", "--bucket", server.bucket, "--prefix", server.new_prefix(), "--endpoint-url",
             server.endpoint_url, "--region", "us-east-1"]
    origin = checkout(tmp / "origin", None, setup)
    (origin / "workflows").mkdir(exist_ok=True)
    (origin / "workflows" / "workflow-local.yaml").write_text(workflow("local", steps, placed=False))
    (origin / "workflows" / "workflow-placed.yaml").write_text(workflow("placed", steps, placed=True))
    pids = tmp / "pids"
    pids.mkdir()
    swamp(origin, "model", "create", "command/shell", "sleeper", "--global-arg", "run=true")
    (origin / "workflows" / "workflow-sleepy.yaml").write_text(
        "name: sleepy\ninputs:\n  properties:\n    tag: {type: string}\n"
        "jobs:\n  - name: j\n    steps:\n      - name: nap\n"
        "        placement: {labels: {pool: bench}, queueTimeout: 60}\n"
        "        task: {type: model_method, modelIdOrName: sleeper, methodName: execute,\n"
        f"               inputs: {{run: 'echo $$ > {pids}/${{{{ inputs.tag }}}}; exec sleep 120'}}}}\n")
    sleepy = (origin / "workflows" / "workflow-sleepy.yaml").read_text()
    (origin / "workflows" / "workflow-sleepy-local.yaml").write_text(  # the same step, not placed
        sleepy.replace("name: sleepy\n", "name: sleepy-local\n", 1)
        .replace("        placement: {labels: {pool: bench}, queueTimeout: 60}\n", ""))
    address = start_cluster(tmp, origin, setup, procs)

    local_s, _ = timed_run(origin, "local")
    placed_s, placed_run = timed_run(origin, "placed", "--scheduler", address, *LINK["dispatch"])
    by_worker: dict[str, int] = {}
    for job in placed_run["jobs"]:
        for s in job["steps"]:
            by_worker[s.get("worker", "?")] = by_worker.get(s.get("worker", "?"), 0) + 1

    latency = dispatch_latency(origin, address, runs)
    cancel = cancel_latency(origin, address, pids, cancels)
    results = {
        "steps": steps,
        "in-process": {"wall_s": round(local_s, 2), "steps_per_s": round(steps / local_s, 2),
                       "ms_per_step": round(local_s * 1000 / steps, 1)},
        "two Dask workers": {"wall_s": round(placed_s, 2), "steps_per_s": round(steps / placed_s, 2),
                             "ms_per_step": round(placed_s * 1000 / steps, 1), "by_worker": by_worker},
        "one step, median ms": latency,
        "cancel, median ms (process gone / command exited)": cancel,
    }
    print(f"{steps} forEach steps of `echo hi`, {LANES} models, SWAMP_MAX_CONCURRENT_STEPS default")
    print(f"{'':28}{'wall s':>10}{'steps/s':>10}{'ms/step':>10}")
    for label in ("in-process", "two Dask workers"):
        r = results[label]
        print(f"{label:28}{r['wall_s']:>10}{r['steps_per_s']:>10}{r['ms_per_step']:>10}")
    print(f"steps per worker: {by_worker}")
    print(f"one step on a worker, median of {runs}:")
    for label, ms in latency.items():
        print(f"  {label:40}{ms:>8} ms")
    print(f"cancel of a running `exec sleep 120` step, median of {cancels}: process gone / command exited")
    for label, (gone, exited) in cancel.items():
        print(f"  {label:52}{gone:>8} ms{exited:>8} ms")
    return results


def cancel_latency(origin: Path, address: str, pids: Path, n: int) -> dict:
    """Milliseconds from the cancel (the signal sent, or the cancel command
    started) until the step's process is gone, and until the cancelled
    command has exited."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SWAMP_")}
    ways = {
        "local: model method run + Ctrl-C": "local-int",
        "local: model method run + swamp model cancel": "model",
        "local: workflow run + workflow cancel": "local-workflow",
        "placed: workflow run --scheduler + Ctrl-C": "int",
        "placed: workflow run --scheduler + workflow cancel": "workflow",
    }
    out = {}
    for label, how in ways.items():
        gone, exited = [], []
        for i in range(n):
            tag = f"{how}-{i}"
            if how in ("model", "local-int"):
                argv = ["model", "method", "run", "sleeper", "execute", "--input",
                        f"run=echo $$ > {pids}/{tag}; exec sleep 120"]
            elif how == "local-workflow":
                argv = ["workflow", "run", "sleepy-local", "--input", f"tag={tag}"]
            else:
                argv = ["workflow", "run", "sleepy", "--input", f"tag={tag}", "--scheduler", address, *LINK["dispatch"]]
            proc = subprocess.Popen([sys.executable, "-m", "swamp", *argv, "--repo-dir", str(origin), "--json"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
            pid_file = pids / tag
            deadline = time.monotonic() + 60
            while not (pid_file.exists() and pid_file.read_text().strip()):
                assert time.monotonic() < deadline and proc.poll() is None, f"{label}: the step never started"
                time.sleep(0.02)
            pid = int(pid_file.read_text())
            t0 = time.perf_counter()
            if how in ("int", "local-int"):
                proc.send_signal(2)
            else:
                target = {"model": "sleeper", "local-workflow": "sleepy-local"}.get(how, "sleepy")
                subprocess.Popen([sys.executable, "-m", "swamp", "model" if how == "model" else "workflow",
                                  "cancel", target, "--repo-dir", str(origin)],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
            while _alive(pid):
                assert time.perf_counter() - t0 < 60, f"{label}: the step's process outlived the cancel"
                time.sleep(0.005)
            gone.append(time.perf_counter() - t0)
            proc.wait(timeout=60)
            exited.append(time.perf_counter() - t0)
        out[label] = (round(statistics.median(gone) * 1000, 1), round(statistics.median(exited) * 1000, 1))
    return out


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def dispatch_latency(origin: Path, address: str, runs: int) -> dict:
    from distributed import Client

    from swamp.workflows.placement import Placement, StepJob
    from swamp.models.definitions import find_definition
    from swamp.repo.context import Repo
    from swamp.workers import task
    from swamp.workers.dispatch import DaskDispatcher
    from swamp.workers.placement import step_resources

    repo = Repo.open(origin)
    definition = find_definition(repo, "h0")[1]
    from swamp.workers.links import LinkSettings, security_for

    link = LinkSettings(certs_dir=LINK["certs"], insecure=LINK["kind"] == "tcp")
    client = Client(address, set_as_default=False, security=security_for(address, link, default_name="dispatcher"))
    dispatcher = DaskDispatcher(address, client=client)
    placement = Placement(labels={"pool": "bench"})

    def job() -> StepJob:
        return StepJob(definition=definition, method="execute", inputs={}, command="bench: dispatch",
                       triggered_by="manual")

    bare, ours = [], []
    dispatcher.run(job(), placement)  # warm: the function reaches each worker once
    for _ in range(runs):
        t0 = time.perf_counter()
        client.submit(task.run, job(), resources=step_resources(placement.labels), retries=0,
                      pure=False).result()
        bare.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        dispatcher.run(job(), placement)
        ours.append(time.perf_counter() - t0)
    client.close()
    return {"bare client.submit(task.run, job)": round(statistics.median(bare) * 1000, 1),
            "swamp dispatcher.run(job, placement)": round(statistics.median(ours) * 1000, 1)}


if __name__ == "__main__":
    main()
