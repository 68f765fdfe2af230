"""The runner of the documentation's examples: one scratch directory (with a
fresh swamp repository) per page, whose blocks run in order; a few pages at
a time, each in a thread of its own. See tests/docs/examples.py for the
convention."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests import fork_client
from tests.docs.examples import Block, blocks, expect_exit_codes, move_tmp, s3_substitute, transcript_script

BLOCK_TIMEOUT_S = 60
VENV_BIN = Path(sys.executable).parent


@dataclass
class PageRun:
    """A page's scratch directory, where its blocks run in order."""

    page: str
    root: Path
    buckets: dict[str, str] = field(default_factory=dict)
    s3: object = None
    groups: list[int] = field(default_factory=list)  # process groups of the blocks run
    forks: fork_client.Server | None = None  # where the page's `swamp` forks its commands from

    def stop(self) -> None:
        """Stop every process the page's blocks started (by process group)."""
        for pgid in self.groups:
            try:
                os.killpg(pgid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        self.groups.clear()

    @property
    def state(self) -> Path:
        return self.root / "state"

    def start(self) -> None:
        for d in ("bin", "home", "tmp", "state", "work"):
            (self.root / d).mkdir(parents=True, exist_ok=True)
        # `pip install 'swamp[extra]'` in an example installs nothing: the
        # test environment has every extra (and must not change under a test).
        pip = self.root / "bin" / "pip"
        pip.write_text('#!/bin/sh\necho "doc example: pip $* not run (the test environment has every extra)"\n')
        pip.chmod(0o755)
        swamp = VENV_BIN / "swamp"
        if self.forks is not None:
            swamp = self.root / "bin" / "swamp"
            swamp.write_text(fork_shim(self.forks))
            swamp.chmod(0o755)
        (self.state / "cwd").write_text(str(self.root / "work" / "repo"))
        (self.state / "env").write_text("")
        subprocess.run([str(swamp), "repo", "init", str(self.root / "work" / "repo")],
                       env=self.env(), check=True, capture_output=True, timeout=60)

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SWAMP_", "PYTEST_", "OTEL_"))}
        env.update({
            "PATH": f"{self.root / 'bin'}{os.pathsep}{VENV_BIN}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}",
            "HOME": str(self.root / "home"),
            "TMPDIR": str(self.root / "tmp"),
            "SWAMP_FSYNC": "0",
            "SWAMP_LOCK_TIMEOUT_MS": "20000",
            "NO_COLOR": "1",
            "SWAMP_EXAMPLE_PAGE": self.page,
            # what a reader's shell holds when an example pipes "$TOKEN" into 'vault put'
            "TOKEN": "example-token-5f3a9c",
        })
        env.pop("VIRTUAL_ENV", None)
        if self.s3 is not None:
            env["SWAMP_EXAMPLE_S3_ENDPOINT"] = self.s3.endpoint_url
        return env

    def bucket_for(self, name: str) -> str:
        if name not in self.buckets:
            self.buckets[name] = self.s3.create_bucket(f"{name}-{uuid.uuid4().hex[:6]}"[:63])
        return self.buckets[name]

    def cwd(self) -> Path:
        return Path(self.state.joinpath("cwd").read_text().strip())

    def run(self, block: Block) -> subprocess.CompletedProcess | None:
        """Run one block (write its file, or run its script); None when
        there is nothing to run."""
        kind = block.kind
        if kind is None:
            return None
        if kind == "file":
            path = self.cwd() / block.file
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(block.text)
            return None
        text = transcript_script(block.text) if kind == "transcript" else expect_exit_codes(block.text)
        if block.needs_s3:
            text = s3_substitute(text, self.s3.endpoint_url, self.bucket_for)
        text = move_tmp(text, self.root / "tmp")
        state = shlex.quote(str(self.state))
        script = (
            f"set -a; . {state}/env; set +a\n"
            f"cd \"$(cat {state}/cwd)\"\n"
            f"trap 'pwd > {state}/cwd; export -p > {state}/env' EXIT\n"
            "set -e -o pipefail\n"
            f"{text}"
        )
        script_path = self.state / f"block-{block.line}.sh"
        script_path.write_text(script)
        out_path = self.state / f"block-{block.line}.out"
        with open(out_path, "w+b") as out:
            proc = subprocess.Popen(["bash", str(script_path)], stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, env=self.env(), start_new_session=True)
            # What the block starts in the background (`swamp serve ... &`)
            # stays up for the page's later blocks, in the block's own
            # process group, stopped when the page is done (PageRun.stop).
            self.groups.append(proc.pid)
            try:
                code = proc.wait(timeout=BLOCK_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                code = None
                self.stop()
                proc.wait()
            out.seek(0)
            output = out.read().decode(errors="replace")
        return subprocess.CompletedProcess(script_path, -1 if code is None else code, output, "")


def fork_shim(server: fork_client.Server) -> str:
    """The text of tests/docs/fork_shim.py as the page's `swamp`, bound to ``server``."""
    names = {"SOCKET": server.path, "VIEW": server.view, "REAL": str(VENV_BIN / "swamp"),
             "AT_START": fork_client.AT_START, "AT_START_NAMES": fork_client.AT_START_NAMES}
    header = "".join(f"{name} = {value!r}\n" for name, value in names.items())
    return f"#!{sys.executable} -IS\n{header}" + Path(__file__).with_name("fork_shim.py").read_text()


#: pages run at the same time (each page's blocks run in order, in one thread)
PARALLEL_PAGES = 3


def _run_page(run: PageRun, todo: list[Block]) -> dict[str, object]:
    results: dict[str, object] = {}
    try:
        run.start()
        for block in todo:
            try:
                results[block.id] = run.run(block)
            except Exception as e:  # reported by the block's own test
                results[block.id] = e
    finally:
        run.stop()
    return results


@pytest.fixture(scope="session")
def doc_results(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """Run every page that has a selected example, up to its last selected
    block, several pages at a time; the result of each block by its id
    (None for a file written)."""
    wanted: dict[str, int] = {}
    for item in request.session.items:
        block = getattr(getattr(item, "callspec", None), "params", {}).get("block")
        if isinstance(block, Block) and not block.skip_reason:
            wanted[block.page] = max(wanted.get(block.page, 0), block.line)
    plans: list[tuple[PageRun, list[Block]]] = []
    for page, last in wanted.items():
        todo = [b for b in blocks(Path(page)) if b.line <= last and b.kind and not b.skip_reason]
        run = PageRun(page, tmp_path_factory.mktemp(page.replace("/", "_").replace(".", "_")))
        if any(b.needs_s3 for b in todo):
            run.s3 = request.getfixturevalue("seaweedfs")
        plans.append((run, todo))
    forks = None
    if plans and os.environ.get("SWAMP_TEST_FORKS") != "0":
        # one server for every page: their environments differ only where an
        # interpreter does not look at start (PATH, HOME, the page's name)
        forks = fork_client.Server(plans[0][0].env())
        for run, _ in plans:
            run.forks = forks
    results: dict[str, object] = {}
    try:
        with ThreadPoolExecutor(max_workers=PARALLEL_PAGES) as pool:
            for done in pool.map(lambda plan: _run_page(*plan), plans):
                results.update(done)
    finally:
        if forks is not None:
            forks.stop()
    return results
