"""One contract for every ObjectStore (SYNC.md "Backends"): the local
directory, memory, S3 on SeaweedFS (`weed mini`), GCS on fake-gcs-server, and
S3 on a SeaweedFS cluster where the second handle and half the racers go
through another gateway and filer.

Racing writers run in separate processes (memory: threads, it is not shared
between processes). SeaweedFS makes losers of a conditional race wait on a
filer lock that retries in ~1 s steps, so its races are kept small.
"""

from __future__ import annotations

import multiprocessing
import random
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest

from swamp.datastore.objectstore.base import ObjectMeta, ObjectStore
from swamp.datastore.objectstore.factory import open_store
from swamp.datastore.objectstore.local import LocalDirObjectStore
from swamp.datastore.objectstore.memory import MemoryObjectStore
from swamp.datastore.objectstore.probe import probe_conditional_writes
from swamp.errors import BackendRefused, ObjectNotFound, PreconditionFailed

RACERS = 4


@dataclass
class Backend:
    kind: str
    store: ObjectStore  # the writer
    other: ObjectStore  # a second handle onto the same objects (gateway B on the cluster)
    racers: list[dict[str, Any]] | list[ObjectStore]  # open_store configs, or shared stores for threads
    increments: int  # per racer, in the CAS counter test

    @property
    def threads(self) -> bool:
        return self.kind == "memory"


@pytest.fixture(params=[
    "local",
    "memory",
    pytest.param("s3", marks=pytest.mark.s3),
    pytest.param("gcs", marks=pytest.mark.gcs),
    pytest.param("s3-cluster", marks=[pytest.mark.s3, pytest.mark.slow]),
])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    kind = request.param
    retry = {"attempts": 6, "base_delay": 0.05}
    if kind == "local":
        root = tmp_path / "objects"
        return Backend(kind, LocalDirObjectStore(root), LocalDirObjectStore(root),
                       [{"type": "local", "path": str(root), "retry": retry}], increments=10)
    if kind == "memory":
        store = MemoryObjectStore()
        return Backend(kind, store, store, [store], increments=10)
    if kind == "gcs":
        server = request.getfixturevalue("fake_gcs")
        prefix = server.new_prefix()
        return Backend(kind, server.store(prefix), server.store(prefix),
                       [server.config(prefix, retry=retry)], increments=5)
    server = request.getfixturevalue("seaweedfs" if kind == "s3" else "seaweedfs_cluster")
    prefix = server.new_prefix()
    gateways = len(server.endpoints)
    return Backend(kind, server.store(prefix, gateway=0), server.store(prefix, gateway=gateways - 1),
                   [server.config(prefix, gateway=i, retry=retry) for i in range(gateways)], increments=2)


# ------------------------------------------------------------- basic calls
def test_put_get_head(backend: Backend) -> None:
    s = backend.store
    etag = s.put("dir/obj", b"hello")
    assert s.get("dir/obj") == (b"hello", etag)
    meta = s.head("dir/obj")
    assert meta is not None
    assert (meta.key, meta.size, meta.etag) == ("dir/obj", 5, etag)
    assert abs(meta.last_modified - time.time()) < 120
    assert backend.other.get("dir/obj") == (b"hello", etag)


def test_missing_key(backend: Backend) -> None:
    with pytest.raises(ObjectNotFound):
        backend.store.get("nope")
    assert backend.store.head("nope") is None
    backend.store.delete("nope")  # not an error


def test_overwrite_changes_content_and_etag(backend: Backend) -> None:
    s = backend.store
    first = s.put("k", b"one")
    second = s.put("k", b"two")
    assert second != first
    assert s.get("k") == (b"two", second)


def test_rewriting_identical_bytes(backend: Backend) -> None:
    s = backend.store
    first = s.put("k", b"same")
    second = s.put("k", b"same")
    if backend.kind.startswith("s3"):
        # S3's ETag is the MD5 of the body: identical bytes, identical ETag.
        assert second == first
    else:
        # local: a nonce per write; GCS: a new generation; memory: a counter.
        assert second != first
        with pytest.raises(PreconditionFailed):
            s.put("k", b"other", if_match=first)


def test_empty_object_and_odd_keys(backend: Backend) -> None:
    s = backend.store
    keys = ["empty", "sp ace/ünï%+:=&?,;@$", "a", "a/b", "a#/c"]
    for k in keys:
        s.put(k, k.encode() if k != "empty" else b"")
    assert s.get("empty")[0] == b""
    for k in keys[1:]:
        assert s.get(k)[0] == k.encode()
    assert [m.key for m in s.list()] == sorted(keys)


