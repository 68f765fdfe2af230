"""RetryingObjectStore over S3ObjectStore over a fault-injecting proxy in
front of SeaweedFS: every call either completes or fails with a clean
TransientError, and a create whose answer was lost is not taken for a lost
race."""

from __future__ import annotations

from typing import Iterator

import pytest

from swamp.datastore.objectstore.retry import RetryingObjectStore
from swamp.datastore.objectstore.s3 import S3ObjectStore
from swamp.errors import PreconditionFailed, TransientError
from tests.fixtures.faultproxy import Fault, FaultProxy
from tests.fixtures.servers import S3Server

pytestmark = pytest.mark.s3


@pytest.fixture
def proxy(seaweedfs: S3Server) -> Iterator[FaultProxy]:
    with FaultProxy(seaweedfs.endpoint_url, seed=7) as p:
        yield p


@pytest.fixture
def prefix(seaweedfs: S3Server) -> str:
    return seaweedfs.new_prefix()


def through(proxy: FaultProxy, seaweedfs: S3Server, prefix: str,
            attempts: int = 4) -> RetryingObjectStore:
    inner = S3ObjectStore(seaweedfs.bucket, prefix, endpoint_url=proxy.url,
                          timeout_s=1.0, connect_timeout_s=1.0)
    return RetryingObjectStore(inner, attempts=attempts, base_delay=0.01, max_delay=0.05)


@pytest.mark.parametrize("fault", [
    Fault("status", status=500),
    Fault("status", status=503),
    Fault("status", status=409),
    Fault("drop"),
    Fault("delay", seconds=1.5),
], ids=["500", "503", "409", "drop", "timeout"])
def test_transient_faults_are_retried(proxy: FaultProxy, seaweedfs: S3Server, prefix: str, fault: Fault) -> None:
    store = through(proxy, seaweedfs, prefix)
    proxy.fail_next(2, fault)
    etag = store.put("k", b"v", if_none_match=True)
    assert store.get("k") == (b"v", etag)
    assert proxy.faults == 2
    # 3 PUTs and a GET; a request held past the timeout still reaches the
    # server later, like a slow network, so the third PUT may meet our own
    # object: then a read-back GET proves it ours.
    assert store.requests in ((4, 5) if fault.kind == "delay" else (4,))


@pytest.mark.parametrize("fault", [Fault("drop", after_upstream=True),
                                   Fault("delay", seconds=1.5, after_upstream=True),
                                   Fault("status", status=502, after_upstream=True)],
                         ids=["dropped-answer", "late-answer", "502-after-commit"])
def test_create_applied_but_answer_lost_is_a_success(proxy: FaultProxy, seaweedfs: S3Server, prefix: str,
                                                     fault: Fault) -> None:
    store = through(proxy, seaweedfs, prefix)
    proxy.fail_next(1, fault)
    etag = store.put("log/00000000000000000001.json", b"our commit", if_none_match=True)
    direct = seaweedfs.store(prefix)
    assert direct.get("log/00000000000000000001.json") == (b"our commit", etag)
    assert store.requests == 3  # PUT (answer lost), PUT (412), GET (our bytes)


def test_a_real_lost_race_stays_lost(proxy: FaultProxy, seaweedfs: S3Server, prefix: str) -> None:
    seaweedfs.store(prefix).put("k", b"peer's", if_none_match=True)
    store = through(proxy, seaweedfs, prefix)
    proxy.fail_next(1, Fault("drop"))
    with pytest.raises(PreconditionFailed):
        store.put("k", b"ours", if_none_match=True)


def test_conditional_delete_through_faults(proxy: FaultProxy, seaweedfs: S3Server, prefix: str) -> None:
    store = through(proxy, seaweedfs, prefix)
    etag = store.put("lease", b"held")
    proxy.fail_next(1, Fault("status", status=503))
    store.delete("lease", if_match=etag)
    assert store.head("lease") is None


def test_persistent_faults_fail_cleanly(proxy: FaultProxy, seaweedfs: S3Server, prefix: str) -> None:
    store = through(proxy, seaweedfs, prefix, attempts=3)
    proxy.fail_fraction(1.0, Fault("status", status=503), Fault("drop"))
    with pytest.raises(TransientError):
        store.put("k", b"v")
    with pytest.raises(TransientError):
        list(store.list())
    assert store.requests == 6


def test_a_workload_under_random_faults_completes(proxy: FaultProxy, seaweedfs: S3Server, prefix: str) -> None:
    store = through(proxy, seaweedfs, prefix, attempts=8)
    proxy.fail_fraction(0.3, Fault("status", status=500), Fault("status", status=409), Fault("drop"),
                        Fault("drop", after_upstream=True))
    for i in range(12):
        store.put(f"blobs/{i:02d}", f"blob {i}".encode(), if_none_match=True)
    assert [m.key for m in store.list("blobs/")] == [f"blobs/{i:02d}" for i in range(12)]
    proxy.clear()
    direct = seaweedfs.store(prefix)
    assert [direct.get(f"blobs/{i:02d}")[0] for i in range(12)] == [f"blob {i}".encode() for i in range(12)]
    assert proxy.faults > 0


# ------------------------------------------------------ streaming transfers
def _big(tmp_path, size: int = 12 << 20):
    import os

    src = tmp_path / "big"
    src.write_bytes(os.urandom(size))
    return src


def _sha(path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_download_cut_off_starts_over(proxy: FaultProxy, seaweedfs: S3Server, prefix: str, tmp_path) -> None:
    src = _big(tmp_path)
    seaweedfs.store(prefix).put_file("blobs/big", src)
    store = through(proxy, seaweedfs, prefix)
    proxy.fail_next(1, Fault("drop"))
    got = store.get_file("blobs/big", tmp_path / "dest", size_hint=src.stat().st_size)
    assert got.sha256 == _sha(src) and (tmp_path / "dest").read_bytes() == src.read_bytes()
    assert store.requests == 2


def test_a_multipart_upload_whose_part_failed_starts_over(proxy: FaultProxy, seaweedfs: S3Server, prefix: str,
                                                         tmp_path) -> None:
    src = _big(tmp_path)
    store = through(proxy, seaweedfs, prefix)
    store.inner.multipart_threshold, store.inner.part_size = 6 << 20, 5 << 20
    # the upload's first request (it starts the multipart upload) passes; a part fails
    proxy._next = [None, Fault("status", status=500)]
    etag = store.put_file("blobs/big", src, sha256=_sha(src))
    assert etag.strip('"').endswith("-3") and proxy.faults == 1 and store.requests == 2
    assert seaweedfs.store(prefix).get_file("blobs/big", tmp_path / "down").sha256 == _sha(src)


def test_a_large_download_gets_a_timeout_that_fits_its_size(proxy: FaultProxy, seaweedfs: S3Server, prefix: str,
                                                           tmp_path) -> None:
    """The store's timeout is 1 s. A 12 MiB object whose answer starts after
    1.5 s is fetched at the first try by get_file (its request may take
    1 s + 12 MiB at 1 MiB/s); the whole-bytes get, held to 1 s, times out."""
    src = _big(tmp_path)
    seaweedfs.store(prefix).put_file("blobs/big", src)
    store = through(proxy, seaweedfs, prefix)
    proxy.fail_next(1, Fault("delay", seconds=1.5))
    assert store.get_file("blobs/big", tmp_path / "dest", size_hint=src.stat().st_size).sha256 == _sha(src)
    assert store.requests == 1
    proxy.fail_next(1, Fault("delay", seconds=1.5))
    assert store.get("blobs/big")[0] == src.read_bytes()
    assert store.requests == 3  # the first GET timed out
