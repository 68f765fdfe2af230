"""Tracing (docs/tracing.md): the spans a command leaves, their parents and
attributes, TRACEPARENT in and out, through an in-memory exporter in this
process; and the real OTLP/HTTP exporter sending to a receiver these tests
start on 127.0.0.1 (protobuf decoded with opentelemetry-proto)."""

from __future__ import annotations

import http.server
import json
import subprocess
import threading

import pytest

pytest.importorskip("opentelemetry.sdk.trace", reason="the tracing extra (opentelemetry-sdk) is not installed")

from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

from swamp.util import tracing  # noqa: E402
from tests.helpers import PYTHON, REPO_ROOT, Result, _env, init_repo, ok, write_shell, write_workflow  # noqa: E402

CALLER_TRACE = "0af7651916cd43dd8448eb211c80319c"
CALLER_SPAN = "b7ad6b7169203331"
CALLER = f"00-{CALLER_TRACE}-{CALLER_SPAN}-01"


@pytest.fixture
def exporter():
    exp = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exp))
    tracing.use(provider)
    yield exp
    tracing.use(None)


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.delenv("TRACEPARENT", raising=False)
    monkeypatch.setenv("SWAMP_FSYNC", "0")
    r = init_repo(tmp_path / "repo")
    # The command writes the TRACEPARENT it was given where the test can read it.
    write_shell(r, "hello", """
        type: command/shell
        name: hello
        globalArguments:
          run: 'echo "$TRACEPARENT" >> traceparents.txt'
    """)
    return r


def traced(repo, *args) -> Result:
    """The CLI in this process through its real entry point's wrapper (the
    one swamp.cli.main.main calls)."""
    from click.testing import CliRunner

    from swamp.cli.errors import run_cli
    from swamp.cli.main import cli as root

    with CliRunner().isolation() as streams:
        code = tracing.run_command(root, [*map(str, args), "--json", "--repo-dir", str(repo)], run_cli)
        out, err = streams[0].getvalue().decode(), streams[1].getvalue().decode()
    return Result(code, out, err)


def by_name(exporter) -> dict:
    spans = {}
    for s in exporter.get_finished_spans():
        spans.setdefault(s.name, []).append(s)
    return spans


def parent_of(span):
    return span.parent.span_id if span.parent is not None else None


def test_a_method_run_is_a_command_span_over_a_session_over_the_method(repo, exporter):
    r = traced(repo, "model", "method", "run", "hello", "execute")
    assert r.code == 0, r
    spans = by_name(exporter)
    [command] = spans["swamp model method run"]
    [session] = spans["swamp.session"]
    [method] = spans["swamp.method"]
    assert command.parent is None  # no caller: a new trace
    assert parent_of(session) == command.context.span_id
    assert parent_of(method) == session.context.span_id
    assert {s.context.trace_id for s in (command, session, method)} == {command.context.trace_id}
    assert command.attributes["swamp.command"] == "swamp model method run"
    assert command.attributes["swamp.exit_code"] == 0
    assert session.attributes["swamp.mutating"] is True
    assert session.attributes["swamp.command"] == "model method run hello execute"
    assert method.attributes["swamp.model"] == "hello"
    assert method.attributes["swamp.model_type"] == "command/shell"
    assert method.attributes["swamp.method"] == "execute"
    assert method.attributes["swamp.status"] == "succeeded"
    assert method.attributes["swamp.output_id"] == r.data["id"]


def test_traceparent_in_the_environment_makes_the_command_a_child_and_the_shell_gets_its_own(
        repo, exporter, monkeypatch):
    monkeypatch.setenv("TRACEPARENT", CALLER)
    assert traced(repo, "model", "method", "run", "hello", "execute").code == 0
    spans = by_name(exporter)
    [command] = spans["swamp model method run"]
    [method] = spans["swamp.method"]
    assert format(command.context.trace_id, "032x") == CALLER_TRACE
    assert format(parent_of(command), "016x") == CALLER_SPAN
    # the shell's process was handed the method's span as its parent
    seen = (repo / "traceparents.txt").read_text().split()
    assert seen == [f"00-{CALLER_TRACE}-{method.context.span_id:016x}-01"]


