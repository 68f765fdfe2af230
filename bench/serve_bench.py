"""swamp serve's reads beside a bare Starlette handler, then serve beside the
same use cases in-process, in the same run:

- reads (issue 28): `GET /api/v1/data/hello/result` with a minted token and
  a grant, as users run it, beside a bare Starlette handler under uvicorn
  (bare_read_app.py) that reads the same version's metadata.yaml and answers
  it as JSON; 8 and 64 keep-alive clients (http_load.py, a process of its
  own), rounds interleaved; on the filesystem datastore and on SeaweedFS
  (where the bare handler reads the object with one GET). With
  ``--baseline OTHER/src`` (repeatable) another checkout's serve runs in the same rounds;
  ``--replicas N`` adds N servers of the checkout sharing one port
  (``--reuse-port``), and their resident memory;
- data get (latest version, with content): latency (median, p95) one request
  at a time on a kept-alive connection, and requests/s with 8 clients;
- a no-op method run (a local type whose method does nothing): the same;
- the event stream: time to the first event (`accepted`) beside the time to
  the result, for a method that sleeps 0.5 s.

Usage: .venv/bin/python bench/serve_bench.py [--requests 200] [--quick] [--reads-only]
       [--baseline OTHER/src] [--seconds 4] [--rounds 2] [--no-s3] [--replicas 2]
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


def http_call(port: int, method: str, path: str, body: dict | None = None, token: str | None = None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"

    def call():
        conn.request(method, path, body=data, headers=headers)
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


# ------------------------------------------------------------------ reads
READ_PATH = "/api/v1/data/hello/result"
GRANT = """grants:
  - subjects: ["token:bench"]
    actions: [read]
    resources: ["data:*"]
"""


def _env(src: Path) -> dict:
    return {**os.environ, "PYTHONPATH": str(src)}


def _wait_up(port: int, proc: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 60
    while True:
        if proc.poll() is not None:
            raise SystemExit(f"server on {port} exited: {log.read_text()[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise SystemExit(f"server on {port} did not start: {log.read_text()[-2000:]}")
            time.sleep(0.1)


def _start(args: list[str], env: dict, log: Path, port: int) -> subprocess.Popen:
    proc = subprocess.Popen(args, stdout=open(log, "wb"), stderr=subprocess.STDOUT, env=env)
    _wait_up(port, proc, log)
    return proc


def _serve(repo: Path, src: Path, tmp: Path, label: str) -> tuple[subprocess.Popen, tuple[int, int]]:
    port = free_port()
    proc = _start([sys.executable, "-m", "swamp", "serve", "--port", str(port), "--repo-dir", str(repo)],
                  _env(src), tmp / f"serve-{label}.log", port)
    return proc, (port, proc.pid)


def _replicas(repo: Path, n: int, tmp: Path, label: str) -> tuple[list[subprocess.Popen], tuple]:
    """``n`` servers of one checkout on one port (--reuse-port)."""
    port = free_port()
    procs = [_start([sys.executable, "-m", "swamp", "serve", "--port", str(port), "--reuse-port", "--repo-dir",
                     str(repo)], _env(ROOT / "src"), tmp / f"serve-{label}-{i}.log", port) for i in range(n)]
    return procs, (port, *(p.pid for p in procs))


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def _load(target: tuple, token: str, clients: int, seconds: float) -> dict:
    """http_load.py against (port, server pid, ...), plus the servers' CPU time per request."""
    port, *pids = target
    cpu0 = sum(map(_cpu_s, pids))
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "http_load.py"), "--port", str(port), "--path",
                          READ_PATH, "--token", token, "--clients", str(clients), "--seconds", str(seconds)],
                         capture_output=True, text=True, check=True)
    doc = json.loads(out.stdout)
    doc["cpuMsPerRequest"] = round((sum(map(_cpu_s, pids)) - cpu0) * 1000 / max(1, doc["requests"]), 3)
    if set(doc["statuses"]) != {"200"}:
        raise SystemExit(f"port {port}: answers other than 200: {doc['statuses']}")
    return doc


