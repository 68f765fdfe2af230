"""The engine's thread pool (sync/pool.py) behaves as the
ThreadPoolExecutor it replaced, for what the engine uses of it."""

from __future__ import annotations

import gc
import subprocess
import sys
import threading
import time

import pytest

from swamp.datastore.sync.pool import CancelledError, Pool


def test_map_yields_results_in_order_from_several_threads():
    seen: set[str] = set()

    def work(i: int) -> int:
        seen.add(threading.current_thread().name)
        time.sleep(0.01 * (i % 3))
        return i * i

    with Pool(4, thread_name_prefix="sync") as pool:
        assert list(pool.map(work, range(20))) == [i * i for i in range(20)]
        assert list(pool.map(lambda a, b: a + b, [1, 2, 3], [10, 20])) == [11, 22]  # zip, as map does
        assert list(pool.map(work, [])) == []
    assert seen and seen <= {f"sync_{n}" for n in range(4)}


def test_a_failure_is_raised_in_order_and_the_calls_not_started_are_cancelled():
    started: list[int] = []
    release = threading.Event()

    def work(i: int) -> int:
        started.append(i)
        if i == 0:
            raise KeyError("boom")
        release.wait(5)  # the others hold their threads until the failure was seen
        return i

    pool = Pool(2)
    with pytest.raises(KeyError, match="boom"):
        list(pool.map(work, range(10)))
    release.set()
    pool.shutdown(wait=True)
    assert len(started) <= 3  # 0, 1 and the one the failed call's thread took next; the rest never ran


def test_submit_result_cancel_and_shutdown():
    pool = Pool(1)
    hold = threading.Event()
    first = pool.submit(hold.wait, 5)
    queued = pool.submit(lambda: "never")
    assert queued.cancel() and queued.cancelled() and queued.done()
    with pytest.raises(CancelledError):
        queued.result()
    late = pool.submit(lambda x, *, y: x + y, 1, y=2)
    hold.set()
    assert first.result() is True and not first.cancel()
    pool.shutdown(wait=True)  # lets the queued work run first
    assert late.done() and late.result() == 3
    with pytest.raises(RuntimeError, match="after shutdown"):
        pool.submit(print)
    with pytest.raises(ValueError):
        Pool(0)


def test_a_base_exception_is_the_future_s_not_the_thread_s():
    with Pool(1) as pool:
        f = pool.submit(sys.exit, 3)
        with pytest.raises(SystemExit):
            f.result()
        assert pool.submit(lambda: 1).result() == 1  # the thread survived


def test_threads_start_on_demand_up_to_the_limit():
    with Pool(3, thread_name_prefix="t") as pool:
        assert pool.submit(lambda: threading.current_thread().name).result() == "t_0"
        for _ in range(5):  # one idle thread serves calls made one at a time
            pool.submit(lambda: None).result()
        assert len(pool._threads) == 1
        hold = threading.Event()
        fs = [pool.submit(hold.wait, 5) for _ in range(6)]
        hold.set()
        assert all(f.result() for f in fs) and len(pool._threads) == 3


def test_a_pool_never_shut_down_ends_its_threads():
    pool = Pool(2, thread_name_prefix="forgotten")
    assert pool.submit(lambda: 1).result() == 1
    threads = list(pool._threads)
    del pool
    gc.collect()
    for t in threads:
        t.join(5)
        assert not t.is_alive()


def test_at_exit_the_queued_work_of_a_pool_never_shut_down_finishes(tmp_path):
    out = tmp_path / "done"
    code = ("import sys, time\nfrom swamp.datastore.sync.pool import Pool\n"
            "pool = Pool(1)\n"
            "def work(i):\n    time.sleep(0.05)\n    with open(sys.argv[1], 'a') as f:\n        f.write(str(i))\n"
            "for i in range(3):\n    pool.submit(work, i)\n")
    subprocess.run([sys.executable, "-c", code, str(out)], check=True, timeout=60)
    assert out.read_text() == "012"