def test_the_traceparent_option_wins_over_the_environment(repo, exporter, monkeypatch):
    monkeypatch.setenv("TRACEPARENT", "00-11111111111111111111111111111111-2222222222222222-01")
    assert traced(repo, "model", "method", "run", "hello", "execute", "--traceparent", CALLER).code == 0
    [command] = by_name(exporter)["swamp model method run"]
    assert format(command.context.trace_id, "032x") == CALLER_TRACE
    assert format(parent_of(command), "016x") == CALLER_SPAN


@pytest.mark.parametrize("bad", ["xx", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",
                                 "00-00000000000000000000000000000000-b7ad6b7169203331-01",
                                 "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01"])
def test_a_bad_traceparent_option_is_a_usage_error_and_runs_nothing(repo, exporter, bad):
    r = traced(repo, "model", "method", "run", "hello", "execute", "--traceparent", bad)
    assert r.code == 2, r
    assert r.error["code"] == "usage"
    assert "traceparent" in r.error["error"]
    assert not (repo / "traceparents.txt").exists()
    [command] = by_name(exporter)["swamp model method run"]
    assert command.attributes["swamp.exit_code"] == 2
    assert command.status.status_code.name == "ERROR"


def test_a_bad_traceparent_in_the_environment_starts_a_new_trace(repo, exporter, monkeypatch):
    monkeypatch.setenv("TRACEPARENT", "not-a-traceparent")
    assert traced(repo, "model", "method", "run", "hello", "execute").code == 0
    [command] = by_name(exporter)["swamp model method run"]
    assert command.parent is None


def test_a_failed_method_and_its_command_are_marked_failed_without_the_message(repo, exporter):
    write_shell(repo, "boom", """
        type: command/shell
        name: boom
        globalArguments:
          run: 'echo secret-ish >&2; exit 3'
    """)
    r = traced(repo, "model", "method", "run", "boom", "execute")
    assert r.code != 0
    spans = by_name(exporter)
    [method] = spans["swamp.method"]
    assert method.attributes["swamp.status"] == "failed"
    assert method.status.status_code.name == "ERROR"
    [command] = spans["swamp model method run"]
    assert command.status.status_code.name == "ERROR"
    everything = json.dumps([dict(s.attributes) for s in exporter.get_finished_spans()])
    assert "secret-ish" not in everything and "exited with code" not in everything


PAIR = """
jobs:
  - name: first
    steps:
      - {name: a, task: {type: model_method, modelIdOrName: hello, methodName: execute}}
      - {name: b, task: {type: model_method, modelIdOrName: other, methodName: execute}}
  - name: second
    steps:
      - {name: c, task: {type: model_method, modelIdOrName: third, methodName: execute}}
"""


def test_a_workflow_run_has_a_span_per_job_and_step_in_their_threads(repo, exporter, monkeypatch):
    for name in ("other", "third"):
        write_shell(repo, name, f"""
            type: command/shell
            name: {name}
            globalArguments:
              run: 'echo "$TRACEPARENT" >> traceparents.txt'
        """)
    write_workflow(repo, "pair", PAIR)
    monkeypatch.setenv("TRACEPARENT", CALLER)
    r = traced(repo, "workflow", "run", "pair")
    assert r.code == 0, r
    spans = by_name(exporter)
    [command] = spans["swamp workflow run"]
    [wf] = spans["swamp.workflow"]
    jobs = {s.attributes["swamp.job"]: s for s in spans["swamp.job"]}
    steps = {s.attributes["swamp.step"]: s for s in spans["swamp.step"]}
    methods = {s.attributes["swamp.step"]: s for s in spans["swamp.method"]}
    assert format(parent_of(command), "016x") == CALLER_SPAN
    assert parent_of(wf) == command.context.span_id
    assert wf.attributes["swamp.workflow"] == "pair"
    assert set(jobs) == {"first", "second"} and set(steps) == {"a", "b", "c"}
    for job in jobs.values():  # jobs of one level run in threads of their own
        assert parent_of(job) == wf.context.span_id
        assert job.attributes["swamp.status"] == "succeeded"
    for name, job in (("a", "first"), ("b", "first"), ("c", "second")):
        assert parent_of(steps[name]) == jobs[job].context.span_id
        assert steps[name].attributes["swamp.task"] == "model_method"
        assert steps[name].attributes["swamp.status"] == "succeeded"
        session = next(s for s in spans["swamp.session"] if s.context.span_id == parent_of(methods[name]))
        assert parent_of(session) == steps[name].context.span_id
    assert {s.context.trace_id for s in exporter.get_finished_spans()} == {int(CALLER_TRACE, 16)}
    # each shell process got its own step's method span as its parent
    seen = sorted((repo / "traceparents.txt").read_text().split())
    assert seen == sorted(f"00-{CALLER_TRACE}-{m.context.span_id:016x}-01" for m in methods.values())


