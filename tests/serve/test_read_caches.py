"""What swamp serve keeps between reads so that a read is quick (a model's
definition found by name, the grants directory's listing, one pull shared
by the reads that arrive together) never hides a change from the next
read: a version a CLI process wrote, a definition removed, a grant edited,
added or removed, a peer's push.

The files are aged first (their timestamps set back a minute): a stamp
younger than two seconds is not trusted (util/file_stamps.py), so without
this every read would walk again and the caches would not be exercised."""

from __future__ import annotations

import os
import shutil
import time

import pytest

from tests.helpers import init_repo, ok, run_hello, s3_setup_args
from tests.serve.server import Serve, mint_token


def age(*roots) -> None:
    """Set every file and directory under ``roots`` a minute back."""
    then = time.time() - 60
    for root in roots:
        for dirpath, _, files in os.walk(root):
            for p in [dirpath, *(os.path.join(dirpath, f) for f in files)]:
                os.utime(p, (then, then))


def hello_repo(path):
    repo = init_repo(path)
    ok(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hi")
    run_hello(repo, "one")
    return repo


def latest(server: Serve, **kw) -> int:
    r = server.get("/api/v1/data/hello/result?content=false", **kw)
    assert r.status == 200, r
    return r.doc["version"]


def test_a_version_a_cli_process_writes_is_served_by_the_next_read(tmp_path):
    repo = hello_repo(tmp_path / "repo")
    age(repo / "models")
    server = Serve(repo)
    try:
        assert latest(server) == 1
        assert latest(server) == 1  # the second from what the first found
        run_hello(repo, "two")
        assert latest(server) == 2
        run_hello(repo, "three")
        assert server.get("/api/v1/data/hello/result").doc["version"] == 3
        age(repo / ".swamp")  # the versions' metadata settled: kept parsed from now on
        assert latest(server) == 3
        ok(repo, "data", "delete", "hello", "result", "--version", "3", "-y")
        assert latest(server) == 2
        r = server.get("/api/v1/data/hello/result?version=3")
        assert r.status == 404 and r.error["code"] == "not_found", r
    finally:
        server.stop()


def test_a_versions_metadata_rewritten_in_place_is_read_again(tmp_path):
    from swamp.data import metadata_cache
    from swamp.datastore.filesystem import FilesystemDatastore

    ds = FilesystemDatastore(tmp_path)
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "metadata.yaml").write_text("name: one\n")
    age(tmp_path)
    parse = lambda text: {"text": text, "tags": {}}  # noqa: E731
    first = metadata_cache.read(ds, "m/metadata.yaml", parse)
    first["tags"]["changed"] = "by the caller"  # the caller's own copy
    assert metadata_cache.read(ds, "m/metadata.yaml", parse) == {"text": "name: one\n", "tags": {}}
    (tmp_path / "m" / "metadata.yaml").write_text("name: two\n")
    assert metadata_cache.read(ds, "m/metadata.yaml", parse)["text"] == "name: two\n"
    (tmp_path / "m" / "metadata.yaml").unlink()
    with pytest.raises(Exception, match="not found"):
        metadata_cache.read(ds, "m/metadata.yaml", parse)


def test_a_definition_removed_or_moved_is_seen_by_the_next_read(tmp_path):
    repo = hello_repo(tmp_path / "repo")
    age(repo / "models")
    server = Serve(repo)
    try:
        assert latest(server) == 1
        [found] = list((repo / "models").rglob("hello.yaml"))
        kept = tmp_path / "hello.yaml"
        shutil.move(found, kept)
        r = server.get("/api/v1/data/hello/result")
        assert r.status == 404 and r.error["code"] == "not_found", r
        # Back, but in another folder of models/ with a new id: another model's data (none yet).
        moved = repo / "models" / "elsewhere" / "hello.yaml"
        moved.parent.mkdir()
        text = kept.read_text()
        old_id = next(line for line in text.splitlines() if line.startswith("id:"))
        moved.write_text(text.replace(old_id, "id: 0b0b0b0b-0000-4000-8000-000000000001"))
        r = server.get("/api/v1/data/hello/result")
        assert r.status == 404 and "result" in r.error["error"], r
        moved.write_text(text)  # edited in place: its own id again
        assert latest(server) == 1
    finally:
        server.stop()


ALLOW = """grants:
  - subjects: ["token:reader"]
    actions: [read]
    resources: ["data:hello/*"]
"""
DENY = """grants:
  - subjects: ["token:reader"]
    effect: deny
    actions: [read]
    resources: ["data:hello/*"]
"""


def test_a_grant_edited_removed_or_added_is_honoured_by_the_next_request(tmp_path):
    repo = hello_repo(tmp_path / "repo")
    token = mint_token(repo, "reader")
    grants = repo / "grants"
    grants.mkdir()
    (grants / "readers.yaml").write_text(ALLOW)
    age(repo / "models", grants)
    server = Serve(repo, "--auth-mode", "token")
    try:
        assert latest(server, token=token) == 1
        assert latest(server, token=token) == 1
        (grants / "readers.yaml").write_text(DENY)  # edited in place
        r = server.get("/api/v1/data/hello/result", token=token)
        assert r.status == 403 and r.error["code"] == "forbidden", r
        (grants / "readers.yaml").write_text(ALLOW)
        assert latest(server, token=token) == 1
        (grants / "readers.yaml").unlink()  # removed: nothing is allowed without a grant
        assert server.get("/api/v1/data/hello/result", token=token).status == 403
        (grants / "more.yml").write_text(ALLOW)  # a new file
        assert latest(server, token=token) == 1
        age(grants)
        assert latest(server, token=token) == 1  # settled, then kept
        (grants / "zz-deny.yaml").write_text(DENY)  # a second file beside a remembered listing
        assert server.get("/api/v1/data/hello/result", token=token).status == 403
        assert server.get("/api/v1/data/hello/result").status == 401  # and no token is still no token
    finally:
        server.stop()


@pytest.mark.s3
def test_a_peers_push_is_served_by_the_next_read_on_a_shared_datastore(tmp_path, seaweedfs):
    setup = s3_setup_args(seaweedfs)
    a = hello_repo(tmp_path / "a")
    ok(a, "datastore", "setup", *setup)
    b = init_repo(tmp_path / "b")
    shutil.copytree(a / "models", b / "models", dirs_exist_ok=True)
    ok(b, "datastore", "setup", *setup)
    age(a / "models")
    server = Serve(a)
    try:
        assert latest(server) == 1
        run_hello(b, "two")  # published by the peer
        assert latest(server) == 2
        run_hello(b, "three")
        assert latest(server) == 3
    finally:
        server.stop()
