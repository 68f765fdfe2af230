"""Review of the CLI's fast lane (cli/fast_lane.py): `data get`, `data list`,
`model get` and `model method run` without click. Through the real entry
point, every command line here must give the same exit code, stdout and
stderr through the lane as through click (``SWAMP_NO_FAST_LANE=1``): odd
option spellings, values that look like options, non-UTF-8 and unicode
arguments, stream encodings, a closed or broken stdout, a full disk,
repository directories click.Path refuses, the environment click reads."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.helpers import PYTHON, _env, on_a_terminal

LAUNCH = "import sys\nfrom swamp.cli.main import main\nmain()\n"


def swamp(repo: Path, args: list[str], lane: bool, env: dict | None = None, **kw) -> tuple[int, bytes, bytes]:
    e = _env(env)
    e.pop("SWAMP_NO_FAST_LANE", None)
    if not lane:
        e["SWAMP_NO_FAST_LANE"] = "1"
    p = subprocess.run([PYTHON, "-c", LAUNCH, *args], cwd=repo, env=e, stdin=subprocess.DEVNULL, timeout=60,
                       **({"capture_output": True} | kw))
    return p.returncode, p.stdout or b"", p.stderr or b""


def normal(b: bytes) -> bytes:
    """Without what differs between two runs of a method (ids, times,
    versions), and a traceback (click's has more frames) cut to its last line."""
    t = b.decode("utf-8", "surrogateescape")
    t = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "<id>", t)
    t = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z?|\d{8}T\d{9}Z", "<time>", t)
    t = re.sub(r"(in|after) \d+ ms|\"durationMs\": \d+|version \d+|\"version\": \d+|\"pid\": \d+", "<n>", t)
    if "Traceback (most recent call last):" in t:
        t = "Traceback ... " + t.rstrip("\n").rsplit("\n", 1)[-1]
    return t.encode("utf-8", "surrogateescape")


#: runs many command lines in one interpreter: a fork per command line (so
#: each starts as a fresh process would, after swamp.cli.main's import), its
#: stdout and stderr files, its exit code as sys.exit gave it
DRIVER = """
import json, os, sys, traceback
from swamp.cli.main import main
cases, out = json.loads(sys.argv[1]), sys.argv[2]
codes = []
for i, args in enumerate(cases):
    sys.stdout.flush(); sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        for fd, name in ((1, "out"), (2, "err")):
            f = os.open(os.path.join(out, f"{i}.{name}"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            os.dup2(f, fd)
            os.close(f)
        sys.argv = ["swamp", *args]
        code = 0
        try:
            main()
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:
            traceback.print_exc()
            code = 1
        try:
            sys.stdout.flush()
        except OSError:
            pass
        sys.stderr.flush()
        os._exit(code)
    codes.append(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
print(json.dumps(codes))
"""


def many(repo: Path, cases: list[list[str]], lane: bool, out: Path) -> list[tuple[int, bytes, bytes]]:
    import json

    out.mkdir()
    e = _env({} if lane else {"SWAMP_NO_FAST_LANE": "1"})
    p = subprocess.run([PYTHON, "-c", DRIVER, json.dumps(cases), str(out)], cwd=repo, env=e, capture_output=True,
                       stdin=subprocess.DEVNULL, timeout=240)
    assert p.returncode == 0, p.stderr
    codes = json.loads(p.stdout)
    return [(codes[i], (out / f"{i}.out").read_bytes(), (out / f"{i}.err").read_bytes()) for i in range(len(cases))]