def test_a_failed_step_marks_its_step_and_job_failed(repo, exporter):
    write_shell(repo, "boom", """
        type: command/shell
        name: boom
        globalArguments:
          run: 'exit 3'
    """)
    write_workflow(repo, "bad", """
        jobs:
          - name: j
            steps:
              - {name: s, task: {type: model_method, modelIdOrName: boom, methodName: execute}}
    """)
    traced(repo, "workflow", "run", "bad")
    spans = by_name(exporter)
    [step] = spans["swamp.step"]
    [job] = spans["swamp.job"]
    assert step.attributes["swamp.status"] == "failed" and step.status.status_code.name == "ERROR"
    assert job.attributes["swamp.status"] == "failed" and job.status.status_code.name == "ERROR"


def test_a_placed_step_run_on_a_worker_joins_the_steps_trace(repo, exporter, monkeypatch):
    """The dispatcher sends the step span's traceparent with the job; the
    worker's session (here: run_step in this process, as a worker runs it)
    is its child, and the worker's shell gets the worker's method span."""
    from swamp.app import remote_steps
    from swamp.repo.context import Repo

    sent = []

    class HereDispatcher:
        def close(self):
            pass

        def run(self, job, placement, **_):  # (cancelled, on_log: the Dispatcher protocol's options)
            sent.append(job.traceparent)
            out = []
            # a thread of its own starts with no span: only the job's traceparent links it
            t = threading.Thread(target=lambda: out.append(remote_steps.run_step(Repo.open(repo), job, worker="here")))
            t.start()
            t.join()
            return out[0]

    from swamp.app import placed_steps

    # the dispatcher app makes for --scheduler: this one, in this process
    monkeypatch.setattr(placed_steps, "dask_dispatcher", lambda scheduler, link=None: HereDispatcher())
    write_workflow(repo, "placed", """
        jobs:
          - name: j
            steps:
              - name: s
                placement: {labels: {region: eu}}
                task: {type: model_method, modelIdOrName: hello, methodName: execute}
    """)
    monkeypatch.setenv("TRACEPARENT", CALLER)
    r = traced(repo, "workflow", "run", "placed", "--scheduler", "tls://here:8786")
    assert r.code == 0, r
    spans = by_name(exporter)
    [step] = spans["swamp.step"]
    [method] = spans["swamp.method"]
    assert sent == [f"00-{CALLER_TRACE}-{step.context.span_id:016x}-01"]
    session = next(s for s in spans["swamp.session"] if s.context.span_id == parent_of(method))
    assert parent_of(session) == step.context.span_id
    assert (repo / "traceparents.txt").read_text().split() == [f"00-{CALLER_TRACE}-{method.context.span_id:016x}-01"]