def _read_repo(root: Path, shared=None) -> tuple[str, bytes]:
    """A repository with hello/result version 1, a token that may read it:
    (the token, the version's metadata.yaml)."""
    from swamp.repo.init import init_repo

    init_repo(root)
    swamp(root, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hi")
    if shared is not None:
        server, prefix = shared
        swamp(root, "datastore", "setup", "s3", "--bucket", server.bucket, "--prefix", prefix,
              "--endpoint-url", server.endpoint_url, "--region", "us-east-1")
    swamp(root, "model", "method", "run", "hello", "execute")
    (root / "grants").mkdir(exist_ok=True)
    (root / "grants" / "bench.yaml").write_text(GRANT)
    out = subprocess.run([sys.executable, "-m", "swamp", "access", "token", "mint", "bench", "--repo-dir",
                          str(root), "--json"], check=True, capture_output=True, text=True, env=_env(ROOT / "src"))
    token = json.loads(out.stdout)["token"]
    metas = [p for p in root.rglob("metadata.yaml") if p.parent.name == "1" and p.parent.parent.name == "result"]
    if len(metas) != 1:
        raise SystemExit(f"expected one metadata.yaml of hello/result, found {metas}")
    return token, metas[0].read_bytes()


def _rounds(targets: dict, tokens: dict, a) -> dict:
    """Each target at 8 then 64 clients, round after round, interleaved."""
    got: dict = {label: {c: [] for c in (8, 64)} for label in targets}
    for _ in range(a.rounds):
        for clients in (8, 64):
            for label, port in targets.items():
                got[label][clients].append(_load(port, tokens[label], clients, a.seconds))
    return got


def _best(samples: list[dict]) -> dict:
    # The round with the most requests/s: on a shared machine the others lost time to other work.
    return max(samples, key=lambda d: d["perS"])


def _print_reads(title: str, got: dict) -> None:
    bare = got["bare"]
    print(f"\n{title}: reads of {READ_PATH} (best of {len(bare[8])} interleaved rounds)")
    print(f"{'':18}{'clients':>8}{'req/s':>10}{'p50 ms':>9}{'p99 ms':>9}{'x bare':>8}{'CPU ms/req':>12}")
    for clients in (8, 64):
        base = _best(bare[clients])["perS"]
        for label in got:
            b = _best(got[label][clients])
            cpu = min(d["cpuMsPerRequest"] for d in got[label][clients])
            print(f"{label:18}{clients:>8}{b['perS']:>10.0f}{b['p50Ms']:>9.2f}{b['p99Ms']:>9.2f}"
                  f"{b['perS'] / base:>8.2f}{cpu:>12.3f}")


def reads(a, tmp: Path) -> dict:
    results: dict = {"loadAverage": os.getloadavg()}
    srcs = {"swamp": ROOT / "src"}
    for other in a.baseline:  # one: "before"; more: each named by its checkout's folder
        name = "before" if len(a.baseline) == 1 else Path(other).resolve().parent.name
        srcs[f"swamp ({name})"] = Path(other).resolve()
    procs: list[subprocess.Popen] = []
    try:
        # the filesystem datastore
        root = tmp / "fs"
        token, _ = _read_repo(root)
        targets, tokens = {}, {}
        for label, src in srcs.items():
            proc, port = _serve(root, src, tmp, label.split()[-1].strip("()"))
            procs.append(proc)
            targets[label], tokens[label] = port, token
        if a.replicas > 1:
            more, target = _replicas(root, a.replicas, tmp, "replicas")
            procs += more
            label = f"swamp x{a.replicas} (one port)"
            targets[label], tokens[label] = target, token
        port = free_port()
        procs.append(_start([sys.executable, str(ROOT / "bench" / "bare_read_app.py"), str(port)],
                            {**_env(ROOT / "src"), "BARE_FILE": str(_meta_file(root))}, tmp / "bare.log", port))
        targets["bare"], tokens["bare"] = (port, procs[-1].pid), ""
        results["filesystem"] = _rounds(targets, tokens, a)
        results["rssMiB"] = {label: [_rss_mib(pid) for pid in target[1:]] for label, target in targets.items()}
        _print_reads("filesystem datastore", results["filesystem"])
        print("resident memory after the rounds (MiB, per process): "
              + "; ".join(f"{k}: {', '.join(map(str, v))}" for k, v in results["rssMiB"].items()))
    finally:
        for p in procs:
            p.terminate()
            p.wait(30)
    if a.no_s3:
        return results
    sys.path.insert(0, str(ROOT))
    from tests.fixtures import servers

    server = servers.start_seaweed_mini(tmp / "weed")
    procs = []
    try:
        root = tmp / "s3"
        token, meta = _read_repo(root, (server, server.new_prefix()))
        bare_prefix = server.new_prefix()
        from swamp.datastore.objectstore.factory import open_store

        open_store(server.config(bare_prefix)).put("metadata.yaml", meta)
        targets, tokens = {}, {}
        for label, src in srcs.items():
            proc, port = _serve(root, src, tmp, "s3-" + label.split()[-1].strip("()"))
            procs.append(proc)
            targets[label], tokens[label] = port, token
        if a.replicas > 1:
            more, target = _replicas(root, a.replicas, tmp, "s3-replicas")
            procs += more
            targets[f"swamp x{a.replicas} (one port)"], tokens[f"swamp x{a.replicas} (one port)"] = target, token
        port = free_port()
        procs.append(_start([sys.executable, str(ROOT / "bench" / "bare_read_app.py"), str(port)],
                            {**_env(ROOT / "src"), "BARE_STORE": json.dumps(server.config(bare_prefix)),
                             "BARE_KEY": "metadata.yaml"}, tmp / "bare-s3.log", port))
        targets["bare"], tokens["bare"] = (port, procs[-1].pid), ""
        results["s3"] = _rounds(targets, tokens, a)
        _print_reads("SeaweedFS datastore", results["s3"])
    finally:
        for p in procs:
            p.terminate()
            p.wait(30)
        servers.stop_processes(server.processes)
    return results


# ------------------------------------------------------------ run submissions
RUN_PATH = "/api/v1/models/hello/methods/execute/run"
RUN_GRANT = """grants:
  - subjects: ["token:bench"]
    actions: [read, run]
    resources: ["data:*", "model:*"]
"""


def submissions(a, tmp: Path) -> dict:
    """Run submissions over HTTP (a command/shell `true`, waited for), as a
    user with a token and a grant: latency one at a time and runs/s with 8
    clients; then reads with 8 clients alone, and while 2 clients keep runs
    of the same model in flight (each run a new version of the name read)."""
    root = tmp / "runs"
    token, _ = _read_repo(root)
    (root / "grants" / "bench.yaml").write_text(RUN_GRANT)
    proc, target = _serve(root, ROOT / "src", tmp, "runs")
    out: dict = {}
    try:
        port = target[0]
        submit = lambda: http_call(port, "POST", RUN_PATH, {}, token)  # noqa: E731
        submit()()  # warm up: the server's first run imports the runner
        n = 12 if a.quick else 60
        out["runLatency"] = stats(timed(submit(), n))
        out["runsPerS"] = round(throughput(submit, n * 2), 1)
        out["readsAlone"] = _load(target, token, 8, a.seconds)
        stop = threading.Event()
        ran = [0]

        def keep_running() -> None:
            call = submit()
            while not stop.is_set():
                call()
                ran[0] += 1

        runners = [threading.Thread(target=keep_running, daemon=True) for _ in range(2)]
        for t in runners:
            t.start()
        try:
            out["readsWhileRuns"] = _load(target, token, 8, a.seconds)
        finally:
            stop.set()
            for t in runners:
                t.join(120)
        out["runsDuringReads"] = ran[0]
        out["rssMiB"] = _rss_mib(target[1])
    finally:
        proc.terminate()
        proc.wait(30)
    alone, busy = out["readsAlone"], out["readsWhileRuns"]
    print(f"\nrun submissions (POST {RUN_PATH}, command/shell `true`, token and grant):")
    print(f"  one at a time: median {out['runLatency']['medianMs']:.1f} ms, p95 {out['runLatency']['p95Ms']:.1f} ms;"
          f" 8 clients: {out['runsPerS']} runs/s")
    print(f"  reads, 8 clients, alone: {alone['perS']:.0f}/s, p50 {alone['p50Ms']:.1f} ms, p99 {alone['p99Ms']:.1f} ms")
    print(f"  reads, 8 clients, with 2 clients running the model meanwhile ({out['runsDuringReads']} runs): "
          f"{busy['perS']:.0f}/s, p50 {busy['p50Ms']:.1f} ms, p99 {busy['p99Ms']:.1f} ms")
    return out


def _meta_file(root: Path) -> Path:
    return next(p for p in root.rglob("metadata.yaml") if p.parent.name == "1" and p.parent.parent.name == "result")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reads-only", action="store_true", help="only the reads beside the bare handler")
    ap.add_argument("--baseline", action="append", default=[],
                    help="another checkout's src/: its serve runs in the same read rounds (repeatable)")
    ap.add_argument("--seconds", type=float, default=4.0, help="per read measurement")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--no-s3", action="store_true", help="skip the reads on SeaweedFS")
    ap.add_argument("--no-submissions", action="store_true", help="skip the run submissions")
    ap.add_argument("--submissions-only", action="store_true", help="only the run submissions and reads meanwhile")
    ap.add_argument("--replicas", type=int, default=2,
                    help="also N servers of the checkout on one port (--reuse-port; 1: not)")
    a = ap.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp:
        read_results = {} if a.submissions_only else reads(a, Path(tmp))
        if not a.no_submissions:
            read_results["submissions"] = submissions(a, Path(tmp))
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    out = ROOT / "bench" / "results" / f"serve-reads-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(read_results, indent=2))
    print(f"wrote {out.relative_to(ROOT)}")
    if a.reads_only or a.submissions_only:
        return
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
        proc = subprocess.Popen([sys.executable, "-m", "swamp", "serve", "--auth-mode", "none", "--port", str(port), "--repo-dir",
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
