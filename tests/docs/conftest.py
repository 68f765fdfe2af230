"""The runner of the documentation's examples: one scratch directory (with a
fresh swamp repository) per page, whose blocks run in order. See
tests/docs/examples.py for the convention."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.docs.examples import Block, blocks, expect_exit_codes, move_tmp, s3_substitute, transcript_script

BLOCK_TIMEOUT_S = 60
VENV_BIN = Path(sys.executable).parent


@dataclass
class PageRun:
    """A page's scratch directory and how far its blocks have run."""

    page: str
    root: Path
    done: int = 0  # blocks of the page run so far (by index)
    buckets: dict[str, str] = field(default_factory=dict)
    s3: object = None
    groups: list[int] = field(default_factory=list)  # process groups of the blocks run

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
        (self.state / "cwd").write_text(str(self.root / "work" / "repo"))
        (self.state / "env").write_text("")
        subprocess.run([str(VENV_BIN / "swamp"), "repo", "init", str(self.root / "work" / "repo")],
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
            # process group, stopped at the end of the session.
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


class Pages:
    def __init__(self, tmp_factory: pytest.TempPathFactory):
        self.tmp_factory = tmp_factory
        self.runs: dict[str, PageRun] = {}

    def get(self, page: str) -> PageRun:
        if page not in self.runs:
            for other in self.runs.values():  # one page's servers at a time
                other.stop()
            name = page.replace("/", "_").replace(".", "_")
            run = PageRun(page, self.tmp_factory.mktemp(name))
            run.start()
            self.runs[page] = run
        return self.runs[page]


@pytest.fixture(scope="session")
def doc_pages(tmp_path_factory: pytest.TempPathFactory):
    pages = Pages(tmp_path_factory)
    yield pages
    for run in pages.runs.values():
        run.stop()


def run_block(request: pytest.FixtureRequest, doc_pages: Pages, block: Block):
    """Run the page's blocks before this one (once each, whatever their
    outcome: their own tests report it), then this one."""
    page = doc_pages.get(block.page)
    page_blocks = blocks(Path(block.page))
    index = next(i for i, b in enumerate(page_blocks) if b.line == block.line)
    for earlier in page_blocks[page.done:index + 1]:
        if earlier.skip_reason:
            continue
        if earlier.needs_s3 and page.s3 is None:
            page.s3 = request.getfixturevalue("seaweedfs")
        result = page.run(earlier)
        if earlier is not page_blocks[index]:
            page.done += 1
            continue
        page.done = index + 1
        return result
    page.done = max(page.done, index + 1)
    return None