def test_off_nothing_is_traced_and_the_traceparent_option_still_reaches_the_shell(repo, monkeypatch):
    tracing.use(None)
    for k in ("OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        monkeypatch.delenv(k, raising=False)
    try:
        assert tracing.span("x") is tracing._NOOP
        assert traced(repo, "model", "method", "run", "hello", "execute", "--traceparent", CALLER).code == 0
        assert (repo / "traceparents.txt").read_text().split() == [CALLER]
    finally:
        tracing.use(None)


def test_swamp_help_imports_no_opentelemetry_when_unset():
    env = {k: v for k, v in _env().items() if not k.startswith("OTEL_")}
    code = ("import sys; from swamp.cli.main import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith(('opentelemetry', 'swamp.util.tracing'))))")
    p = subprocess.run([PYTHON, "-c", code], env=env, capture_output=True, text=True, cwd=REPO_ROOT)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("environ, on", [
    ({}, False),
    ({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, False),
    ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, True),
    ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://x/v1/traces"}, True),
    ({"OTEL_TRACES_EXPORTER": "console"}, True),
    ({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "true"}, False),
])
def test_which_variables_turn_tracing_on(environ, on):
    assert tracing.wanted(environ) is on


# ------------------------------------------------------ a real OTLP receiver
class _Receiver(http.server.ThreadingHTTPServer):
    """An OTLP/HTTP traces endpoint: POST /v1/traces, protobuf
    ExportTraceServiceRequest, answered with an empty response."""

    def __init__(self):
        self.requests = []
        self.paths = []
        super().__init__(("127.0.0.1", 0), _Handler)


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest, ExportTraceServiceResponse)

        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.headers.get("Content-Encoding") == "gzip":
            import gzip

            body = gzip.decompress(body)
        req = ExportTraceServiceRequest()
        req.ParseFromString(body)
        self.server.paths.append((self.path, self.headers.get("Content-Type")))
        self.server.requests.append(req)
        out = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


@pytest.fixture
def receiver():
    server = _Receiver()
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    yield server
    server.shutdown()
    server.server_close()


def _received(server) -> dict:
    spans = {}
    for req in server.requests:
        for rs in req.resource_spans:
            resource = {a.key: a.value.string_value for a in rs.resource.attributes}
            for ss in rs.scope_spans:
                for s in ss.spans:
                    attrs = {a.key: a.value for a in s.attributes}
                    spans.setdefault(s.name, []).append((s, attrs, resource))
    return spans


def test_the_otlp_exporter_sends_the_trace_to_a_collector(repo, receiver):
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{receiver.server_address[1]}",
           "TRACEPARENT": CALLER}
    r = subprocess.run([PYTHON, "-m", "swamp", "model", "method", "run", "hello", "execute", "--json",
                        "--repo-dir", str(repo)], env=_env(env), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert receiver.paths and all(p == ("/v1/traces", "application/x-protobuf") for p in receiver.paths)
    spans = _received(receiver)
    [(command, cattrs, resource)] = spans["swamp model method run"]
    [(method, mattrs, _)] = spans["swamp.method"]
    assert resource["service.name"] == "swamp"
    assert command.trace_id.hex() == CALLER_TRACE and command.parent_span_id.hex() == CALLER_SPAN
    assert cattrs["swamp.exit_code"].int_value == 0
    assert mattrs["swamp.model"].string_value == "hello"
    assert method.trace_id.hex() == CALLER_TRACE
    seen = (repo / "traceparents.txt").read_text().split()
    assert seen == [f"00-{CALLER_TRACE}-{method.span_id.hex()}-01"]


def test_a_collector_that_is_down_does_not_fail_the_command(repo):
    from tests.fixtures.servers import free_port

    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{free_port()}", "OTEL_EXPORTER_OTLP_TIMEOUT": "2"}
    r = subprocess.run([PYTHON, "-m", "swamp", "model", "method", "run", "hello", "execute", "--json",
                        "--repo-dir", str(repo)], env=_env(env), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["status"] == "succeeded"
    # one line says so, not the exporter's retries
    assert r.stderr.strip().splitlines() == [
        f"warning: tracing: spans not exported to {env['OTEL_EXPORTER_OTLP_ENDPOINT']}/v1/traces (is the collector "
        "up? OTEL_EXPORTER_OTLP_ENDPOINT); the command itself is unaffected"]


def test_an_unknown_exporter_is_a_warning_not_a_failure(repo):
    r = subprocess.run([PYTHON, "-m", "swamp", "model", "method", "run", "hello", "execute", "--json",
                        "--repo-dir", str(repo)], env=_env({"OTEL_TRACES_EXPORTER": "zipkin-ish"}),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "unknown exporter 'zipkin-ish'" in r.stderr
    assert json.loads(r.stdout)["status"] == "succeeded"


def test_the_console_exporter_writes_to_stderr_and_leaves_json_on_stdout_alone(repo):
    data = ok(repo, "model", "method", "run", "hello", "execute", env={"OTEL_TRACES_EXPORTER": "console"})
    assert data["status"] == "succeeded"
