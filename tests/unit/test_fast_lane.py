"""The fast lane (swamp.cli.fast_lane) parses `data get`, `model method
run`, `data list` and `model get` without click. Whatever command line it takes, click must have called
the same command body with exactly the same arguments and global options;
whatever else it is given, it must leave to click ("not mine")."""

from __future__ import annotations

import inspect
import os
import tempfile
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from swamp.cli import data_get, data_list, datastore_sync, fast_lane, method_run, model_get
from swamp.cli.errors import run_cli
from swamp.cli.run_reports import selections

REAL = {"data get": data_get.run, "model method run": method_run.run, "data list": data_list.run,
        "model get": model_get.run, "datastore sync": datastore_sync.run}
MODULES = {"data get": data_get, "model method run": method_run, "data list": data_list, "model get": model_get,
           "datastore sync": datastore_sync}

_SCRATCH = tempfile.mkdtemp(prefix="swamp-fast-lane-")
DIR = os.path.join(_SCRATCH, "repo")
os.makedirs(DIR, exist_ok=True)
FILE = os.path.join(_SCRATCH, "a-file")
open(FILE, "w").close()
MISSING = os.path.join(_SCRATCH, "not-there")


def _bound(command: str, args: tuple, kwargs: dict) -> tuple[dict, dict]:
    """(the CliState's fields, every parameter by name) of one call of a body."""
    b = inspect.signature(REAL[command]).bind(*args, **kwargs)
    b.apply_defaults()
    params = dict(b.arguments)
    state = params.pop("state")
    if "options" in params:  # the report and check options, as the body reads them (absent: click's defaults)
        params["selections"] = selections(dict(params.pop("options")))
    return vars(state).copy(), params


def through_click(argv: list[str]) -> list[tuple[str, dict, dict]]:
    """The body calls click makes for ``argv`` (the bodies replaced by recorders)."""
    calls = []

    def recorder(command):
        def record(*args, **kwargs):
            calls.append((command, *_bound(command, args, kwargs)))
        return record

    from swamp.cli.main import cli

    import contextlib

    env = {k: v for k, v in os.environ.items() if not k.startswith("SWAMP_")}
    with contextlib.ExitStack() as stack:
        stack.enter_context(mock.patch.dict(os.environ, env, clear=True))
        for command, module in MODULES.items():
            stack.enter_context(mock.patch.object(module, "run", recorder(command)))
        run_cli(cli, list(argv))
    return calls


def through_lane(argv: list[str]):
    parsed = fast_lane.parse(list(argv), environ={})
    if parsed is None:
        return None
    command = " ".join(parsed.words)
    return (command, *_bound(command, (parsed.state,), parsed.params))


def assert_same(argv: list[str]) -> bool:
    """The lane's parse is click's, or the lane leaves ``argv`` alone; whether it took it."""
    lane = through_lane(argv)
    if lane is None:
        return False
    assert through_click(argv) == [lane], argv
    return True


# ------------------------------------------------------------ the forms it takes
TAKEN = [
    ["data", "get", "m", "n"],
    ["--json", "data", "get", "m", "n"],
    ["data", "get", "m", "n", "--json"],
    ["data", "get", "--json", "m", "--version", "3", "n"],
    ["data", "get", "m", "n", "--version=12", "--no-content"],
    ["data", "get", "m", "n", "--version", "1", "--version", "2"],
    ["data", "get", "m", "n", "--workflow", "deploy"],
    ["data", "get", "m", "n", "--workflow=3f2a9c1e", "--workflow", "other"],
    ["data", "get", "m", "n", "--workflow="],
    ["data", "get", "m", "n", "--version=-1"],
    ["data", "get", "m", "n", "--version", " 7 "],
    ["-q", "--offline", "data", "get", "m", "n", "-v", "--no-color"],
    ["--quiet", "--verbose", "data", "get", "m", "n"],
    ["--repo-dir", DIR, "data", "get", "m", "n"],
    ["--repo-dir=" + MISSING, "data", "get", "m", "n"],
    ["--repo-dir", DIR, "data", "get", "m", "n", "--repo-dir", MISSING],
    ["data", "get", "m", "n", "--repo-dir=" + DIR, "--json", "--json"],
    ["data", "get", "", "x y"],
    ["model", "method", "run", "hello", "execute"],
    ["model", "method", "run", "hello", "execute", "--input", "run=echo hi"],
    ["model", "method", "run", "hello", "execute", "--input=a=b", "--input", "a.c=2", "--input", "x:json=[1]"],
    ["model", "method", "run", "--input", "k=@some-file", "hello", "--tag", "env=prod", "execute"],
    ["model", "method", "run", "hello", "execute", "--input", '{"a": 1}', "--tag=t=1", "--tag", "u=2"],
    ["model", "method", "run", "hello", "execute", "--input=-x"],
    ["--json", "-q", "model", "method", "run", "hello", "execute", "--repo-dir", DIR, "--offline"],
    ["model", "method", "run", "hello", "execute", "--no-color", "-v", "--input", "a="],
    ["data", "list"],
    ["data", "list", "m", "--json"],
    ["-q", "data", "list", "--repo-dir", DIR],
    ["model", "get", "m"],
    ["--json", "model", "get", "--offline", "m", "-v"],
    ["datastore", "sync"],
    ["datastore", "sync", "--pull", "--json"],
    ["--json", "datastore", "sync", "--push", "-q"],
    ["datastore", "sync", "--pull", "--push"],  # refused by the body, the same on both paths
    ["datastore", "sync", "--repo-dir", DIR, "--pull", "--pull"],
]


