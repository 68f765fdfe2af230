"""SyncEngine.on_progress: one call when a transfer phase starts, one after
each file, monotonic, ending at the totals; nothing when nothing moves."""

from __future__ import annotations

import threading

from swamp.datastore.sync import SyncEngine

from .conftest import delete, write

Call = tuple[str, int, int, int, int]


def record(e: SyncEngine) -> tuple[list[Call], set[str]]:
    calls: list[Call] = []
    threads: set[str] = set()

    def hook(*args: object) -> None:
        calls.append(args)  # type: ignore[arg-type]
        threads.add(threading.current_thread().name)

    e.on_progress = hook
    return calls, threads


def check_phase(calls: list[Call], phase: str, files: int, nbytes: int) -> None:
    assert calls, f"no {phase} progress at all"
    assert calls[0] == (phase, 0, files, 0, nbytes)
    assert calls[-1] == (phase, files, files, nbytes, nbytes)
    assert len(calls) == files + 1
    for before, after in zip(calls, calls[1:]):
        assert after[0] == phase and after[2] == files and after[4] == nbytes
        assert after[1] == before[1] + 1 and after[3] >= before[3]


# 40 files: some of the same content (sent and fetched once, counted each), one
# large enough to be read by a pool thread, the rest read ahead of the uploads.
CONTENTS = {f"files/{i:03d}": (b"same\n" if i % 10 == 0 else f"file {i}\n".encode() * (i + 1)) for i in range(39)}
CONTENTS["files/big"] = bytes(range(256)) * 1200  # 300 KiB


def test_push_then_pull_report_each_file(make_peer):
    a, b = make_peer("a"), make_peer("b")
    write(a, "files/old", b"to be deleted")
    a.push()
    b.pull()

    for rel, data in CONTENTS.items():
        write(a, rel, data)
    delete(a, "files/old")  # a delete transfers nothing: not in the upload phase
    calls, _ = record(a)
    pushed = a.push()
    assert pushed.filesPushed == len(CONTENTS) and pushed.filesDeleted == 1
    total = sum(map(len, CONTENTS.values()))
    check_phase(calls, "upload", len(CONTENTS), total)

    calls, threads = record(b)
    pulled = b.pull()
    assert pulled.filesPulled == len(CONTENTS) and pulled.filesDeleted == 1
    check_phase(calls, "download", len(CONTENTS), total)
    assert threads - {threading.current_thread().name}, "expected calls from the pool threads"


def test_nothing_to_transfer_means_no_calls(make_peer):
    a, b = make_peer("a"), make_peer("b")
    write(a, "files/x", b"x")
    a.push()
    b.pull()
    calls_a, _ = record(a)
    calls_b, _ = record(b)

    assert a.sync().requests == 1 and b.sync().requests == 1  # no-op syncs
    assert a.push().requests == 0
    delete(a, "files/x")
    a.push()  # only a delete
    b.pull()  # only a delete
    assert (b.root / "files/x").exists() is False
    assert calls_a == [] and calls_b == []


def test_a_push_after_a_pull_sends_nothing(make_peer):
    a, b = make_peer("a"), make_peer("b")
    for i in range(5):
        write(a, f"files/{i}", f"{i}".encode())
    a.push()
    calls, _ = record(b)
    b.pull()
    check_phase(calls, "download", 5, 5)
    calls.clear()
    assert b.push().filesPushed == 0
    assert calls == []