def _accepted(backend: Backend, write: Any) -> Any:
    """Run a conditional write whose precondition holds, and return its result.

    A SeaweedFS S3 gateway checks If-Match against the entry its filer's change
    feed keeps; under load (seen once in a CI run) the feed can lag the write just
    made, so a swap against the ETag that write returned is refused for a moment.
    A refusal like that is safe (the writer re-reads and tries again, as every
    caller in the sync engine does); accepting a stale ETag would not be, and the
    assertions after each swap check that never happens. So on the cluster: the
    true precondition is accepted within a few seconds.
    """
    if backend.kind != "s3-cluster":
        return write()
    deadline = time.monotonic() + 10
    while True:
        try:
            return write()
        except PreconditionFailed:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def _wait_gone(backend: Backend, store: ObjectStore, key: str) -> None:
    """On the cluster, wait a few seconds for a deleted key to stop answering HEAD.

    A SeaweedFS S3 gateway answers HEAD from a cache its filer's change feed keeps;
    under load (seen once in a full suite run) the put's event can land after the
    delete, and a HEAD right after the delete still finds the object for a moment.
    A stale read like that can only make a peer wait (a lease it still sees); every
    create and replace is conditional, so it never lets two writers in.
    """
    if backend.kind != "s3-cluster":
        return
    deadline = time.monotonic() + 10
    while store.head(key) is not None and time.monotonic() < deadline:
        time.sleep(0.1)


def test_list_sorted_with_prefix_and_start_after(backend: Backend) -> None:
    s = backend.store
    keys = [f"log/{i:020d}.json" for i in (1, 2, 3, 10, 11)] + ["blobs/ab/abcd", "logx", "lo", "log-other"]
    for k in random.sample(keys, len(keys)):
        s.put(k, b"x")
    assert [m.key for m in s.list()] == sorted(keys)
    log = sorted(k for k in keys if k.startswith("log/"))
    assert [m.key for m in s.list("log/")] == log
    assert [m.key for m in s.list("log/", start_after=log[2])] == log[3:]
    assert [m.key for m in s.list("log/" + "0" * 18 + "1")] == log[3:]  # a prefix that ends mid-segment
    assert [m.key for m in s.list("lo")] == sorted(k for k in keys if k.startswith("lo"))
    assert list(s.list("log/", start_after=log[-1])) == []
    assert list(s.list("nothing/")) == []
    assert all(m.size == 1 and m.etag for m in s.list("blobs/"))


def test_delete(backend: Backend) -> None:
    s = backend.store
    etag = s.put("k", b"v")
    s.delete("k")
    _wait_gone(backend, s, "k")
    assert s.head("k") is None
    assert [m.key for m in s.list()] == []
    etag = s.put("k", b"v2", if_none_match=True)  # a deleted key can be created again
    assert s.get("k") == (b"v2", etag)


def test_conditional_delete(backend: Backend) -> None:
    s = backend.store
    stale = s.put("k", b"1")
    current = s.put("k", b"2")
    with pytest.raises(PreconditionFailed):
        s.delete("k", if_match=stale)
    assert s.get("k")[0] == b"2"
    _accepted(backend, lambda: s.delete("k", if_match=current))
    _wait_gone(backend, s, "k")
    assert s.head("k") is None
    with pytest.raises(PreconditionFailed):
        s.delete("k", if_match=current)


def test_create_only(backend: Backend) -> None:
    s = backend.store
    etag = s.put("k", b"first", if_none_match=True)
    with pytest.raises(PreconditionFailed):
        s.put("k", b"second", if_none_match=True)
    with pytest.raises(PreconditionFailed):
        backend.other.put("k", b"third", if_none_match=True)
    assert s.get("k") == (b"first", etag)


def test_compare_and_swap(backend: Backend) -> None:
    s = backend.store
    first = s.put("k", b"1")
    second = _accepted(backend, lambda: s.put("k", b"2", if_match=first))
    with pytest.raises(PreconditionFailed):
        s.put("k", b"3", if_match=first)
    with pytest.raises(PreconditionFailed):
        backend.other.put("k", b"3", if_match=first)
    assert s.get("k") == (b"2", second)
    third = _accepted(backend, lambda: backend.other.put("k", b"4", if_match=second))
    assert s.get("k") == (b"4", third)


def test_if_match_on_missing_key(backend: Backend) -> None:
    s = backend.store
    etag = s.put("exists", b"x")
    with pytest.raises(PreconditionFailed):  # 404 or 412 on the wire
        s.put("missing", b"x", if_match=etag)
    assert s.head("missing") is None
    s.delete("exists")
    with pytest.raises(PreconditionFailed):
        s.put("exists", b"y", if_match=etag)
    assert s.head("exists") is None