def all_same(repo: Path, cases: list[list[str]], tmp_path: Path) -> None:
    lane, slow = many(repo, cases, True, tmp_path / "lane"), many(repo, cases, False, tmp_path / "click")
    differ = [(args, a, b) for args, a, b in zip(cases, lane, slow)
              if (a[0], normal(a[1]), normal(a[2])) != (b[0], normal(b[1]), normal(b[2]))]
    assert not differ, "\n".join(f"{args!r}:\n  lane:  {a!r}\n  click: {b!r}" for args, a, b in differ)


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    root = tmp_path_factory.mktemp("lane-review")
    for args in (["repo", "init"],
                 ["model", "create", "command/shell", "ok", "--global-arg", "run=echo hello"],
                 ["model", "create", "command/shell", "uni", "--global-arg", "run=printf 'caf\\303\\251 \\342\\202\\254 ok\\n'"],
                 ["model", "method", "run", "ok", "execute"], ["model", "method", "run", "uni", "execute"]):
        code, _, err = swamp(root, args, lane=False)
        assert code == 0, err
    (root / "a-file").write_text("")
    return root


def same_both_ways(repo, args, env=None, **kw):
    lane = swamp(repo, args, True, env, **kw)
    slow = swamp(repo, args, False, env, **kw)
    assert (lane[0], normal(lane[1]), normal(lane[2])) == (slow[0], normal(slow[1]), normal(slow[2])), args
    return lane


B = os.fsdecode  # an argument made of raw bytes, as a shell passes it (surrogateescape)

READS = [
    # option spellings and forms click parses its own way or refuses
    ["data", "get", "ok", "result", "-qv"], ["-vq", "data", "list"],
    ["--json", "data", "get", "ok", "result", "--json"], ["data", "get", "ok", "result", "--json=1"],
    ["data", "get", "ok", "result", "--jso"], ["data", "get", "ok", "result", "--vers", "1"],
    ["data", "get", "ok", "result", "--version", "2", "--version", "1"],
    ["data", "get", "ok", "result", "--version", " 1 "], ["data", "get", "ok", "result", "--version", "+1"],
    ["data", "get", "ok", "result", "--version", "0_1"], ["data", "get", "ok", "result", "--version", "\u0661"],
    ["data", "get", "ok", "result", "--version", "0"], ["data", "get", "ok", "result", "--version="],
    ["data", "get", "ok", "result", "--workflow="], ["data", "get", "ok", "result", "--workflow", "--json"],
    ["data", "get", "ok", "result", "--no-content=1"], ["data", "get", "ok", "--", "result"],
    ["data", "get", "-", "result"], ["data", "--json", "get", "ok", "result"],
    ["--version", "data", "get", "ok", "result"], ["data", "list", "ok", "uni", "--json"],
    ["model", "get", "-q", "ok"], ["model", "get", "ok\n"],
    # --repo-dir: what click.Path(file_okay=False) takes and refuses
    ["data", "get", "ok", "result", "--repo-dir", "a-file"], ["data", "get", "ok", "result", "--repo-dir="],
    ["data", "get", "ok", "result", "--repo-dir", "--json"], ["data", "get", "ok", "result", "--repo-dir", "/dev/null"],
    ["--repo-dir", "a-file", "data", "get", "ok", "result", "--repo-dir", "."],
    # arguments no one types, but scripts and shells pass
    ["data", "get", "", ""], ["data", "get", "ok", "résult"], ["data", "get", B(b"\xff"), "result"],
    ["data", "get", "ok", "result", "--workflow", B(b"\xfe")], ["--json", "model", "get", B(b"\xff\xfe")],
    ["data", "get", "ok", "result", "--repo-dir", B(b"/tmp/\xff-not-there")], ["model", "get", "\x1b[31mred"],
]


def test_reads_read_the_same_through_the_lane_and_click(repo, tmp_path):
    all_same(repo, READS, tmp_path)


