"""`swamp data get`, `model method run`, `data list` and `model get` through
the real entry point, once through the fast lane (no click) and once through click
(``SWAMP_NO_FAST_LANE=1``), each in its own repository built the same way:
the same output, --json documents, errors and exit codes, and the lane never
imports click."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.helpers import PYTHON, _env, on_a_terminal

#: runs swamp's entry point and writes to $FAST_LANE_MARK whether click was imported
LAUNCH = ("import os, sys\nfrom swamp.cli.main import main\ntry:\n    main(sys.argv[1:])\nfinally:\n"
          "    open(os.environ['FAST_LANE_MARK'], 'w').write('click' if 'click' in sys.modules else 'none')\n")

SETUP = [
    ["repo", "init"],
    ["model", "create", "command/shell", "ok", "--global-arg", "run=echo hello"],
    ["model", "create", "command/shell", "bad", "--global-arg",
     "run=printf '\\033[31mred\\033[0m line\\n'; echo oops >&2; exit 3"],
    ["model", "create", "command/shell", "greeter", "--input", "message", "--global-arg",
     "run=echo ${{ inputs.message }}"],
    ["model", "create", "command/shell", "slow", "--input", "mark", "--global-arg",
     "run=touch '${{ inputs.mark }}'; sleep 60"],
    ["model", "method", "run", "ok", "execute"],  # so that ok/result exists for any test run alone
]

#: (arguments, whether the lane takes them); run in this order in both repositories
STEPS = [
    (["model", "method", "run", "ok", "execute"], True),
    (["model", "method", "run", "ok", "execute", "--json"], True),
    (["--json", "model", "method", "run", "ok", "execute", "-q"], True),
    (["-q", "model", "method", "run", "ok", "execute"], True),
    (["model", "method", "run", "bad", "execute"], True),
    (["model", "method", "run", "bad", "execute", "-v", "--no-color"], True),
    (["model", "method", "run", "bad", "execute", "--json"], True),
    (["model", "method", "run", "greeter", "execute", "--input", "message=hi", "--tag", "env=prod"], True),
    (["model", "method", "run", "greeter", "execute"], True),
    (["model", "method", "run", "greeter", "execute", "--json"], True),
    (["model", "method", "run", "greeter", "execute", "--input", "message=@message.txt"], True),
    (["model", "method", "run", "greeter", "execute", "--input", "message=@absent.txt"], True),
    (["model", "method", "run", "greeter", "execute", "--input", "message=@absent.txt", "--json"], True),
    (["model", "method", "run", "greeter", "execute", "--input", '{"message": "json"}', "--json"], True),
    (["model", "method", "run", "greeter", "execute", "--input", "nomessage"], True),
    (["model", "method", "run", "greeter", "execute", "--tag", "notapair"], True),
    (["model", "method", "run", "nope", "execute"], True),
    (["model", "method", "run", "ok", "nope", "--json"], True),
    (["model", "method", "run", "ok", "execute", "--offline"], True),
    (["data", "get", "ok", "result"], True),
    (["data", "get", "ok", "result", "--json"], True),
    (["data", "get", "ok", "result", "--version", "1", "--no-content"], True),
    (["data", "get", "ok", "result", "--version=99"], True),
    (["data", "get", "ok", "result", "--version", "99", "--json"], True),
    (["data", "get", "ok", "nope", "--json"], True),
    (["data", "get", "nope", "result"], True),
    (["data", "get", "bad", "log"], True),
    (["data", "get", "greeter", "result", "--workflow", "nothing"], True),
    (["-q", "data", "get", "ok", "result"], True),
    (["data", "get", "ok", "result", "--repo-dir", "/nonexistent/swamp-fast-lane"], True),
    (["--json", "data", "get", "ok", "result", "--repo-dir=/nonexistent/swamp-fast-lane"], True),
    (["data", "list"], True),
    (["data", "list", "ok", "--json"], True),
    (["data", "list", "nope"], True),
    (["model", "get", "greeter"], True),
    (["model", "get", "greeter", "--json"], True),
    (["model", "get", "nope"], True),
    (["--json", "model", "get", "nope"], True),
    (["datastore", "sync"], True),  # a directory datastore: nothing to sync, the same counts either way
    (["datastore", "sync", "--pull", "--json"], True),
    (["datastore", "sync", "--pull", "--push"], True),
    # not the lane's: click says what is wrong, the same either way
    (["data", "get", "ok"], False),
    (["data", "get", "ok", "result", "--version", "x", "--json"], False),
    (["model", "method", "run", "ok", "execute", "--bogus"], False),
    (["data", "list", "a", "b"], False),
    (["model", "get"], False),
    (["datastore", "sync", "--bogus"], False),
]


def swamp(repo: Path, args: list[str], lane: bool, mark: Path) -> tuple[int, str, str, str]:
    env = _env({"FAST_LANE_MARK": str(mark)} if lane else {"FAST_LANE_MARK": str(mark), "SWAMP_NO_FAST_LANE": "1"})
    p = subprocess.run([PYTHON, "-c", LAUNCH, *args], cwd=repo, env=env, capture_output=True, text=True,
                       timeout=60)
    return p.returncode, p.stdout, p.stderr, mark.read_text()


def normal(text: str, repo: Path) -> str:
    """Without what differs between two runs: ids, times, durations, sizes and hashes, the repository's path."""
    text = text.replace(str(repo), "<repo>")
    text = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "<id>", text)
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z?", "<time>", text)
    text = re.sub(r"\d{8}T\d{9}Z", "<time>", text)
    text = re.sub(r"(in|after) \d+ ms", r"\1 N ms", text)
    text = re.sub(r'"sha256": "[0-9a-f]{64}"', '"sha256": "<sha>"', text)
    text = re.sub(r'"(durationMs|size)": \d+', r'"\1": N', text)
    text = re.sub(r"\d+(\.\d)? (B|KiB)\b", "N B", text)
    return text