@pytest.mark.parametrize("key", ["/abs", "a/../b", "..", "a//b", "a/", "nul\0", "back\\slash", ""])
def test_unsafe_keys_are_rejected(backend: Backend, key: str) -> None:
    if backend.kind == "memory":
        pytest.skip("the in-memory reference store keeps any string key")
    with pytest.raises(ValueError):
        backend.store.put(key, b"x")


def test_probe_accepts_the_backend(backend: Backend) -> None:
    probe_conditional_writes(backend.store)
    assert [m.key for m in backend.store.list("_probe/")] == []


def test_probe_refuses_it_when_conditions_are_ignored(backend: Backend) -> None:
    with pytest.raises(BackendRefused) as info:
        probe_conditional_writes(IgnoresConditions(backend.store))
    assert backend.store.name in info.value.message
    assert "If-None-Match" in info.value.message


class IgnoresConditions(ObjectStore):
    """What rclone and s3rver do: accept the conditions, overwrite anyway."""

    def __init__(self, inner: ObjectStore) -> None:
        self.inner = inner
        self.name = inner.name

    def get(self, key: str) -> tuple[bytes, str]:
        return self.inner.get(key)

    def put(self, key: str, data: bytes, *, if_none_match: bool = False, if_match: str | None = None) -> str:
        return self.inner.put(key, data)

    def head(self, key: str) -> ObjectMeta | None:
        return self.inner.head(key)

    def list(self, prefix: str = "", start_after: str | None = None) -> Iterator[ObjectMeta]:
        return self.inner.list(prefix, start_after)

    def delete(self, key: str, *, if_match: str | None = None) -> None:
        self.inner.delete(key)


# ------------------------------------------------------ streaming transfers
def _file(path: Path, size: int, seed: int = 1) -> Path:
    rnd = random.Random(seed)
    with open(path, "wb") as f:
        left = size
        while left:
            n = min(left, 1 << 20)
            f.write(rnd.randbytes(n))
            left -= n
    return path


