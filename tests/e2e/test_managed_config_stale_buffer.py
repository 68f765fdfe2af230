"""Managed config, issue 24 N4 (repro config_publish_stale_buffer.sh): an
editor's buffer opened on a document before a pull replaced it with a
peer's version, then saved and published with `swamp datastore config
publish`, is a named conflict (a conflict copy, exit 1), never a silent
overwrite, also when this checkout never published that document. An edit
in place made on the version the pull brought is published as before.
Through the `swamp` command, peers on SeaweedFS."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import cli, init_repo, ok, s3_setup_args

pytestmark = [pytest.mark.slow, pytest.mark.s3]

DOC = Path(".swamp/models/command/shell/hello.yaml")


def _managed_peer(path: Path, setup: list[str]) -> Path:
    repo = init_repo(path)
    ok(repo, "datastore", "setup", *setup)
    ok(repo, "datastore", "config", "migrate")
    return repo


def _run_line(repo: Path) -> str:
    return ok(repo, "model", "get", "hello")["globalArguments"]["run"]


def _peers(tmp_path: Path, setup: list[str]) -> tuple[Path, Path]:
    a = _managed_peer(tmp_path / "a", setup)
    c = _managed_peer(tmp_path / "c", setup)
    ok(a, "model", "create", "command/shell", "hello", "--global-arg", "run=echo v1")
    assert _run_line(c) == "echo v1"  # c holds the document; it never published it
    return a, c


def _describe(text: str) -> str:
    """C's own change, a few lines away from the run line A changes."""
    assert "name: hello\n" in text
    return text.replace("name: hello\n", "name: hello\ndescription: edited by C\n")


def _peer_changes_run(a: Path) -> None:
    path = a / DOC
    path.write_text(path.read_text().replace("echo v1", "echo v2-from-A"))
    assert ok(a, "datastore", "config", "publish")["published"] == 1


@pytest.mark.parametrize("pulling", [["model", "search"], ["datastore", "sync"]])
def test_a_stale_editor_buffer_is_a_named_conflict_never_an_overwrite(tmp_path, seaweedfs, pulling):
    """C's editor opens hello (v1); A changes it and publishes; a command
    on C pulls A's version into the file; the editor saves its v1 buffer
    plus C's change. C's publish refuses it: exit 1 `conflict`, C's edit
    kept as a conflict copy, A's version put back, and every peer reads A's
    change. An edit C then makes on the current version is published."""
    setup = s3_setup_args(seaweedfs)
    a, c = _peers(tmp_path, setup)
    buffer = (c / DOC).read_text()  # the editor opens the file
    _peer_changes_run(a)
    ok(c, *pulling)  # replaces C's file with A's version (the editor still shows v1)
    assert "v2-from-A" in (c / DOC).read_text()
    (c / DOC).write_text(_describe(buffer))  # the editor saves
    r = cli(c, "datastore", "config", "publish")
    assert r.code == 1 and r.error["code"] == "conflict" and str(DOC.relative_to(".swamp")) in r.error["error"], r
    kept = ok(c, "datastore", "conflicts", "list")
    assert [k["path"] for k in kept] == [str(DOC.relative_to(".swamp"))]
    assert "edited by C" in (c / ".swamp" / kept[0]["copy"]).read_text()
    fresh = _managed_peer(tmp_path / "fresh", setup)
    assert _run_line(fresh) == _run_line(c) == _run_line(a) == "echo v2-from-A"

    # Now C edits the version on disk (A's): that edit was made on it, and goes out.
    (c / DOC).write_text(_describe((c / DOC).read_text()))
    assert ok(c, "datastore", "config", "publish")["published"] == 1
    got = ok(fresh, "model", "get", "hello")
    assert got["globalArguments"]["run"] == "echo v2-from-A" and got.get("description") == "edited by C", got


def test_an_edit_in_place_on_the_pulled_version_that_keeps_the_peers_lines_is_published(tmp_path, seaweedfs):
    """C's copy was pulled as v1; A changed the run line; C pulls, then
    edits in place another line: nothing of A's is undone nor touched, so
    it is published at once (no conflict), and both changes reach A."""
    a, c = _peers(tmp_path, s3_setup_args(seaweedfs))
    _peer_changes_run(a)
    assert _run_line(c) == "echo v2-from-A"
    (c / DOC).write_text(_describe((c / DOC).read_text()))
    assert ok(c, "datastore", "config", "publish")["published"] == 1
    got = ok(a, "model", "get", "hello")
    assert got["globalArguments"]["run"] == "echo v2-from-A" and got.get("description") == "edited by C", got

