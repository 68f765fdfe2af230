"""Tracing on a shared datastore (SeaweedFS): each session's pull and push
is a span carrying what crossed the wire (requests, bytes, files), the
same figures the command reports in its JSON."""

from __future__ import annotations

import pytest

pytest.importorskip("opentelemetry.sdk.trace", reason="the tracing extra (opentelemetry-sdk) is not installed")

from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

from swamp.util import tracing  # noqa: E402
from tests.helpers import Result, init_repo, ok, s3_setup_args  # noqa: E402

pytestmark = [pytest.mark.s3]


@pytest.fixture
def exporter(monkeypatch):
    monkeypatch.delenv("TRACEPARENT", raising=False)
    monkeypatch.setenv("SWAMP_FSYNC", "0")
    exp = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exp))
    tracing.use(provider)
    yield exp
    tracing.use(None)


def traced(repo, *args) -> Result:
    from click.testing import CliRunner

    from swamp.cli.errors import run_cli
    from swamp.cli.main import cli as root

    with CliRunner().isolation() as streams:
        code = tracing.run_command(root, [*map(str, args), "--json", "--repo-dir", str(repo)], run_cli)
        out, err = streams[0].getvalue().decode(), streams[1].getvalue().decode()
    return Result(code, out, err)


def test_pull_and_push_spans_carry_the_sync_counts(tmp_path, seaweedfs, exporter):
    repo = init_repo(tmp_path / "a")
    ok(repo, "datastore", "setup", *s3_setup_args(seaweedfs))
    ok(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello")
    r = traced(repo, "model", "method", "run", "hello", "execute")
    assert r.code == 0, r
    spans = {}
    for s in exporter.get_finished_spans():
        spans.setdefault(s.name, []).append(s)
    [session] = spans["swamp.session"]
    [pull] = spans["swamp.sync.pull"]
    [push] = spans["swamp.sync.push"]
    assert pull.parent.span_id == session.context.span_id == push.parent.span_id
    reported = r.data["sync"]
    assert pull.attributes["swamp.requests"] + push.attributes["swamp.requests"] == reported["requests"]
    assert push.attributes["swamp.bytes_pushed"] == reported["bytesPushed"] > 0
    assert push.attributes["swamp.files_pushed"] == reported["filesPushed"] > 0
    assert pull.attributes["swamp.requests"] >= 1
    assert push.attributes["swamp.command"] == "model method run hello execute"

    exporter.clear()
    r = traced(repo, "datastore", "sync")
    assert r.code == 0, r
    [sync] = [s for s in exporter.get_finished_spans() if s.name == "swamp.sync"]
    assert sync.attributes["swamp.pull"] is True and sync.attributes["swamp.push"] is True
    assert sync.attributes["swamp.requests"] >= 1


def test_a_datastore_that_is_down_is_a_failed_span_and_a_clear_error(tmp_path, seaweedfs, exporter):
    from tests.fixtures.servers import free_port

    repo = init_repo(tmp_path / "a")
    ok(repo, "datastore", "setup", *s3_setup_args(seaweedfs))
    ok(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello")
    cfg = (repo / ".swamp.yaml").read_text()
    (repo / ".swamp.yaml").write_text(cfg.replace(seaweedfs.endpoints[0], f"http://127.0.0.1:{free_port()}"))
    r = traced(repo, "data", "list", "hello")
    assert r.code != 0
    assert r.error["code"]
    [command] = [s for s in exporter.get_finished_spans() if s.name == "swamp data list"]
    assert command.status.status_code.name == "ERROR"
    failed = [s for s in exporter.get_finished_spans() if s.name == "swamp.sync.pull"]
    assert failed and failed[0].status.status_code.name == "ERROR"
