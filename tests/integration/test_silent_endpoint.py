"""An object store endpoint that accepts connections and never answers (a
hung gateway, a firewall that swallows packets after the handshake): every
command that needs it ends within a bounded time with an error that names
the endpoint and the timeout, and says on stderr that it is trying again.
Before the fix `doctor datastores` sat silent for 152 s."""

from __future__ import annotations

import socket
import threading
from pathlib import Path
from typing import Iterator

import pytest

from swamp.datastore.objectstore.base import TransientError
from swamp.datastore.objectstore.gcs import GCSObjectStore
from swamp.datastore.objectstore.s3 import S3ObjectStore
from tests.helpers import cli, init_repo

AWS = {"AWS_ACCESS_KEY_ID": "silent-test", "AWS_SECRET_ACCESS_KEY": "silent-test"}


@pytest.fixture
def silent_endpoint() -> Iterator[str]:
    """http://127.0.0.1:PORT: accepts every connection, reads nothing, says nothing."""
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    server.close()
    for conn in held:
        conn.close()


def _repo_on(tmp_path: Path, endpoint: str, extra: str = "") -> Path:
    repo = init_repo(tmp_path / "repo")
    with open(repo / ".swamp.yaml", "a") as f:
        f.write(f"datastore:\n  type: s3\n  bucket: quiet\n  endpointUrl: {endpoint}\n  region: us-east-1\n{extra}")
    return repo


@pytest.mark.slow
def test_doctor_datastores_ends_within_the_default_timeout_naming_the_endpoint(tmp_path, silent_endpoint):
    repo = _repo_on(tmp_path, silent_endpoint)
    result = cli(repo, "doctor", "datastores", json=False, env=AWS, timeout=110)
    assert result.code == 1, result
    assert f"s3://quiet at {silent_endpoint} did not answer within 5 s" in result.stdout, result
    assert "trying again (2 of at most 3)" in result.stderr, result


def test_a_sync_fails_with_the_endpoint_named_and_the_configured_timeout(tmp_path, silent_endpoint):
    repo = _repo_on(tmp_path, silent_endpoint, "  networkTimeout: 1\n")
    result = cli(repo, "datastore", "sync", env=AWS, timeout=50)
    assert result.code != 0, result
    lines = result.stderr.strip().splitlines()
    assert sum("trying again" in line for line in lines) == 2, result
    error = last_json_error(lines[-1])
    assert error["code"] == "no_answer"
    assert error["error"].startswith(f"s3://quiet at {silent_endpoint} did not answer within 1 s"), error
    assert "networkTimeout" in error["hint"]


def last_json_error(line: str) -> dict:
    import json

    doc = json.loads(line)
    assert set(doc) <= {"error", "code", "hint"}, doc
    return doc


def test_an_s3_store_gives_up_on_a_silent_endpoint_at_every_kind_of_request(tmp_path, silent_endpoint,
                                                                           monkeypatch):
    for name, value in AWS.items():
        monkeypatch.setenv(name, value)
    store = S3ObjectStore("quiet", endpoint_url=silent_endpoint, region="us-east-1", response_timeout_s=1)
    small = tmp_path / "small"
    small.write_bytes(b"x" * 1000)
    for request in (lambda: store.head("k"), lambda: store.get("k"), lambda: store.put("k", b"v"),
                    lambda: list(store.list("p/")), lambda: store.put_file("k", small),
                    lambda: store.get_file("k", tmp_path / "dest", size_hint=1000)):
        with pytest.raises(TransientError, match=f"at {silent_endpoint} did not answer within 1 s") as caught:
            request()
        assert caught.value.code == "no_answer"


def test_a_gcs_store_gives_up_on_a_silent_endpoint(silent_endpoint):
    store = GCSObjectStore("quiet", endpoint_url=silent_endpoint, response_timeout_s=1)
    with pytest.raises(TransientError, match=f"gs://quiet at {silent_endpoint} did not answer within 1 s") as caught:
        store.head("k")
    assert caught.value.code == "no_answer"