RUNS = [
    ["model", "method", "run", "ok", "execute", "--input=run=echo eq"],
    ["model", "method", "run", "ok", "execute", "--input", "run"],
    ["model", "method", "run", "ok", "execute", "--input", "run=a", "--input", "run=b", "--json"],
    ["model", "method", "run", "ok", "execute", "--input", "timeout=0"],
    ["model", "method", "run", "ok", "execute", "--input", "ignoreExitCode=yes", "--json"],
    ["model", "method", "run", "ok", "execute", "--tag", "a=b=c", "--tag", "a=d", "--json"],
    ["model", "method", "run", "ok", "execute", "--input", B(b"run=echo \xff")],
    ["model", "method", "run", "ok", "execute", "direct"],
    ["-v", "model", "method", "run", "uni", "execute", "-q"],
]


def test_runs_read_the_same_through_the_lane_and_click(repo, tmp_path):
    all_same(repo, RUNS, tmp_path)


@pytest.mark.parametrize("encoding", ["latin-1", "utf-8:surrogateescape", "ascii"])
@pytest.mark.parametrize("args", [["model", "get", "uni"], ["model", "get", B(b"\xff")]],
                         ids=lambda a: " ".join(a)[:30])
def test_every_stream_encoding_gives_the_same_output(repo, encoding, args):
    same_both_ways(repo, args, {"PYTHONIOENCODING": encoding})


@pytest.mark.parametrize("env", [{"SWAMP_REPO_DIR": "a-file"}, {"SWAMP_REPO_DIR": ""}, {"SWAMP_SERVE_URL": ""},
                                 {"LC_ALL": "C", "PYTHONUTF8": "0"}],
                         ids=lambda e: ",".join(f"{k}={v}" for k, v in e.items()))
def test_the_environment_click_might_read_changes_nothing(repo, env):
    same_both_ways(repo, ["data", "get", "ok", "result"], env)


@pytest.mark.parametrize("args", [["data", "get", "ok", "result", "--json"], ["data", "list"],
                                  ["model", "method", "run", "ok", "execute"]],
                         ids=lambda a: " ".join(a))
def test_a_broken_pipe_ends_the_same(repo, args):
    """stdout a pipe whose reader is gone before anything is written
    (`swamp ... | head -0`): exit 1 and nothing on stderr, as with click."""
    results = []
    for lane in (True, False):
        r, w = os.pipe()
        os.close(r)
        try:
            results.append(swamp(repo, args, lane, capture_output=False, stdout=w, stderr=subprocess.PIPE))
        finally:
            os.close(w)
    assert [(c, normal(err)) for c, _, err in results][0] == [(c, normal(err)) for c, _, err in results][1]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("args", [["model", "get", "ok", "--json"]], ids=lambda a: " ".join(a))
def test_a_full_disk_on_stdout_ends_the_same(repo, args):
    with open("/dev/full", "wb") as full:
        lane = swamp(repo, args, True, capture_output=False, stdout=full, stderr=subprocess.PIPE)
        slow = swamp(repo, args, False, capture_output=False, stdout=full, stderr=subprocess.PIPE)
    assert lane[0] == slow[0] != 0
    assert lane[2].splitlines()[-1:] == slow[2].splitlines()[-1:]


def test_a_closed_stdout_ends_the_same(repo):
    results = []
    for lane in (True, False):
        e = _env({} if lane else {"SWAMP_NO_FAST_LANE": "1"})
        p = subprocess.run(["/bin/sh", "-c", 'exec "$0" -c "$1" data get ok result >&-', PYTHON, LAUNCH],
                           cwd=repo, env=e, capture_output=True, timeout=60)
        results.append((p.returncode, normal(p.stderr)))
    assert results[0] == results[1]


@pytest.mark.parametrize("env", [{}, {"NO_COLOR": ""}], ids=lambda e: str(e))
def test_on_a_terminal_an_error_is_painted_the_same(repo, env):
    shown = [on_a_terminal(["data", "get", "nope", "result"], cwd=repo, colour=True,
                           env={**env, **({} if lane else {"SWAMP_NO_FAST_LANE": "1"})}) for lane in (True, False)]
    assert shown[0] == shown[1]
    if "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb":
        assert ("\x1b[" in shown[0]) == (not env)
