"""`swamp serve --reuse-port`: replicas of one checkout share one port (Linux
SO_REUSEPORT), each process a core of its own; a server that did not ask to
share cannot take the port, and the replicas share the local user's token."""

from __future__ import annotations

import re
import socket
import time

import pytest

from tests.fixtures.servers import _spawn, free_port, stop_processes
from tests.helpers import PYTHON, _env, cli, init_repo, ok, run_hello
from tests.serve.server import Serve

pytestmark = pytest.mark.skipif(not hasattr(__import__("socket"), "SO_REUSEPORT"), reason="needs SO_REUSEPORT")


def replica_answering(server: Serve, other: str, limit_s: float = 60) -> str:
    """The replica id of a process on ``server``'s port other than ``other``
    (the one already serving): /health on new connections until one is
    answered by another process. The second replica's own wait for a 200
    may have been answered by the first, which shares the port, so only
    an answer naming another id proves the second one serves."""
    end = time.monotonic() + limit_s
    seen = set()
    while True:
        r = server.get("/health")
        if r.status == 200:
            seen.add(r.doc["replica"])
            if r.doc["replica"] != other:
                return r.doc["replica"]
        assert time.monotonic() < end, (f"no answer from a second replica on port {server.port} within "
                                        f"{limit_s} s: every /health was answered by {sorted(seen)}; see {server.log}")
        time.sleep(0.05)


class OnPort(Serve):
    """A Serve on a port chosen by the test (the helper picks a free one)."""

    def __init__(self, repo, port: int, *args: str, **kw) -> None:
        import tests.serve.server as server

        real = server.free_port
        server.free_port = lambda: port
        try:
            super().__init__(repo, *args, **kw)
        finally:
            server.free_port = real


def test_two_replicas_share_one_port_and_one_local_token_and_both_answer(tmp_path):
    repo = init_repo(tmp_path / "repo")
    ok(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hi")
    run_hello(repo, "one")
    port = free_port()
    first = OnPort(repo, port, "--reuse-port", default_auth=True)
    second = None
    try:
        token = first.local_token
        first_id = first.get("/health").doc["replica"]  # alone on the port: this is the first's
        second = OnPort(repo, port, "--reuse-port", default_auth=True)
        second_id = replica_answering(second, first_id)
        assert second.local_token == token  # one address, one token: whichever replica answers takes it
        for _ in range(20):  # new connections: the kernel spreads them over both processes
            r = first.get("/api/v1/data/hello/result?content=false", token=token)
            assert r.status == 200 and r.doc["version"] == 1, r
        assert first.get("/api/v1/data/hello/result").status == 401  # no token is still no token
        assert first.get("/api/v1/data/hello/result", token="local.wrong").status == 401
        first.stop()  # the port stays served, by the other replica
        assert second.get("/health").doc["replica"] == second_id
        run_hello(repo, "two")
        r = second.get("/api/v1/data/hello/result?content=false", token=token)
        assert r.status == 200 and r.doc["version"] == 2, r
    finally:
        for s in (second, first):
            if s is not None:
                s.stop()


def test_a_server_that_did_not_ask_to_share_cannot_take_the_port(tmp_path):
    repo = init_repo(tmp_path / "repo")
    port = free_port()
    first = OnPort(repo, port, "--reuse-port")
    try:
        log = tmp_path / "intruder.log"
        proc = _spawn([PYTHON, "-m", "swamp", "serve", "--port", str(port), "--auth-mode", "none",
                       "--repo-dir", str(repo)], log, env=_env({"XDG_CONFIG_HOME": str(tmp_path / "xdg")}))
        try:
            proc.wait(60)
        finally:
            stop_processes([proc])
        assert proc.returncode != 0
        assert "address already in use" in log.read_text()
        assert first.get("/health").status == 200
    finally:
        first.stop()


def test_reuse_port_needs_a_port(tmp_path):
    repo = init_repo(tmp_path / "repo")
    r = cli(repo, "serve", "--port", "0", "--reuse-port")
    assert r.code != 0
    assert r.error["code"] == "usage" and "--port" in r.error["error"], r


def test_the_replica_id_in_health_names_neither_the_pid_nor_the_host(tmp_path):
    """/health is open to anyone (docs/serve.md "Grants"): the id that tells
    replicas apart is random, and says nothing of the process."""
    repo = init_repo(tmp_path / "repo")
    server = OnPort(repo, free_port(), "--reuse-port", default_auth=True)
    try:
        doc = server.get("/health").doc  # no token: anyone may ask
        replica = doc["replica"]
        # a random UUID, not "<host>:<pid>" (the name its heartbeat lease has in the datastore)
        assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", replica), replica
        assert ":" not in replica and socket.gethostname() + ":" not in replica
        assert server.get("/health").doc["replica"] == replica  # one process, one id
        assert server.get("/api/v1/data/hello/result").status == 401  # the rest still needs a token
    finally:
        server.stop()
