"""Durable before recorded: a pull fsyncs every file it writes and, once per
batch, every directory that gained an entry (new directories' parents too),
all before the state records the files (S6)."""

from __future__ import annotations

import os
from pathlib import Path

from swamp.datastore.sync.state import SyncState
from swamp.util import atomic
from swamp.util.atomic import DurableBatch

from .conftest import delete, write


def test_batch_fsyncs_each_touched_directory_once(tmp_path: Path):
    (tmp_path / "old").mkdir()
    batch = DurableBatch()
    for i in range(20):
        batch.write(tmp_path / "new" / "deep" / f"{i}", f"{i}".encode())
        batch.write(tmp_path / "old" / f"{i}", b"x")
    st = batch.write(tmp_path / "old" / "0", b"replaced")
    assert (tmp_path / "old" / "0").read_bytes() == b"replaced"
    assert os.stat(tmp_path / "old" / "0").st_ino == st.st_ino
    seen: list[Path] = []
    assert batch.sync(lambda fn, dirs: seen.extend(dirs) or []) == 4
    assert sorted(seen) == sorted({tmp_path, tmp_path / "new", tmp_path / "new" / "deep", tmp_path / "old"})
    assert batch.sync() == 0
    assert not [p for p in tmp_path.rglob(".tmp-*")]


def test_pull_makes_files_and_directories_durable_before_recording_them(make_peer, monkeypatch):
    a, b = make_peer("a"), make_peer("b")
    write(a, "files/gone/x", b"to be deleted")
    a.push()
    b.pull()
    rels = [f"files/{d}/{i}" for d in ("p", "q", "r/s") for i in range(20)]
    for rel in rels:
        write(a, rel, rel.encode())
    delete(a, "files/gone/x")
    a.push()

    events: list[tuple[str, object]] = []
    real_fsync, real_set_head = os.fsync, SyncState.set_head
    monkeypatch.setattr(atomic, "_FSYNC", True)
    monkeypatch.setattr(os, "fsync", lambda fd: (events.append(("file", fd)), real_fsync(fd))[1])
    monkeypatch.setattr(atomic, "fsync_dir", lambda d: events.append(("dir", Path(d))))
    monkeypatch.setattr(SyncState, "set_head", lambda self, seq: (events.append(("head", seq)),
                                                                   real_set_head(self, seq))[1])
    counts = b.pull()
    assert counts.filesPulled == len(rels) and counts.filesDeleted == 1

    kinds = [k for k, _ in events]
    assert kinds[-1] == "head" and kinds.count("head") == 1, "everything durable before the head moves"
    assert kinds.count("file") == len(rels)
    dirs = [d for k, d in events if k == "dir"]
    root = b.root / "files"
    # each once: the three leaf directories, the parents of the new ones, and
    # the one that lost files/gone (pruned once empty)
    assert sorted(dirs) == sorted({root, root / "p", root / "q", root / "r", root / "r" / "s"})