def _id(argv: list[str]) -> str:
    return " ".join(argv).replace(_SCRATCH, "<tmp>") or "(nothing)"  # the same in every xdist process


@pytest.mark.parametrize("argv", TAKEN, ids=_id)
def test_the_lane_gives_the_bodies_exactly_what_click_gives(argv):
    assert assert_same(argv), f"the lane should take {argv}"


# ------------------------------------------------------------ the forms it leaves to click
LEFT = [
    [],
    ["data"],
    ["data", "get"],
    ["data", "get", "m"],
    ["data", "get", "m", "n", "extra"],
    ["data", "get", "m", "n", "--help"],
    ["data", "get", "-h", "m", "n"],
    ["--help", "data", "get", "m", "n"],
    ["data", "get", "m", "--", "n"],
    ["data", "get", "m", "-", "n"],
    ["data", "--json", "get", "m", "n"],
    ["data", "get", "m", "n", "--version"],
    ["data", "get", "m", "n", "--version", "x"],
    ["data", "get", "m", "n", "--version", "-1"],
    ["data", "get", "m", "n", "--no-content=1"],
    ["data", "get", "m", "n", "--json=true"],
    ["data", "get", "m", "n", "-qv"],
    ["data", "get", "m", "n", "-q=1"],
    ["data", "get", "m", "n", "--jso"],
    ["data", "get", "m", "n", "--workflow", "--json"],
    ["data", "get", "m", "n", "--repo-dir", FILE],
    ["data", "get", "m", "n", "--repo-dir="],
    ["data", "get", "m", "n", "--server", "http://127.0.0.1:1"],
    ["data", "get", "m", "n", "--token", "t"],
    ["data", "get", "m", "n", "--traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"],
    ["--version"],
    ["--version", "data", "get", "m", "n"],
    ["--input", "a=b", "model", "method", "run", "m", "x"],
    ["data", "list", "m", "n"],
    ["data", "list", "--version", "1"],
    ["data", "versions", "m", "n"],
    ["model", "get"],
    ["model", "get", "m", "n"],
    ["model", "get", "m", "--no-content"],
    ["model", "list"],
    ["model", "search", "m"],
    ["model", "method", "run", "m"],
    ["model", "method", "run", "command/shell", "execute", "greet"],
    ["model", "method", "run", "command/shell", "execute"],
    ["model", "method", "run", "m", "execute", "name"],
    ["model", "method", "run", "m", "execute", "--stdin"],
    ["model", "method", "run", "m", "execute", "--input-file", "x.yaml"],
    ["model", "method", "run", "m", "execute", "--input"],
    ["model", "method", "run", "m", "execute", "--input", "-x"],
    ["model", "method", "run", "m", "execute", "--placement", "gpu=1"],
    ["model", "method", "run", "m", "execute", "--scheduler", "tcp://x:1"],
    ["model", "method", "run", "m", "execute", "--report", "r"],
    ["model", "method", "run", "m", "execute", "--skip-reports"],
    ["model", "method", "run", "m", "execute", "--skip-check", "c"],
    ["model", "method", "run", "m", "execute", "--version", "1"],
    ["model", "method", "run", "m", "execute", "--no-content"],
    ["model", "--json", "method", "run", "m", "execute"],
    ["model", "method", "--json", "run", "m", "execute"],
    ["data", "get", "m", "n", "--input", "a=b"],
    ["datastore", "sync", "extra"],
    ["datastore", "sync", "--pull=1"],
    ["datastore", "sync", "--help"],
    ["datastore", "sync", "--pul"],
    ["datastore", "status"],
]


@pytest.mark.parametrize("argv", LEFT, ids=_id)
def test_what_the_lane_does_not_take_goes_to_click(argv):
    assert fast_lane.parse(list(argv), environ={}) is None


@pytest.mark.parametrize("variable", ["SWAMP_NO_FAST_LANE", "SWAMP_SERVE_URL"])
def test_an_environment_that_changes_the_command_sends_it_to_click(variable):
    for argv in (["data", "get", "m", "n"], ["model", "method", "run", "m", "execute"], ["data", "list"],
                 ["model", "get", "m"]):
        assert fast_lane.parse(argv, environ={}) is not None
        assert fast_lane.parse(argv, environ={variable: ""}) is None


def test_arguments_that_are_not_strings_go_to_click():
    from pathlib import Path

    assert fast_lane.parse(["data", "get", Path("m"), "n"], environ={}) is None
    assert fast_lane.parse(["--repo-dir", Path("/tmp"), "data", "get", "m", "n"], environ={}) is None


