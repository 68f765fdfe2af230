"""swamp serve beside the same use cases in-process, in the same run:

- data get (latest version, with content): latency (median, p95) one request
  at a time on a kept-alive connection, and requests/s with 8 clients;
- a no-op method run (a local type whose method does nothing): the same;
- the event stream: time to the first event (`accepted`) beside the time to
  the result, for a method that sleeps 0.5 s.

Usage: .venv/bin/python bench/serve_bench.py [--requests 200] [--quick]
Prints a table and writes bench/results/serve-<time>.json."""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

NOOP = '''
from swamp import Context, ModelType

noop = ModelType("bench/noop", version="2026.01.01.1", description="does nothing")
noop.resource("state", lifetime="infinite")


@noop.method(description="nothing")
def nothing(args, ctx: Context) -> None:
    pass


@noop.method(description="write a small resource")
def write(args, ctx: Context) -> None:
    ctx.write_resource("state", "state", {"n": 1})


@noop.method(description="sleep half a second")
def nap(args, ctx: Context) -> None:
    import time

    ctx.log("napping")
    time.sleep(0.5)
'''


def swamp(repo: Path, *args: str) -> None:
    subprocess.run([sys.executable, "-m", "swamp", *args, "--repo-dir", str(repo), "--json"], check=True,
                   capture_output=True, env={**os.environ, "PYTHONPATH": str(ROOT / "src")})


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def stats(samples: list[float]) -> dict:
    xs = sorted(samples)
    return {"medianMs": round(statistics.median(xs) * 1000, 3),
            "p95Ms": round(xs[int(len(xs) * 0.95) - 1] * 1000, 3), "n": len(xs)}


def timed(fn, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def throughput(make_call, n: int, clients: int = 8) -> float:
    per = n // clients
    barrier = threading.Barrier(clients + 1)

    def worker():
        call = make_call()
        barrier.wait()
        for _ in range(per):
            call()

    threads = [threading.Thread(target=worker) for _ in range(clients)]
    for t in threads:
        t.start()
    barrier.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    return per * clients / (time.perf_counter() - t0)


def http_call(port: int, method: str, path: str, body: dict | None = None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    data = json.dumps(body).encode() if body is not None else None

    def call():
        conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        payload = r.read()
        if r.status != 200:
            raise SystemExit(f"{method} {path}: HTTP {r.status} {payload[:200]!r}")

    return call


def first_event(port: int) -> tuple[float, float]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    t0 = time.perf_counter()
    conn.request("POST", "/api/v1/models/noop/methods/nap/run", body=b"{}",
                 headers={"Accept": "text/event-stream", "Content-Type": "application/json"})
    r = conn.getresponse()
    first = None
    while True:
        line = r.fp.readline()
        if not line:
            break
        if line.startswith(b"event: ") and first is None:
            first = time.perf_counter() - t0
        if line.startswith(b"event: result"):
            r.fp.readline()
            break
    total = time.perf_counter() - t0
    conn.close()
    return first, total


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    n = 40 if a.quick else a.requests
    naps = 3 if a.quick else 8

    from swamp.app import data, methods
    from swamp.models.runner import Runner
    from swamp.repo.context import Repo
    from swamp.repo.init import init_repo

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        init_repo(root)
        (root / "extensions" / "models").mkdir(parents=True, exist_ok=True)
        (root / "extensions" / "models" / "noop.py").write_text(textwrap.dedent(NOOP).lstrip())
        swamp(root, "model", "create", "bench/noop", "noop")
        swamp(root, "model", "method", "run", "noop", "write")
        repo = Repo.open(root)
        runner = Runner(repo)

        results: dict = {"python": sys.version.split()[0], "platform": platform.platform(), "requests": n,
                         "fsync": os.environ.get("SWAMP_FSYNC", "1") != "0"}
        # in-process: the baseline
        results["inProcess"] = {
            "dataGet": stats(timed(lambda: data.get(repo, "noop", "state", None), n)),
            "methodRun": stats(timed(lambda: methods.run_method(repo, "noop", "nothing", runner=runner), n)),
        }

        port = free_port()
        log = open(Path(tmp) / "serve.log", "wb")
        proc = subprocess.Popen([sys.executable, "-m", "swamp", "serve", "--port", str(port), "--repo-dir",
                                 str(root)], stdout=log, stderr=subprocess.STDOUT,
                                env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    http_call(port, "GET", "/health")()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise SystemExit("swamp serve did not start")
                    time.sleep(0.1)
            get = ("GET", "/api/v1/data/noop/state")
            run = ("POST", "/api/v1/models/noop/methods/nothing/run", {})
            http_call(port, *get)()  # warm up: first imports in the server
            http_call(port, *run)()
            results["api"] = {
                "dataGet": stats(timed(http_call(port, *get), n)),
                "methodRun": stats(timed(http_call(port, *run), n)),
                "dataGetPerS": round(throughput(lambda: http_call(port, *get), n), 1),
                "methodRunPerS": round(throughput(lambda: http_call(port, *run), n), 1),
            }
            results["inProcess"]["dataGetPerS"] = round(throughput(
                lambda: (lambda: data.get(repo, "noop", "state", None)), n), 1)
            results["inProcess"]["methodRunPerS"] = round(throughput(
                lambda: (lambda: methods.run_method(repo, "noop", "nothing", runner=runner)), n), 1)
            firsts, totals = zip(*(first_event(port) for _ in range(naps)))
            results["stream"] = {"firstEvent": stats(list(firsts)), "result": stats(list(totals))}
        finally:
            proc.terminate()
            proc.wait(30)

    ip, api = results["inProcess"], results["api"]
    print(f"{'':28}{'in-process':>14}{'through serve':>16}")
    for key, label in (("dataGet", "data get, median ms"), ("methodRun", "no-op method run, median ms")):
        print(f"{label:28}{ip[key]['medianMs']:>14.2f}{api[key]['medianMs']:>16.2f}")
        print(f"{'  p95 ms':28}{ip[key]['p95Ms']:>14.2f}{api[key]['p95Ms']:>16.2f}")
        print(f"{'  per second, 8 clients':28}{ip[key + 'PerS']:>14.1f}{api[key + 'PerS']:>16.1f}")
    s = results["stream"]
    print(f"stream of a 0.5 s method: first event {s['firstEvent']['medianMs']:.1f} ms, "
          f"result {s['result']['medianMs']:.1f} ms (median of {naps})")
    out = ROOT / "bench" / "results" / f"serve-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2))
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
