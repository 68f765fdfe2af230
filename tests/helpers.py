"""The one helpers module of the test suite: run the CLI (in a subprocess,
in this process, or on a pseudo-terminal), build repositories, write local
model types and workflows, check the datastore tree, and set up peers that
share a datastore."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import shutil
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    @property
    def data(self) -> Any:
        """stdout parsed as exactly one JSON document (json.loads refuses
        anything after the first document)."""
        assert self.stdout.strip(), f"nothing on stdout; stderr: {self.stderr}"
        return json.loads(self.stdout)

    @property
    def error(self) -> dict:
        """stderr parsed as one JSON error document {"error", "code", "hint"?}
        (and "errors"?: a document's schema errors, each {"path", "message"})."""
        doc = json.loads(self.stderr)
        assert isinstance(doc, dict) and set(doc) <= {"error", "code", "hint", "errors"}, doc
        assert isinstance(doc["error"], str) and isinstance(doc["code"], str), doc
        return doc

    def __repr__(self) -> str:
        return f"Result(code={self.code}, stdout={self.stdout[:2000]!r}, stderr={self.stderr[:2000]!r})"


def _env(extra: dict | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SWAMP_")}
    env["SWAMP_FSYNC"] = "0"
    env["SWAMP_LOCK_TIMEOUT_MS"] = os.environ.get("SWAMP_LOCK_TIMEOUT_MS", "20000")
    env["PYTHONPATH"] = str(REPO_ROOT / "src")
    env.update(extra or {})
    return env


def _argv(repo: Path | None, args, json_mode: bool) -> list[str]:
    argv = [str(a) for a in args]
    if json_mode:
        argv.append("--json")
    if repo is not None:
        argv += ["--repo-dir", str(repo)]
    return argv


def cli(repo: Path | None, *args, json: bool = True, input: str | None = None, env: dict | None = None,
        cwd: Path | None = None, timeout: float = 60) -> Result:
    """Run `python -m swamp ARGS` in a process of its own: forked from one
    that has the third-party libraries imported (tests/fork_client.py), or a
    new interpreter when the environment asks for one."""
    from tests import fork_client

    argv, full_env, where = _argv(repo, args, json), _env(env), cwd or repo or REPO_ROOT
    p = fork_client.run(argv, full_env, where, input, timeout, server_env=_env)
    if p is None:
        p = subprocess.run([PYTHON, "-m", "swamp", *argv], input=input, capture_output=True,
                           text=True, env=full_env, cwd=where, timeout=timeout)
    return Result(p.returncode, p.stdout, p.stderr)


def popen(repo: Path | None, *args, json: bool = True, env: dict | None = None,
          preexec_fn=None) -> subprocess.Popen:
    return subprocess.Popen([PYTHON, "-m", "swamp", *_argv(repo, args, json)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=_env(env), cwd=repo or REPO_ROOT,
                            preexec_fn=preexec_fn)


def invoke(repo: Path | None, *args, json: bool = True, input: str | None = None) -> Result:
    """Run the CLI in this process (same entry point and error handling as
    the console script, without the interpreter start-up)."""
    from click.testing import CliRunner

    from swamp.cli.errors import run_cli
    from swamp.cli.main import cli as root

    runner = CliRunner()
    with runner.isolation(input=input) as streams:
        try:
            code = run_cli(root, _argv(repo, args, json))
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
        out, err = streams[0].getvalue().decode(), streams[1].getvalue().decode()
    return Result(code, out, err)


def init_repo(path: Path) -> Path:
    from swamp.repo.init import init_repo as _init

    _init(path)
    return path


def write_type(repo: Path, filename: str, source: str) -> Path:
    path = repo / "extensions" / "models" / filename
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source).lstrip())
    return path


def snapshot(root: Path) -> dict[str, str]:
    """Every file and directory under root, with a hash of each file; not
    the lease bookkeeping under ``.locks/`` (a command takes its leases
    before it can refuse its inputs; leases are no state of the user's)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".locks"]
        rel = os.path.relpath(dirpath, root)
        out[rel + "/"] = "dir"
        for f in filenames:
            p = os.path.join(dirpath, f)
            with open(p, "rb") as fh:
                out[os.path.join(rel, f)] = hashlib.sha256(fh.read()).hexdigest()
    return out


def datastore_root(repo: Path) -> Path:
    return repo / ".swamp"


def visible_versions(repo: Path) -> list[tuple[str, dict, bytes]]:
    """Every complete (metadata present) data version in the tree:
    (version dir, metadata, raw bytes)."""
    from swamp.util import yamlio

    out = []
    data = datastore_root(repo) / "data"
    for meta_path in sorted(data.rglob("metadata.yaml")):
        meta = yamlio.load(meta_path)
        raw = (meta_path.parent / "raw").read_bytes()
        out.append((str(meta_path.parent.relative_to(data)), meta, raw))
    return out


def assert_no_torn_versions(repo: Path) -> int:
    """Every visible version's raw matches its metadata's size and sha256.
    Returns how many versions were checked."""
    versions = visible_versions(repo)
    for where, meta, raw in versions:
        assert len(raw) == meta["size"], f"{where}: raw is {len(raw)} bytes, metadata says {meta['size']}"
        assert hashlib.sha256(raw).hexdigest() == meta["sha256"], f"{where}: sha256 mismatch"
    return len(versions)


# A local type for most tests: global arguments of several types, a method
# with its own arguments, a resource, a streamed file, and a method that
# fails after writing.
PROBE_TYPE = '''
    from pydantic import BaseModel
    from swamp import Context, ModelType


    class Settings(BaseModel):
        count: int = 1
        label: str = "x"
        ratio: float = 0.5
        enabled: bool = False


    class Extra(BaseModel):
        note: str = ""
        times: int = 1


    class Out(BaseModel):
        count: int
        label: str
        note: str
        times: int


    probe = ModelType("acme/probe", version="2026.01.01.1", global_arguments=Settings,
                      description="A probe for tests")
    probe.resource("out", schema=Out, lifetime="infinite", garbage_collection=3)
    probe.resource("aged", lifetime="infinite", garbage_collection="1h")
    probe.resource("all", lifetime="infinite")
    probe.resource("temp", lifetime="1h")
    probe.file("report", content_type="text/plain")


    @probe.method(description="Write out", arguments=Extra)
    def write(args, ctx: Context) -> None:
        for i in range(args.times):
            ctx.write_resource("out", "out", Out(count=args.count, label=args.label, note=args.note, times=i))
        with ctx.file_writer("report", "report") as w:
            w.write_line(f"count={args.count} label={args.label}")
        ctx.log(f"wrote {args.times}")


    @probe.method(description="Write, then fail")
    def explode(args, ctx: Context) -> None:
        ctx.write_resource("all", "partial", {"before": "failure"})
        ctx.log("about to fail")
        raise RuntimeError("boom")


    @probe.method(description="Write one version of aged, all and temp")
    def stamp(args, ctx: Context) -> None:
        ctx.write_resource("aged", "aged", {"n": args.count})
        ctx.write_resource("all", "all", {"n": args.count})
        ctx.write_resource("temp", "temp", {"n": args.count})


    class Peek(BaseModel):
        other: str = "p"
        version: int | None = None


    @probe.method(description="Copy another model's out", arguments=Peek)
    def peek(args, ctx: Context) -> None:
        ctx.write_resource("all", "peeked", {"seen": ctx.read_model_data(args.other, "out", args.version)})


    @probe.method(description="Delete every version of out", kind="delete")
    def forget(args, ctx: Context) -> None:
        ctx.delete_resource("out")


    @probe.method(description="Read the newest out")
    def get(args, ctx: Context) -> None:
        ctx.write_resource("all", "seen", {"last": ctx.read_resource("out")})
'''


def on_a_terminal(argv: list[str], answer: bytes = b"", timeout: float = 60, cwd: Path | None = None,
                  env: dict | None = None, colour: bool = False, prompt: bytes = b"[y/N]") -> str:
    """Run `swamp ARGV` with a pseudo-terminal as its stdin, stdout and
    stderr, answer ``answer`` to the first ``prompt`` (a [y/N] question by
    default), and return all it printed (without its colour codes unless
    ``colour``)."""
    import pty
    import select
    import time

    pid, fd = pty.fork()
    if pid == 0:
        if cwd is not None:
            os.chdir(cwd)
        os.execve(sys.executable, [sys.executable, "-m", "swamp", *argv], _env(env))
    out, answered, deadline = b"", False, time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if not ready:
                continue
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
            if not answered and prompt in out:
                os.write(fd, answer)
                answered = True
    finally:
        os.waitpid(pid, 0)
        os.close(fd)
    text = out.decode(errors="replace")
    if not colour:
        import re

        text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    return text


def assert_secrets_nowhere(repo: Path, secrets: tuple[str, ...], *results: "Result") -> None:
    """No secret in the commands' printed output, nor in any file under
    ``repo`` (a vault's ciphertext never holds the value in clear)."""
    for r in results:
        for secret in secrets:
            assert secret not in r.stdout and secret not in r.stderr, r
    for d, _dirs, files in os.walk(repo):
        for f in files:
            data = Path(d, f).read_bytes()
            for secret in secrets:
                assert secret.encode() not in data, os.path.join(d, f)


# ---------------------------------------------------------------- peers
# Several repositories (peers) sharing a datastore, driven through `swamp`.

def ok(repo: Path, *args, **kw):
    """Run a command that must succeed; its one JSON document."""
    r = cli(repo, *args, **kw)
    assert r.code == 0, r
    return r.data


def peer_from_git(origin: Path, path: Path) -> Path:
    """A second checkout: the same definitions, none of the runtime state."""
    init_repo(path)
    shutil.copytree(origin / "models", path / "models", dirs_exist_ok=True)
    return path


def run_hello(repo: Path, text: str) -> dict:
    """Run the `hello` command/shell model, echoing ``text``."""
    return ok(repo, "model", "method", "run", "hello", "execute", "--input", f"run=echo {text}")


def s3_setup_args(server, prefix: str | None = None, gateway: int = 0) -> list[str]:
    """`datastore setup` arguments for a SeaweedFS server (a fresh prefix by default)."""
    return ["s3", "--bucket", server.bucket, "--prefix", prefix or server.new_prefix(),
            "--endpoint-url", server.endpoints[gateway], "--region", "us-east-1"]


def repo_with_hello_runs(path: Path, runs: int) -> Path:
    """A new repository with a `hello` command/shell model run ``runs``
    times (stdout a0, a1, ...)."""
    repo = init_repo(path)
    ok(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello")
    for i in range(runs):
        run_hello(repo, f"a{i}")
    return repo


# ------------------------------------------------------------- workflows
# Repositories with local work types and workflows, run in this process.

WORK_TYPE = '''
    import time

    from pydantic import BaseModel
    from swamp import Context, ModelType


    class Args(BaseModel):
        sleep: float = 0
        value: str = ""
        fail: bool = False


    work_type = ModelType("test/work", version="2026.01.01.1", global_arguments=Args,
                          description="Records when it ran")
    work_type.resource("span", lifetime="infinite")


    @work_type.method(description="Sleep, then record the span and the value")
    def work(args, ctx: Context) -> None:
        start = time.time()
        time.sleep(args.sleep)
        ctx.write_resource("span", "span", {"start": start, "end": time.time(), "value": args.value})
        if args.fail:
            raise RuntimeError(f"asked to fail ({args.value})")


    @work_type.method(description="Nothing at all")
    def noop(args, ctx: Context) -> None:
        pass
'''


def make_repo(path: Path, models: int = 6) -> Path:
    repo = init_repo(path)
    write_type(repo, "work.py", WORK_TYPE)
    for i in range(models):
        write_model(repo, f"w{i}")
    return repo


def write_model(repo: Path, name: str, body: str = "") -> None:
    p = repo / "models" / "test" / "work" / f"{name}.yaml"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(f"type: test/work\nname: {name}\n" + textwrap.dedent(body))


def write_shell(repo: Path, name: str, body: str) -> None:
    p = repo / "models" / "command" / "shell" / f"{name}.yaml"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(textwrap.dedent(body).lstrip())


def write_deploy_with_secret(repo: Path, secret: str, *, swamp=None) -> None:
    """The suite's model that names a vault in its own text: a vault `prod`
    holding `api.token` = ``secret``, and `deploy`, a command/shell model
    whose `TOKEN` is that secret. ``swamp`` runs the vault commands (`cli`,
    a subprocess, by default; `invoke` in this process)."""
    swamp = swamp or cli
    assert swamp(repo, "vault", "create", "local_encryption", "prod").code == 0
    assert swamp(repo, "vault", "put", "prod", "api.token", input=secret).code == 0
    write_shell(repo, "deploy", """
        type: command/shell
        name: deploy
        globalArguments:
          run: 'echo "deployed with $TOKEN"'
          env: {TOKEN: "${{ vault.get('prod', 'api.token') }}"}
    """)


def write_workflow(repo: Path, name: str, body: str) -> Path:
    p = repo / "workflows" / f"workflow-{name}.yaml"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(f"name: {name}\n" + textwrap.dedent(body).lstrip())
    return p


def run(repo: Path, name: str, inputs: dict | None = None, **kw):
    """Run a workflow in this process; returns the WorkflowRun."""
    from swamp.app import workflows
    from swamp.repo.context import Repo

    return workflows.run(Repo.open(repo), name, inputs or {}, **kw).run


def resume(repo: Path, name: str, run_id: str | None = None, inputs: dict | None = None):
    from swamp.app import workflows
    from swamp.repo.context import Repo

    return workflows.resume(Repo.open(repo), name, run_id, inputs or {}).run


def decide(repo: Path, name: str, step: str, decision: str = "approved", reason: str | None = None):
    from swamp.app import workflows
    from swamp.repo.context import Repo

    return workflows.decide(Repo.open(repo), name, step, decision, None, reason)


def steps(run) -> dict:
    """{"job/step": StepRun}, in record order."""
    return {f"{j.name}/{s.name}": s for j, s in run.steps()}


def statuses(run) -> dict:
    return {k: s.status for k, s in steps(run).items()}


def spans(repo: Path) -> list[tuple[float, float, str, str, int]]:
    """Every recorded span: (start, end, value, model id, version)."""
    from tests.helpers import visible_versions
    import json

    out = []
    for where, meta, raw in visible_versions(repo):
        if meta["name"] == "span":
            d = json.loads(raw)
            out.append((d["start"], d["end"], d["value"], meta["owner"]["definitionName"], meta["version"]))
    return sorted(out)


def max_overlap(intervals) -> int:
    events = sorted([(s, 1) for s, e, *_ in intervals] + [(e, -1) for s, e, *_ in intervals],
                    key=lambda x: (x[0], x[1]))
    now = best = 0
    for _, d in events:
        now += d
        best = max(best, now)
    return best


def run_record(repo: Path, run_id: str) -> dict:
    """A workflow run's record, as `workflow history get` prints it."""
    got = cli(repo, "workflow", "history", "get", run_id)
    assert got.code == 0, got
    return got.data


def wait_for_run_status(repo: Path, run_id: str, wanted: tuple[str, ...], limit_s: float = 60) -> dict:
    """The run's record once its status is one of ``wanted`` (a run going on
    in a server's background thread)."""
    import time

    end = time.monotonic() + limit_s
    while True:
        doc = run_record(repo, run_id)
        if doc["status"] in wanted:
            return doc
        assert time.monotonic() < end, doc
        time.sleep(0.3)