def test_a_scheduler_in_the_environment_sends_a_method_run_to_click():
    env = {"SWAMP_SCHEDULER": "tcp://127.0.0.1:1"}
    assert fast_lane.parse(["model", "method", "run", "m", "execute"], environ=env) is None
    assert fast_lane.parse(["data", "get", "m", "n"], environ=env) is not None


# ------------------------------------------------------------ many command lines, generated
GLOBAL = [["--json"], ["--offline"], ["-q"], ["--quiet"], ["-v"], ["--verbose"], ["--no-color"],
          ["--repo-dir", DIR], ["--repo-dir=" + DIR], ["--repo-dir", MISSING], ["--repo-dir", FILE],
          ["--repo-dir"], ["--json=1"], ["-qv"], ["--server", "http://x"], ["-h"], ["--", "x"], ["-"]]
DATA_GET = [["--version", "3"], ["--version=7"], ["--version", "x"], ["--version", "-2"], ["--version=-2"],
            ["--version", "٣"], ["--no-content"], ["--no-content=1"], ["--workflow", "w"], ["--workflow="],
            ["--workflow=a=b"], ["--workflow", "--json"], ["--workflow"]]
METHOD_RUN = [["--input", "a=b"], ["--input=k=v"], ["--input", "x.y=1"], ["--input", '{"a": 1}'], ["--input"],
              ["--input", "-z"], ["--input=-z"], ["--tag", "t=1"], ["--tag=u=2"], ["--tag"], ["--stdin"],
              ["--input-file", "f"], ["--placement", "a=b"], ["--report", "r"], ["--skip-checks"]]
WORDS = {"data get": ["data", "get"], "model method run": ["model", "method", "run"], "data list": ["data", "list"],
         "model get": ["model", "get"]}
OWN = {"data get": DATA_GET, "model method run": METHOD_RUN, "data list": [], "model get": []}
NAMES = ["m", "n", "execute", "a/b", "", "x y", "get", "run"]


@st.composite
def command_lines(draw):
    command = draw(st.sampled_from(sorted(WORDS)))
    own = OWN[command] or [["--version", "1"], ["--input", "a=b"]]  # not theirs
    before = draw(st.lists(st.sampled_from(GLOBAL), max_size=3))
    count = draw(st.sampled_from([2, 2, 2, 2, 1, 3, 0]))
    names = [[draw(st.sampled_from(NAMES))] for _ in range(count)]
    after = draw(st.lists(st.sampled_from(GLOBAL + own + own), max_size=5))
    rest = draw(st.permutations(names + after))
    words = WORDS[command]
    if draw(st.integers(0, 9)) == 0:
        words = draw(st.permutations(words))
    return [t for group in before for t in group] + list(words) + [t for group in rest for t in group]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(command_lines())
def test_generated_command_lines_are_parsed_as_click_parses_them_or_left_to_click(argv):
    assert_same(argv)


def test_the_generated_command_lines_include_many_the_lane_takes():
    # So that the property above is not vacuously true.
    taken = 0
    examples = []

    @settings(max_examples=200, deadline=None, database=None)
    @given(command_lines())
    def count(argv):
        examples.append(argv)

    count()
    taken = sum(fast_lane.parse(a, environ={}) is not None for a in examples)
    assert taken >= len(examples) // 10


# ------------------------------------------------------------ writing as click.echo does
class _Terminal:
    """A text stream over bytes that says it is (or is not) a terminal."""

    def __init__(self, tty: bool) -> None:
        import io

        self.raw = io.BytesIO()
        self.stream = io.TextIOWrapper(self.raw, encoding="utf-8", errors="strict", write_through=True)
        self.stream.isatty = lambda: tty


ESCAPES = st.sampled_from(["\x1b[31m", "\x1b[0m", "\x1b[2K", "\x1b[1;32m", "\x1b[?25l", "\x1b", "\x1b[", "[0m"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=20), ESCAPES), max_size=8).map("".join), st.booleans(), st.booleans())
def test_echo_writes_what_click_echo_writes(text, tty, nl):
    import click

    from swamp.cli.echo import write

    ours, theirs = _Terminal(tty), _Terminal(tty)
    write(ours.stream, text, nl=nl)
    click.echo(text, file=theirs.stream, nl=nl)
    assert ours.raw.getvalue() == theirs.raw.getvalue()


def test_the_lanes_modules_import_without_click():
    import subprocess
    import sys

    modules = ["swamp.cli.main", "swamp.cli.fast_lane", "swamp.cli.state", "swamp.cli.echo", "swamp.cli.output",
               "swamp.cli.error_output", "swamp.cli.colour", "swamp.cli.logs", "swamp.cli.activity",
               "swamp.cli.inputs", "swamp.cli.run_reports", "swamp.cli.data_get", "swamp.cli.data_list",
               "swamp.cli.model_get", "swamp.cli.method_run"]
    code = "import sys\n" + "".join(f"import {m}\n" for m in modules) + \
        "assert 'click' not in sys.modules, 'click imported'\nfrom swamp.cli.state import CliState\nCliState()\n"
    src = os.path.join(os.path.dirname(__file__), "..", "..", "src")
    p = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": os.path.abspath(src)},
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
