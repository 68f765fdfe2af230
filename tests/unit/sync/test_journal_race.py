"""The dirty-path journal append cannot be lost to a push in another process
(issue 9 item 2, repro f): an append is open, then write, and a push may take
the journal (rename aside, read, delete) between the two."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from swamp.datastore.objectstore.local import LocalDirObjectStore
from swamp.datastore.sync import SyncEngine
from swamp.datastore.sync.journal import Journal

# A writer descheduled between opening the journal and writing its mark: it
# stops right after the open until the test lets it go on.
WRITER = '''
import os, sys, time
from pathlib import Path
from swamp.datastore.objectstore.local import LocalDirObjectStore
from swamp.datastore.sync import SyncEngine
from swamp.util.atomic import atomic_write

remote, root, gate = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
real_open, stalled = os.open, []

def open_then_stall(path, *args, **kw):
    fd = real_open(path, *args, **kw)
    if str(path).endswith("/.sync/dirty") and not stalled:
        stalled.append(path)
        print("opened", flush=True)
        while not gate.exists():
            time.sleep(0.01)
    return fd

os.open = open_then_stall
e = SyncEngine(LocalDirObjectStore(remote), root, peer="C")
e.mark_dirty("files/doc")
atomic_write(root / "files/doc", b"edited")
e.close()
print("written", flush=True)
'''

PUSH = '''
import sys
from swamp.datastore.objectstore.local import LocalDirObjectStore
from swamp.datastore.sync import SyncEngine

e = SyncEngine(LocalDirObjectStore(sys.argv[1]), sys.argv[2], peer="C")
print(e.push("sync").filesPushed, flush=True)
e.close()
'''


def _env():
    from tests.helpers import _env

    return _env()


def _push(remote: Path, root: Path) -> int:
    out = subprocess.run([sys.executable, "-c", PUSH, str(remote), str(root)], capture_output=True, text=True,
                         env=_env(), timeout=60)
    assert out.returncode == 0, out.stderr
    return int(out.stdout)


def test_an_edit_marked_while_another_process_pushes_is_published(tmp_path):
    remote, cache, gate = tmp_path / "remote", tmp_path / "C", tmp_path / "gate"
    (cache / "files").mkdir(parents=True)
    (cache / "files/doc").write_bytes(b"v1")
    assert _push(remote, cache) == 1  # a full walk: the cache now trusts its journal

    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(remote), str(cache), str(gate)],
                              stdout=subprocess.PIPE, text=True, env=_env())
    try:
        assert writer.stdout.readline().strip() == "opened"
        assert _push(remote, cache) == 0  # takes the journal between the writer's open and its write
        gate.write_text("go")
        assert writer.stdout.readline().strip() == "written"
        assert writer.wait(timeout=60) == 0
    finally:
        writer.kill()
        writer.wait()

    with SyncEngine(LocalDirObjectStore(remote), cache, peer="C") as c:
        assert c.status()["dirtyFiles"] == ["files/doc"]
    assert _push(remote, cache) == 1
    with SyncEngine(LocalDirObjectStore(remote), tmp_path / "other", peer="other") as other:
        other.pull()
        assert (other.root / "files/doc").read_bytes() == b"edited"


APPENDER = '''
import sys
from pathlib import Path
from swamp.datastore.sync.journal import Journal

j = Journal(Path(sys.argv[1]))
for n in range(int(sys.argv[3])):
    j.append(f"files/{sys.argv[2]}/{n}")
'''

CONSUMER = '''
import sys, time
from pathlib import Path
from swamp.datastore.sync.journal import Journal

j, stop = Journal(Path(sys.argv[1])), Path(sys.argv[2])
seen = set()
while True:
    last = stop.exists()
    taken = j.take()
    seen |= taken.paths
    j.done(taken)
    if last:
        break
print("\\n".join(sorted(seen)))
'''


def test_every_mark_of_racing_appenders_reaches_some_take(tmp_path):
    """Three processes append while a fourth takes and deletes the journal
    in a loop: every mark is read by exactly the takes, none is dropped."""
    sync_dir, stop = tmp_path / ".sync", tmp_path / "stop"
    sync_dir.mkdir()
    consumer = subprocess.Popen([sys.executable, "-c", CONSUMER, str(sync_dir), str(stop)],
                                stdout=subprocess.PIPE, text=True, env=_env())
    appenders = [subprocess.Popen([sys.executable, "-c", APPENDER, str(sync_dir), f"w{i}", "2000"], env=_env())
                 for i in range(3)]
    try:
        assert [a.wait(timeout=120) for a in appenders] == [0, 0, 0]
        stop.write_text("1")
        out, _ = consumer.communicate(timeout=60)
    finally:
        for p in (consumer, *appenders):
            p.kill()
            p.wait()
    seen = set(out.split())
    seen |= Journal(sync_dir).take().paths  # whatever the last take left
    assert seen == {f"files/w{i}/{n}" for i in range(3) for n in range(2000)}


def test_a_mark_that_never_lands_in_the_live_file_is_handed_over_whole(tmp_path, monkeypatch):
    """A writer whose every try was taken aside under it (a push loop racing
    a slow writer) still leaves its mark where the next take reads it."""
    j = Journal(tmp_path)
    monkeypatch.setattr(Journal, "_append_live", lambda self, line: False)
    j.append("files/slow")
    assert "files/slow" in j.peek().paths
    taken = j.take()
    assert taken.paths == {"files/slow"}
    j.done(taken)
    assert j.take().paths == set() and not list(tmp_path.glob("dirty.tmp-*"))