def both(fn):
    """``fn(lane)`` for the lane's repository and click's at the same time: {lane: result}."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:
        futures = {lane: pool.submit(fn, lane) for lane in (True, False)}
        return {lane: f.result() for lane, f in futures.items()}


@pytest.fixture(scope="module")
def repos(tmp_path_factory):
    out = {True: tmp_path_factory.mktemp("lane"), False: tmp_path_factory.mktemp("click")}

    def setup(lane):
        repo = out[lane]
        for args in SETUP:
            code, _, err, _ = swamp(repo, args, False, repo / ".mark")
            assert code == 0, err
        (repo / "message.txt").write_text("from a file\n")

    both(setup)
    return out


def test_every_step_prints_and_exits_the_same_through_the_lane_and_through_click(repos, tmp_path):
    differences = []
    for args, taken in STEPS:
        runs = both(lambda lane: swamp(repos[lane], args, lane, tmp_path / f"mark-{lane}"))
        results = {}
        for lane, (code, out, err, imported) in runs.items():
            results[lane] = (code, normal(out, repos[lane]), normal(err, repos[lane]))
            expected = "none" if lane and taken else "click"
            assert imported == expected, f"{args}: click imported? {imported}, expected {expected}"
        if results[True] != results[False]:
            differences.append(f"{args}:\n  lane:  {results[True]!r}\n  click: {results[False]!r}")
    assert not differences, "\n".join(differences)


def test_the_steps_fail_where_they_should(repos, tmp_path):
    # A sanity check of the comparison above: it compares errors, not only successes.
    # (Run in both repositories, so that the next tests find them alike.)
    for lane in (True, False):
        code, out, err, _ = swamp(repos[lane], ["data", "get", "ok", "nope", "--json"], lane, tmp_path / "m")
        assert code == 1 and out == "" and '"code": "not_found"' in err
        code, out, err, _ = swamp(repos[lane], ["model", "method", "run", "bad", "execute"], lane, tmp_path / "m")
        assert code == 1 and "bad.execute: failed" in out
        code, out, err, _ = swamp(repos[lane], ["data", "get", "bad", "log"], lane, tmp_path / "m")
        assert code == 0 and "red line" in out and "\x1b" not in out  # escapes removed off a terminal (click.echo)


@pytest.mark.parametrize("args", [
    ["model", "method", "run", "ok", "execute"],
    ["model", "method", "run", "bad", "execute"],
    ["data", "get", "bad", "log"],
    ["data", "get", "ok", "nope"],
    ["model", "method", "run", "nope", "execute", "--no-color"],
    ["data", "list"],
    ["model", "get", "ok"],
], ids=" ".join)
def test_on_a_terminal_the_colours_are_the_same(repos, args):
    seen = {}
    for lane in (True, False):
        env = {} if lane else {"SWAMP_NO_FAST_LANE": "1"}
        seen[lane] = normal(on_a_terminal(args, cwd=repos[lane], env=env, colour=True), repos[lane])
    assert seen[True] == seen[False]


@pytest.mark.parametrize("args", [["data", "get", "ok", "result"], ["model", "method", "run", "ok", "execute"],
                                  ["model", "method", "run", "greeter", "execute", "--input", "message=x"],
                                  ["data", "list"], ["model", "get", "ok"], ["datastore", "sync", "--pull"]],
                         ids=" ".join)
def test_the_lane_does_not_import_click(repos, args):
    code = ("import sys\nfrom swamp.cli.main import main\ntry:\n    main(sys.argv[1:])\n"
            "except SystemExit as e:\n    assert e.code == 0, e.code\n"
            "assert 'click' not in sys.modules, 'click was imported'\n")
    p = subprocess.run([PYTHON, "-c", code, *args], cwd=repos[True], env=_env(), capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr


@pytest.mark.parametrize("json_mode", [False, True], ids=["text", "json"])
def test_ctrl_c_reads_the_same_through_the_lane_and_through_click(repos, tmp_path, json_mode):
    import signal
    import time

    seen = {}
    for lane in (True, False):
        started = tmp_path / f"started-{lane}"
        args = ["model", "method", "run", "slow", "execute", "--input", f"mark={started}"] + (["--json"] if json_mode else [])
        env = _env({"FAST_LANE_MARK": str(tmp_path / "mark")} if lane else
                   {"FAST_LANE_MARK": str(tmp_path / "mark"), "SWAMP_NO_FAST_LANE": "1"})
        p = subprocess.Popen([PYTHON, "-c", LAUNCH, *args], cwd=repos[lane], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 60
            while not started.exists() and p.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            assert started.exists(), p.communicate()
            p.send_signal(signal.SIGINT)
            out, err = p.communicate(timeout=60)
        finally:
            p.kill()
        seen[lane] = (p.returncode, normal(out, repos[lane]), normal(err, repos[lane]))
        assert (tmp_path / "mark").read_text() == ("none" if lane else "click")
    assert seen[True] == seen[False]
    assert seen[True][0] == 130
