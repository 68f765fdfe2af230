"""What one client can hold of the server (p5, p12, p10): a half-sent
request is dropped after --header-timeout, a body trickled in after
--body-timeout; more slow connections than --max-connections do not keep
a quick request out; reads are answered while every run thread is busy;
one caller has at most 8 runs at once by default; nested JSON and a bad
expression are 400s with an audit line."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from tests.helpers import cli, init_repo
from tests.serve.server import Serve
from tests.serve.test_front_door import audit_codes


def shell_models(repo, count: int) -> None:
    folder = repo / "models" / "command" / "shell"
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        (folder / f"slow{i}.yaml").write_text(f"type: command/shell\nname: slow{i}\nglobalArguments:\n"
                                             "  run: 'echo hello'\n")


def closed_by_server(sock: socket.socket, within: float = 60) -> bytes | None:
    """What the server sent before closing, or None if it kept the connection."""
    sock.settimeout(1)
    got, deadline = b"", time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(4096)
        except socket.timeout:
            continue
        except OSError:
            return got
        if not chunk:
            return got
        got += chunk
    return None


@pytest.fixture(scope="module")
def bounded(tmp_path_factory):
    repo = init_repo(tmp_path_factory.mktemp("limits") / "repo")
    assert cli(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello").code == 0
    server = Serve(repo, "--header-timeout", "1", "--body-timeout", "1", "--max-connections", "40")
    yield server
    server.stop()


def test_a_half_sent_request_is_dropped(bounded):
    s = socket.create_connection(("127.0.0.1", bounded.port))
    s.sendall(f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{bounded.port}\r\n".encode())
    got = closed_by_server(s)
    s.close()
    assert got is not None, "the server kept a half-sent request"
    assert got.startswith(b"HTTP/1.1 408")


def test_a_connection_that_sends_nothing_is_dropped(bounded):
    s = socket.create_connection(("127.0.0.1", bounded.port))
    assert closed_by_server(s) is not None
    s.close()


def test_a_body_trickled_in_is_dropped_and_audited(bounded):
    s = socket.create_connection(("127.0.0.1", bounded.port))
    s.sendall(f"POST /api/v1/data/query HTTP/1.1\r\nHost: 127.0.0.1:{bounded.port}\r\n"
              "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{".encode())
    sent = 0
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            s.sendall(b" ")
            sent += 1
        except OSError:
            break
        time.sleep(0.2)
    s.close()
    assert time.monotonic() < deadline, "the server kept reading a body sent a byte at a time"
    assert "timeout" in audit_codes(bounded.repo)


def test_many_slow_connections_do_not_keep_a_quick_request_out(bounded):
    slow = []
    for _ in range(100):  # more than --max-connections 40
        c = socket.create_connection(("127.0.0.1", bounded.port))
        c.sendall(f"POST /api/v1/data/query HTTP/1.1\r\nHost: 127.0.0.1:{bounded.port}\r\n".encode())
        slow.append(c)
    try:
        assert bounded.get("/health").status == 200
    finally:
        for c in slow:
            c.close()


def test_many_slowly_sent_bodies_do_not_keep_a_quick_request_out(bounded):
    slow = []
    for _ in range(100):
        c = socket.create_connection(("127.0.0.1", bounded.port))
        c.sendall(f"POST /api/v1/data/query HTTP/1.1\r\nHost: 127.0.0.1:{bounded.port}\r\n"
                  "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{".encode())
        slow.append(c)
    try:
        assert bounded.get("/health").status == 200
    finally:
        for c in slow:
            c.close()


def test_deeply_nested_json_is_a_400_with_an_audit_line(bounded):
    deep = ('{"inputs": {"a": ' + "[" * 100000 + "]" * 100000 + "}}").encode()
    reply = bounded.request("POST", "/api/v1/models/hello/methods/execute/run", raw=deep)
    assert (reply.status, reply.error["code"]) == (400, "validation")
    assert "nests" in reply.error["error"]
    moderately = ('{"inputs": {"a": ' + "[" * 70 + "]" * 70 + "}}").encode()
    assert bounded.request("POST", "/api/v1/models/hello/methods/execute/run", raw=moderately).status == 400
    assert audit_codes(bounded.repo).count("validation") >= 2


def test_an_invalid_expression_is_a_400_with_an_audit_line(bounded):
    reply = bounded.post("/api/v1/data/query", {"predicate": "(" * 5000 + "true" + ")" * 5000})
    assert (reply.status, reply.error["code"]) == (400, "expression"), reply
    reply = bounded.post("/api/v1/data/query", {"predicate": "name == "})
    assert (reply.status, reply.error["code"]) == (400, "expression"), reply
    assert audit_codes(bounded.repo).count("expression") >= 2


# --------------------------------------------------------- runs and reads
def _start_runs(server: Serve, count: int, seconds: int) -> list[threading.Thread]:
    threads = [threading.Thread(target=server.run_method, args=(f"slow{i}", "execute", {"run": f"sleep {seconds}"}),
                                kwargs={"timeout": 300}, daemon=True) for i in range(count)]
    for t in threads:
        t.start()
    return threads


def _wait_inflight(server: Serve, want: int) -> int:
    seen = 0
    for _ in range(240):
        seen = server.get("/health").doc["inflight"]
        if seen >= want:
            break
        time.sleep(0.25)
    return seen


@pytest.mark.slow
def test_reads_are_answered_while_runs_take_more_threads_than_the_default_pool(tmp_path):
    repo = init_repo(tmp_path / "repo")
    shell_models(repo, 45)
    server = Serve(repo, "--max-runs-per-caller", "60", "--shutdown-timeout", "1")
    try:
        threads = _start_runs(server, 45, 20)  # anyio's default pool has 40 threads
        assert _wait_inflight(server, 45) >= 45, "45 runs did not all get a thread"
        read = server.get("/api/v1/models/slow0")
        assert read.status == 200 and read.doc["name"] == "slow0"
        assert server.get("/health").doc["inflight"] >= 45  # the read did not wait for a run to end
    finally:
        server.stop()
    for t in threads:
        t.join(60)


@pytest.mark.slow
def test_one_caller_has_at_most_8_runs_at_once_by_default(tmp_path):
    repo = init_repo(tmp_path / "repo")
    shell_models(repo, 9)
    server = Serve(repo, "--shutdown-timeout", "1")
    try:
        threads = _start_runs(server, 8, 20)
        assert _wait_inflight(server, 8) >= 8
        ninth = server.run_method("slow8", "execute", {"run": "echo one more"})
        assert (ninth.status, ninth.error["code"]) == (429, "too_many_runs")
        assert "8 per caller" in ninth.error["error"]
    finally:
        server.stop()
    for t in threads:
        t.join(60)
