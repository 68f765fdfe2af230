"""Version numbers: allocated max+1, never reused, latest = highest."""

from __future__ import annotations

import pytest

from swamp.data.repository import DataRepository
from swamp.datastore.filesystem import FilesystemDatastore
from swamp.errors import NotFoundError

TYPE, MID = "acme/thing", "6b3e2e54-f631-4d36-a190-196abd4dddf4"


def meta(name: str) -> dict:
    return {"id": "x", "name": name, "specName": "s", "kind": "resource", "contentType": "application/json",
            "lifetime": "infinite", "createdAt": "2026-11-30T00:00:00.000Z",
            "owner": {"definitionId": MID, "definitionName": "m", "modelType": TYPE}}


@pytest.fixture
def repo(tmp_path):
    return DataRepository(FilesystemDatastore(tmp_path))


def write(repo, name="n", body=b"{}"):
    return repo.write(TYPE, MID, meta(name), body).meta.version


def test_deleting_the_newest_version_never_frees_its_number(repo):
    assert [write(repo) for _ in range(3)] == [1, 2, 3]
    repo.delete(TYPE, MID, "n", 3)
    assert repo.latest_version(TYPE, MID, "n") == 2
    assert write(repo) == 4


def test_deleting_every_version_keeps_the_numbering(repo):
    for _ in range(3):
        write(repo)
    assert repo.delete(TYPE, MID, "n") == [1, 2, 3]
    with pytest.raises(NotFoundError):
        repo.get(TYPE, MID, "n")
    assert repo.versions(TYPE, MID, "n") == []
    assert write(repo) == 4


def test_an_incomplete_version_is_invisible_and_skipped(repo):
    write(repo)
    repo.allocate(TYPE, MID, "n")  # a writer killed before its metadata
    assert repo.latest_version(TYPE, MID, "n") == 1
    assert write(repo) == 3


def test_latest_is_the_highest_directory_not_a_marker(repo, tmp_path):
    for _ in range(2):
        write(repo)
    (tmp_path / "data" / TYPE / MID / "n" / "latest").write_text("1")  # a stale marker from elsewhere
    assert repo.get(TYPE, MID, "n").meta.version == 2


def test_the_latest_hint_never_wins_over_the_tree(repo, tmp_path, monkeypatch):
    from swamp.data import latest_hint

    monkeypatch.setattr(latest_hint, "SETTLED_S", 0.0)  # trust hints at once, the worst case
    for _ in range(3):
        write(repo)
    assert repo.latest_version(TYPE, MID, "n") == 3  # writes the hint
    hint = next((tmp_path / "cache" / "latest").rglob("n"))
    assert hint.read_text().split()[1] == "3"
    write(repo)  # a new version directory: the stamp no longer matches
    assert repo.latest_version(TYPE, MID, "n") == 4
    repo.delete(TYPE, MID, "n", 4)  # the top is now a tombstone, not complete
    assert repo.latest_version(TYPE, MID, "n") == 3
    hint.write_text("1 999")  # garbage from elsewhere
    assert repo.latest_version(TYPE, MID, "n") == 3


def test_a_long_lived_process_reads_a_names_hint_file_once(repo, tmp_path, monkeypatch):
    """serve finds the latest version on every read: the hint it read (or
    wrote) is remembered under the same stamp rule, and the tree still wins."""
    from pathlib import Path

    from swamp.data import latest_hint

    monkeypatch.setattr(latest_hint, "SETTLED_S", 0.0)
    monkeypatch.setattr(latest_hint, "_remembered", {})
    for _ in range(3):
        write(repo)
    assert repo.latest_version(TYPE, MID, "n") == 3  # lists the tree once, writes the hint
    hint = next((tmp_path / "cache" / "latest").rglob("n"))
    opened: list[Path] = []
    real = Path.read_text
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: opened.append(self) or real(self, *a, **k))
    assert [repo.latest_version(TYPE, MID, "n") for _ in range(5)] == [3] * 5
    assert hint not in opened
    hint.unlink()  # a cache cleared by another process: nothing to re-read, the answer stands
    assert repo.latest_version(TYPE, MID, "n") == 3
    write(repo)  # a new version: the name's stamp moved, the remembered hint no longer counts
    assert repo.latest_version(TYPE, MID, "n") == 4
    repo.delete(TYPE, MID, "n", 4)  # a tombstone at the top: not complete, whatever is remembered
    assert repo.latest_version(TYPE, MID, "n") == 3
