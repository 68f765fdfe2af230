"""Managed config: an edit publishes only over the version it started from
(docs/managed-config.md "Changing managed documents"). Peers on one
in-memory store, built in this process (tests/review/shared.py), so a test
can stop while the editor is open."""

from __future__ import annotations

import pytest

from swamp.datastore.objectstore.memory import MemoryObjectStore
from tests.review.shared import shared_repo


def _managed(repo):
    from swamp.app.managed_config import attach

    config = repo.config_model()
    config.managedConfig = True
    repo.save_config(config)
    return attach(repo)


@pytest.fixture
def peers(tmp_path):
    from swamp.app import managed_config

    store = MemoryObjectStore()
    made = [_managed(shared_repo(tmp_path / n, store, n)) for n in ("a", "b", "fresh")]
    managed_config.create_model(made[0], "command/shell", "hello", {"run": "echo one"})
    yield made
    for r in made:
        r.datastore.engine.close()


def _doc(repo):
    return next((repo.datastore.root / "models").rglob("hello.yaml"))


def _b_changes_it(b, text: str) -> None:
    from swamp.app import managed_config

    b.datastore.sync()
    path = _doc(b)
    path.write_text(path.read_text().replace("echo one", text))
    managed_config.publish_edit(b, "model", "hello", path)


def _published(fresh) -> str:
    fresh.datastore.sync()
    return _doc(fresh).read_text()


def test_a_peer_version_pulled_under_the_editor_keeps_the_edit_aside(peers):
    from swamp.app import datastore_conflicts, managed_config
    from swamp.errors import ConflictError

    a, b, fresh = peers
    path = _doc(a)

    def editor(copy):
        assert copy.parent != path.parent  # a private copy, outside the synced tree
        _b_changes_it(b, "echo two (b)")
        a.datastore.sync()  # another command on a pulls while the editor is open
        copy.write_text(copy.read_text() + "tags:\n  owner: a\n")

    with pytest.raises(ConflictError) as e:
        managed_config.edit_privately(a, path, editor)
    assert "conflicts restore" in e.value.hint
    assert "echo two (b)" in path.read_text()  # the peer's version stays in place
    kept = datastore_conflicts.list_conflicts(a)
    assert [k["path"] for k in kept] == [path.relative_to(a.datastore.root).as_posix()]
    ours = (a.datastore.root / kept[0]["copy"]).read_text()
    assert "owner: a" in ours and "echo one" in ours
    assert "echo two (b)" in _published(fresh)


def test_an_edit_started_after_pulling_a_peers_version_is_published(peers):
    from swamp.app import managed_config

    a, b, fresh = peers
    _b_changes_it(b, "echo two (b)")
    a.datastore.sync()
    path = _doc(a)
    managed_config.edit_privately(a, path, lambda copy: copy.write_text(copy.read_text() + "tags:\n  owner: a\n"))
    managed_config.publish_edit(a, "model", "hello", path)
    text = _published(fresh)
    assert "echo two (b)" in text and "owner: a" in text


def test_an_in_place_edit_made_on_an_older_version_is_kept_aside_and_theirs_put_back(peers):
    from swamp.app import datastore_conflicts, managed_config
    from swamp.errors import ConflictError

    a, b, fresh = peers
    path = _doc(a)
    buffer = path.read_text()
    _b_changes_it(b, "echo two (b)")
    a.datastore.sync()
    path.write_text(buffer + "tags:\n  owner: a\n")  # by hand, from the old version
    with pytest.raises(ConflictError):
        managed_config.publish(a)
    assert "echo two (b)" in path.read_text()  # the committed version is back in place
    kept = datastore_conflicts.list_conflicts(a)
    assert len(kept) == 1 and "owner: a" in (a.datastore.root / kept[0]["copy"]).read_text()
    assert "echo two (b)" in _published(fresh)
    # the next edit in place starts from the version now on disk: published
    path.write_text(path.read_text() + "tags:\n  owner: a\n")
    assert managed_config.publish(a)["published"] == 1
    assert "owner: a" in _published(fresh)


def test_an_editor_that_fails_after_writing_keeps_what_it_wrote(peers):
    from swamp.app import managed_config
    from swamp.errors import SwampError

    a, _b, _fresh = peers
    path = _doc(a)
    before = path.read_text()

    def editor(copy):
        copy.write_text(before + "tags:\n  owner: a\n")
        raise RuntimeError("editor exited with 1")

    with pytest.raises(SwampError) as e:
        managed_config.edit_privately(a, path, editor)
    kept = e.value.hint.split(" is in ")[1]
    assert "owner: a" in open(kept).read() and path.read_text() == before
    import shutil
    from pathlib import Path

    shutil.rmtree(Path(kept).parent)
