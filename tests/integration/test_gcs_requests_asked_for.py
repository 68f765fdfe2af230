"""A GCS datastore makes the requests swamp asks for and no others.

google-cloud-storage 3.x looks up a bucket's metadata in a background
thread on the first call of each client, only to label its own trace
spans. swamp keeps a client per thread, so a command with 8 transfer
threads made 8 extra bucket reads (each needing storage.buckets.get, a
permission the datastore does not otherwise need), from daemon threads the
command's exit could cut off mid-request."""

from __future__ import annotations

import threading
import time

from swamp.datastore.objectstore.gcs import GCSObjectStore
from tests.fixtures.faultproxy import FaultProxy


def test_objects_read_and_written_from_several_threads_make_no_bucket_lookups(fake_gcs):
    with FaultProxy(fake_gcs.endpoint_url) as proxy:
        store = GCSObjectStore(fake_gcs.bucket, fake_gcs.new_prefix(), endpoint_url=proxy.url)

        def work(i: int) -> None:
            store.put(f"k{i}", b"x" * (i + 1))
            assert store.get(f"k{i}")[0] == b"x" * (i + 1)
            assert store.head(f"k{i}") is not None

        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert sorted(m.key for m in store.list()) == ["k0", "k1", "k2", "k3"]
        time.sleep(0.5)  # a background lookup, if one was queued, has reached the proxy by now

        bucket_reads = [(m, p) for m, p in proxy.seen
                        if m == "GET" and p.split("?")[0].rstrip("/") == f"/storage/v1/b/{fake_gcs.bucket}"]
        assert bucket_reads == []
        # each request is one swamp asked for: 4 puts, 4 gets, 4 heads, 1 list
        assert len(proxy.seen) == 13, proxy.seen