def _sha(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_put_file_and_get_file(backend: Backend, tmp_path: Path) -> None:
    s = backend.store
    src = _file(tmp_path / "src", 300_001)
    etag = s.put_file("blobs/f", src)
    meta = s.head("blobs/f")
    assert meta is not None and (meta.size, meta.etag) == (300_001, etag)
    for handle in (s, backend.other):
        dest = tmp_path / "dest"
        dest.write_bytes(b"old contents, longer than nothing")  # a retry's leftovers: emptied first
        got = handle.get_file("blobs/f", dest, size_hint=300_001, fsync=True)
        assert (got.sha256, got.size, got.etag) == (_sha(src), 300_001, etag)
        assert dest.read_bytes() == src.read_bytes()
    assert s.get_file("blobs/f", tmp_path / "again").sha256 == _sha(src)  # without a size hint
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    s.put_file("blobs/empty", empty, if_none_match=True)
    assert s.get_file("blobs/empty", tmp_path / "e").size == 0


def test_put_file_create_only_and_get_file_missing(backend: Backend, tmp_path: Path) -> None:
    s = backend.store
    first = _file(tmp_path / "first", 1000, seed=1)
    etag = s.put_file("k", first, if_none_match=True)
    with pytest.raises(PreconditionFailed):
        s.put_file("k", _file(tmp_path / "second", 1000, seed=2), if_none_match=True)
    with pytest.raises(PreconditionFailed):
        backend.other.put_file("k", first, if_none_match=True)
    assert s.get("k") == (first.read_bytes(), etag)
    with pytest.raises(ObjectNotFound):
        s.get_file("missing", tmp_path / "nothing", size_hint=10)
    with pytest.raises(ObjectNotFound):
        s.get_file("missing", tmp_path / "nothing")
    s.delete("k")
    with pytest.raises(ObjectNotFound):
        s.get_file("k", tmp_path / "nothing")


def _small_parts(store: ObjectStore) -> int:
    """Make ``store`` upload in parts above a few MiB; returns the part size."""
    if hasattr(store, "part_size"):
        store.multipart_threshold = 6 << 20
        store.part_size = 5 << 20  # S3's smallest part
        return store.part_size
    return 5 << 20  # local, memory: no parts, the same size goes through their streams


def test_a_multipart_sized_object(backend: Backend, tmp_path: Path) -> None:
    """Above the threshold S3 uploads in parts (its ETag says how many) and
    GCS resumably in chunks; every backend round-trips it, and create-only
    still refuses a key that exists when the upload starts."""
    s = backend.store
    part = _small_parts(s)
    size = 2 * part + 12345  # three parts
    src = _file(tmp_path / "big", size, seed=3)
    etag = s.put_file("blobs/big", src, if_none_match=True)
    if backend.kind.startswith("s3"):
        assert etag.strip('"').endswith("-3"), etag
    got = backend.other.get_file("blobs/big", tmp_path / "down", size_hint=size)
    assert (got.sha256, got.size, got.etag) == (_sha(src), size, etag)
    assert (tmp_path / "down").read_bytes() == src.read_bytes()
    with pytest.raises(PreconditionFailed):
        s.put_file("blobs/big", src, if_none_match=True)
    other = _file(tmp_path / "other", size, seed=4)
    etag2 = s.put_file("blobs/big", other)  # unconditional: replaces it
    assert etag2 != etag and s.get_file("blobs/big", tmp_path / "down2").sha256 == _sha(other)


@pytest.mark.parametrize("multipart", [False, True])
def test_put_file_refuses_a_file_that_changed_after_it_was_hashed(backend: Backend, tmp_path: Path,
                                                                  multipart: bool) -> None:
    """The caller hashed the file, then it changed: nothing is stored under
    the key (a blob's key is its hash), whatever the upload's size."""
    from swamp.errors import SourceChanged

    s = backend.store
    size = 2 * _small_parts(s) + 12345 if multipart else 4096
    src = _file(tmp_path / "src", size, seed=5)
    hashed = _sha(src)
    _file(src, size, seed=6)  # rewritten after hashing, same size
    with pytest.raises(SourceChanged):
        s.put_file("blobs/changed", src, if_none_match=True, sha256=hashed)
    assert s.head("blobs/changed") is None
    etag = s.put_file("blobs/changed", src, if_none_match=True, sha256=_sha(src))
    assert s.head("blobs/changed").etag == etag


# ---------------------------------------------------------- racing writers
def _open(target: dict[str, Any] | ObjectStore) -> ObjectStore:
    return open_store(target) if isinstance(target, dict) else target


def _wait_until(go_at: float) -> None:
    time.sleep(max(0.0, go_at - time.time()))


def race_create(target: dict[str, Any] | ObjectStore, key: str, token: bytes, go_at: float) -> bool:
    store = _open(target)
    store.head(key)  # connect before the start signal
    _wait_until(go_at)
    try:
        store.put(key, token, if_none_match=True)
        return True
    except PreconditionFailed:
        return False


def cas_increments(target: dict[str, Any] | ObjectStore, key: str, increments: int, go_at: float) -> int:
    """Increment a counter ``increments`` times by compare-and-swap; return
    how many attempts lost."""
    store = _open(target)
    store.head(key)
    _wait_until(go_at)
    lost = 0
    done = 0
    while done < increments:
        data, etag = store.get(key)
        time.sleep(random.uniform(0, 0.002))  # widen the window between read and write
        try:
            store.put(key, str(int(data) + 1).encode(), if_match=etag)
            done += 1
        except PreconditionFailed:
            lost += 1
            time.sleep(random.uniform(0, 0.01))
    return lost


def _warm(_: int) -> None:
    import swamp.datastore.objectstore.gcs  # noqa: F401  (pay imports before the start signal)
    import swamp.datastore.objectstore.s3  # noqa: F401


@pytest.fixture(scope="module")
def process_pool() -> Iterator[Any]:
    with multiprocessing.get_context("spawn").Pool(RACERS) as pool:
        pool.map(_warm, range(RACERS))
        yield pool


def _run(backend: Backend, pool: Any, fn: Any, args: list[tuple[Any, ...]]) -> list[Any]:
    if backend.threads:
        with ThreadPoolExecutor(len(args)) as ex:
            return list(ex.map(lambda a: fn(*a), args))
    return pool.starmap(fn, args)


def test_racing_creators_exactly_one_wins(backend: Backend, process_pool: Any) -> None:
    rounds = 1 if backend.kind.startswith("s3") else 3
    for r in range(rounds):
        key = f"log/{r:020d}.json"
        go_at = time.time() + 0.3
        tokens = [f"racer {i}".encode() for i in range(RACERS)]
        won = _run(backend, process_pool, race_create,
                   [(backend.racers[i % len(backend.racers)], key, tokens[i], go_at) for i in range(RACERS)])
        assert sum(won) == 1, won
        assert backend.store.get(key)[0] == tokens[won.index(True)]


def test_cas_counter_loses_no_increment(backend: Backend, process_pool: Any) -> None:
    racers = 3 if backend.kind.startswith("s3") else RACERS
    backend.store.put("counter", b"0", if_none_match=True)
    go_at = time.time() + 0.3
    lost = _run(backend, process_pool, cas_increments,
                [(backend.racers[i % len(backend.racers)], "counter", backend.increments, go_at)
                 for i in range(racers)])
    assert int(backend.store.get("counter")[0]) == racers * backend.increments, lost
    print(f"{backend.kind}: {sum(lost)} lost CAS attempts")
