"""SharedPull: reads that arrive together share one pull, and no read takes
the answer of a pull that started before it arrived."""

from __future__ import annotations

import threading
import time

import pytest

from swamp.datastore.shared_pull import SharedPull
from swamp.datastore.sync.counts import SyncCounts


class Remote:
    """A pull that blocks until released, counting how many ran and what
    each saw (the remote's head when it started)."""

    def __init__(self) -> None:
        self.head = 0
        self.pulls = 0
        self.gate = threading.Semaphore(0)
        self.started = threading.Semaphore(0)
        self.fail = False

    def pull(self) -> SyncCounts:
        self.pulls += 1
        seen = self.head
        self.started.release()
        self.gate.acquire()
        if self.fail:
            raise RuntimeError("the remote did not answer")
        c = SyncCounts()
        c.requests = seen
        return c


def reader(shared: SharedPull, out: list, i: int) -> threading.Thread:
    def go():
        try:
            out[i] = shared.pull()
        except RuntimeError as e:
            out[i] = e

    t = threading.Thread(target=go)
    t.start()
    return t


def waiting(shared: SharedPull, n: int) -> None:
    """Until ``n`` readers wait on the pull under way."""
    deadline = time.monotonic() + 30
    while len(shared._cond._waiters) < n:
        assert time.monotonic() < deadline, "the readers never waited"
        time.sleep(0.001)


def test_reads_arriving_during_a_pull_share_the_next_one_which_sees_what_was_published_meanwhile():
    remote = Remote()
    shared = SharedPull(remote.pull)
    out: list = [None] * 6
    first = reader(shared, out, 0)
    remote.started.acquire()  # pull 1 is under way, from head 0
    remote.head = 7  # a peer publishes while it runs
    late = [reader(shared, out, i) for i in range(1, 6)]
    waiting(shared, 5)
    remote.gate.release()  # pull 1 ends
    first.join()
    remote.started.acquire()  # one pull (2) for the five late readers
    remote.gate.release()
    for t in late:
        t.join()
    assert remote.pulls == 2
    assert out[0].requests == 0
    # every late reader is answered by a pull that started after it arrived: one saw head 7 itself,
    # the others shared that pull
    assert sorted(c.requests for c in out[1:]) == [0, 0, 0, 0, 7]


def test_a_failed_pull_fails_every_read_that_shared_it_and_the_next_read_pulls_again():
    remote = Remote()
    shared = SharedPull(remote.pull)
    out: list = [None] * 3
    first = reader(shared, out, 0)
    remote.started.acquire()
    remote.fail = True
    late = [reader(shared, out, i) for i in (1, 2)]
    waiting(shared, 2)
    remote.gate.release()
    first.join()
    remote.started.acquire()
    remote.gate.release()
    for t in late:
        t.join()
    assert all(isinstance(o, RuntimeError) for o in out), out
    remote.fail = False
    remote.gate.release()
    assert shared.pull().requests == 0
    assert remote.pulls == 3


def test_one_read_alone_runs_its_own_pull_each_time():
    calls = []
    shared = SharedPull(lambda: calls.append(1) or SyncCounts())
    for _ in range(3):
        shared.pull()
    assert len(calls) == 3


@pytest.mark.parametrize("readers", [16])
def test_many_reads_at_once_never_run_two_pulls_together(readers):
    running, most = [0], [0]
    lock = threading.Lock()

    def pull():
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        threading.Event().wait(0.005)
        with lock:
            running[0] -= 1
        return SyncCounts()

    shared = SharedPull(pull)
    threads = [threading.Thread(target=shared.pull) for _ in range(readers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most[0] == 1
