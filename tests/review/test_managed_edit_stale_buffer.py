"""Review (round after e212c4b): under managed config a peer's change to a
document is never silently overwritten ("a peer's change to this same
document is a conflict that keeps both copies", app/managed_config.py
`publish_edit`).

Hole: `swamp model|workflow|vault edit` opens the cache's own file in
$EDITOR (click.edit on .swamp/models/...), and only afterwards opens the
session that publishes it. Any other swamp command on the same checkout
while the editor is open (every command pulls before it first reads the
config tier) finds the file equal to its base and replaces it with the
peer's version; the editor then writes back its buffer, made from the old
version. That file now simply differs from the new base, so the edit
session's pull sees no conflict and its push publishes the old version
plus this edit over the peer's change, without a word."""

from __future__ import annotations

from swamp.datastore.objectstore.memory import MemoryObjectStore
from tests.review.shared import shared_repo


def _managed(repo):
    from swamp.app.managed_config import attach

    config = repo.config_model()
    config.managedConfig = True
    repo.save_config(config)
    return attach(repo)


def test_an_edit_started_before_a_peers_change_never_publishes_over_it(tmp_path):
    from swamp.app import managed_config
    from swamp.errors import ConflictError

    store = MemoryObjectStore()
    a = _managed(shared_repo(tmp_path / "a", store, "a"))
    b = _managed(shared_repo(tmp_path / "b", store, "b"))
    fresh = _managed(shared_repo(tmp_path / "fresh", store, "fresh"))
    try:
        managed_config.create_model(a, "command/shell", "hello", {"run": "echo one"})
        path_a = next((a.datastore.root / "models").rglob("hello.yaml"))
        rel = path_a.relative_to(a.datastore.root).as_posix()

        buffer = path_a.read_text()  # a: `swamp model edit hello` opens $EDITOR on the cache's file

        b.datastore.sync()  # b changes the same definition and publishes it
        path_b = b.datastore.root / rel
        path_b.write_text(path_b.read_text().replace("echo one", "echo two (b)"))
        managed_config.publish_edit(b, "model", "hello", path_b)

        a.datastore.sync()  # another command in a's second terminal pulls: b's version lands under the editor
        assert "echo two (b)" in path_a.read_text()

        path_a.write_text(buffer + "tags:\n  owner: a\n")  # the editor writes back its buffer, plus a's edit
        try:
            managed_config.publish_edit(a, "model", "hello", path_a)
        except ConflictError:
            return  # named, both kept: fine
        fresh.datastore.sync()
        assert "echo two (b)" in (fresh.datastore.root / rel).read_text(), "b's change was overwritten"
    finally:
        for r in (a, b, fresh):
            r.datastore.engine.close()
