"""The test servers' own start-up: a port found free but taken by another
process before `weed mini` binds it (other test processes start servers
too) makes the fixture start it again on other ports, instead of failing
every test of the session."""

from __future__ import annotations

import socket

import pytest

from tests.fixtures import servers


@pytest.mark.s3
def test_weed_mini_starts_on_other_ports_when_one_is_taken(tmp_path, monkeypatch):
    blocker = socket.socket()
    blocker.bind(("127.0.0.1", 0))
    blocker.listen()
    taken, real, calls = blocker.getsockname()[1], servers.free_port, []

    def free_port() -> int:
        calls.append(1)
        return taken if len(calls) == 3 else real()  # the first attempt's volume port is in use

    monkeypatch.setattr(servers, "free_port", free_port)
    server = servers.start_seaweed_mini(tmp_path / "weed")
    try:
        server.store("p").put("k", b"v")
        assert (tmp_path / "weed" / "retry-1").is_dir()  # the first attempt failed, the second serves
        assert str(taken) not in server.endpoint_url
    finally:
        servers.stop_processes(server.processes)
        blocker.close()
