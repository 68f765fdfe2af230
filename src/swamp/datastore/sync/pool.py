"""The engine's transfer threads: the part of concurrent.futures'
ThreadPoolExecutor the engine uses (``submit``, ``map``, ``shutdown``),
with the same behaviour, without loading concurrent.futures. That package
imports logging, and logging traceback, linecache, tokenize, textwrap,
string and weakref: about 4.5 ms of every command that opens the engine
(``datastore pull|push|sync``, ``data get``, a method run on S3), and more
objects for the interpreter to free at its exit.

As in ThreadPoolExecutor: threads start on demand (a task finds no idle
thread and there are fewer than ``max_workers``), named
``<prefix>_<n>``; a task's exception (any BaseException) is raised by its
future's ``result()``; ``map`` submits every call at once and yields the
results in order, and cancels the calls not yet started when its consumer
stops early (an exception, or the generator closed); ``shutdown`` lets
the queued tasks run, then joins the threads when ``wait``. Threads are
not daemons: a pool never closed is woken when it is garbage-collected,
and at interpreter exit (before the non-daemon threads are joined), so
its queued work finishes and its threads end."""

from __future__ import annotations

import threading
import weakref
from collections import deque
from typing import Any, Callable, Iterable, Iterator

_PENDING, _RUNNING, _CANCELLED, _FINISHED = range(4)


class CancelledError(Exception):
    """``result()`` of a future cancelled before it started."""


class Future:
    """The result of one submitted call."""

    __slots__ = ("_fn", "_args", "_kwargs", "_state", "_value", "_error", "_done", "_guard")

    def __init__(self, fn: Callable, args: tuple, kwargs: dict, guard: threading.Lock) -> None:
        self._fn, self._args, self._kwargs = fn, args, kwargs
        self._state = _PENDING
        self._value: Any = None
        self._error: BaseException | None = None
        self._done = threading.Lock()
        self._done.acquire()  # released once finished or cancelled
        self._guard = guard  # the pool's lock: a state change is atomic with the queue's

    def cancel(self) -> bool:
        """Cancel the call if it has not started; whether it is cancelled."""
        with self._guard:
            if self._state == _PENDING:
                self._state = _CANCELLED
                self._fn = self._args = self._kwargs = None  # type: ignore[assignment]
                self._done.release()
            return self._state == _CANCELLED

    def cancelled(self) -> bool:
        return self._state == _CANCELLED

    def done(self) -> bool:
        return self._state in (_CANCELLED, _FINISHED)

    def result(self) -> Any:
        with self._done:
            pass
        if self._state == _CANCELLED:
            raise CancelledError()
        if self._error is not None:
            try:
                raise self._error
            finally:
                self = None  # type: ignore[assignment]  # no reference cycle through the traceback
        return self._value

    def _run(self) -> None:
        with self._guard:
            if self._state != _PENDING:  # cancelled while queued
                return
            self._state = _RUNNING
        fn, args, kwargs = self._fn, self._args, self._kwargs
        self._fn = self._args = self._kwargs = None  # type: ignore[assignment]
        try:
            self._value = fn(*args, **kwargs)
        except BaseException as e:
            self._error = e
        finally:
            del fn, args, kwargs
            self._state = _FINISHED
            self._done.release()


class _Queue:
    """What the threads share with their pool: the threads hold this, not
    the pool, so that a pool nobody closed can be garbage-collected."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.ready = threading.Condition(self.lock)
        self.tasks: deque[Future] = deque()
        self.idle = 0
        self.closed = False
        self.pool_ref: weakref.ref | None = None

    def close(self) -> None:
        with self.lock:
            self.closed = True
            self.ready.notify_all()


def _worker(q: _Queue) -> None:
    while True:
        with q.lock:
            while not q.tasks and not q.closed:
                q.idle += 1
                q.ready.wait()
                q.idle -= 1
            if not q.tasks:
                return  # closed, and nothing left to run
            task = q.tasks.popleft()
        task._run()
        del task


#: the queues of the pools alive, woken at interpreter exit
_queues: set[_Queue] = set()
_queues_lock = threading.Lock()


def _forget(q: _Queue) -> None:
    q.close()
    with _queues_lock:
        _queues.discard(q)


def _at_exit() -> None:
    with _queues_lock:
        queues = list(_queues)
    for q in queues:
        q.close()


threading._register_atexit(_at_exit)  # as concurrent.futures.thread does: before threads are joined


class Pool:
    def __init__(self, max_workers: int, thread_name_prefix: str = "") -> None:
        if max_workers <= 0:
            raise ValueError("max_workers must be greater than 0")
        self._max_workers = max_workers
        self._prefix = thread_name_prefix or f"Pool-{id(self):x}"
        self._threads: list[threading.Thread] = []
        self._shutdown = False
        q = self._q = _Queue()
        # a pool never shut down: its threads end when it is collected
        q.pool_ref = weakref.ref(self, lambda _, q=q: _forget(q))
        with _queues_lock:
            _queues.add(q)

    def submit(self, fn: Callable, /, *args: Any, **kwargs: Any) -> Future:
        q = self._q
        with q.lock:
            if self._shutdown or q.closed:
                raise RuntimeError("cannot schedule new futures after shutdown")
            f = Future(fn, args, kwargs, q.lock)
            q.tasks.append(f)
            if q.idle >= len(q.tasks):
                q.ready.notify()
            elif len(self._threads) < self._max_workers:
                t = threading.Thread(name=f"{self._prefix}_{len(self._threads)}", target=_worker, args=(q,))
                t.start()
                self._threads.append(t)
            else:
                q.ready.notify()
        return f

    def map(self, fn: Callable, *iterables: Iterable) -> Iterator:
        futures = [self.submit(fn, *args) for args in zip(*iterables)]

        def results() -> Iterator:
            try:
                futures.reverse()
                while futures:
                    yield futures.pop().result()
            finally:
                for f in futures:
                    f.cancel()

        return results()

    def shutdown(self, wait: bool = True) -> None:
        with self._q.lock:
            self._shutdown = True
        _forget(self._q)
        if wait:
            for t in self._threads:
                t.join()

    def __enter__(self) -> "Pool":
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown(wait=True)
