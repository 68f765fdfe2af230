"""A Dask scheduler and swamp workers as separate processes on 127.0.0.1,
each worker a peer of one shared datastore (its own checkout and cache)."""

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
    procs: list[subprocess.Popen] = field(default_factory=list)
    workers: dict[str, Worker] = field(default_factory=dict)

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
        args = [sys.executable, "-m", "swamp", "worker", "start", "--scheduler", self.scheduler, "--name", name,
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
        r = cli(self.origin, "worker", "list", "--scheduler", self.scheduler)
        assert r.code == 0, r
        return r.data

    def run(self, workflow: str, *args) -> dict:
        r = cli(self.origin, "workflow", "run", workflow, "--scheduler", self.scheduler, *args, timeout=120)
        assert r.stdout.strip(), r
        return r.data

    def stop(self) -> None:
        stop_processes(self.procs)


def start_scheduler(root: Path) -> tuple[str, list[subprocess.Popen], Path]:
    port = free_port()
    log = root / "scheduler.log"
    proc = _spawn([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                   "--port", str(port), "--no-dashboard"], log, env=_env())

    def ready() -> None:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()

    wait_until("the Dask scheduler", ready, [proc], log)
    return f"tcp://127.0.0.1:{port}", [proc], log


def dump(data) -> str:
    return json.dumps(data, sort_keys=True)


__all__ = ["Cluster", "Worker", "start_scheduler", "REPO_ROOT"]
