"""A Dask scheduler and swamp workers as separate processes on 127.0.0.1,
each worker a peer of one shared datastore (its own checkout and cache).
The secure setup of docs/workers.md: a team CA in a scratch folder, a
certificate for the scheduler, the dispatcher and each worker, tls://."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tests.fixtures.servers import _spawn, free_port, stop_processes, wait_until
from tests.helpers import REPO_ROOT, _env, cli, init_repo
from tests.helpers import ok

from swamp.workers import team_certs


@dataclass
class Worker:
    name: str
    repo: Path
    log: Path
    proc: subprocess.Popen


@dataclass
class Cluster:
    scheduler: str
    origin: Path
    setup: list[str]
    root: Path
    log: Path
    certs: Path
    procs: list[subprocess.Popen] = field(default_factory=list)
    workers: dict[str, Worker] = field(default_factory=dict)

    @property
    def link(self) -> list[str]:
        """The options a dispatching command reaches the scheduler with."""
        return ["--scheduler", self.scheduler, "--team-certs", str(self.certs)]

    def peer(self, name: str) -> Path:
        """A checkout of the origin (definitions, workflows, vault configs, local types:
        what git carries, no secrets) on the shared datastore."""
        path = init_repo(self.root / name)
        for sub in ("models", "workflows", "vaults", "extensions"):
            if (self.origin / sub).exists():
                shutil.copytree(self.origin / sub, path / sub, dirs_exist_ok=True)
        ok(path, "datastore", "setup", *self.setup)
        return path

    def start_worker(self, name: str, *labels: str, concurrency: int = 2) -> Worker:
        repo = self.peer(f"worker-{name}")
        log = self.root / f"worker-{name}.log"
        if not team_certs.cert_path(self.certs, name).exists():
            team_certs.issue(self.certs, name)  # enrolled: the worker presents it as its --name
        args = [sys.executable, "-m", "swamp", "worker", "start", *self.link, "--name", name,
                "--concurrency", str(concurrency), "--repo-dir", str(repo)]
        for label in labels:
            args += ["--label", label]
        proc = _spawn(args, log, env=_env())
        self.procs.append(proc)
        w = Worker(name, repo, log, proc)
        self.workers[name] = w
        wait_until(f"worker {name}", lambda: self._listed(name), [proc], log)
        return w

    def _listed(self, name: str) -> None:
        assert name in {w["name"] for w in self.list()}

    def list(self) -> list[dict]:
        r = cli(self.origin, "worker", "list", *self.link)
        assert r.code == 0, r
        return r.data

    def run(self, workflow: str, *args) -> dict:
        r = cli(self.origin, "workflow", "run", workflow, *self.link, *args, timeout=120)
        assert r.stdout.strip(), r
        return r.data

    def stop(self) -> None:
        stop_processes(self.procs)


def team(certs: Path) -> Path:
    """A team CA in ``certs`` and certificates for the scheduler and the dispatcher."""
    team_certs.create_ca(certs)
    for name in ("scheduler", "dispatcher"):
        team_certs.issue(certs, name)
    return certs


def start_scheduler(root: Path, certs: Path) -> tuple[str, list[subprocess.Popen], Path]:
    """``swamp worker scheduler`` on tls://127.0.0.1 with the team's certificate."""
    port = free_port()
    log = root / "scheduler.log"
    proc = _spawn([sys.executable, "-m", "swamp", "worker", "scheduler", "--port", str(port),
                   "--team-certs", str(certs)], log, env=_env())

    def ready() -> None:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()

    wait_until("the Dask scheduler", ready, [proc], log)
    return f"tls://127.0.0.1:{port}", [proc], log


def dump(data) -> str:
    return json.dumps(data, sort_keys=True)


__all__ = ["Cluster", "Worker", "start_scheduler", "team", "REPO_ROOT"]
