"""The model lease of a step, taken only to number and publish its versions.

A workflow step's method runs without its model's lease; the runner stages
what it writes (models/staged_versions.py) and, once the method ends, calls
``publishing``: the lease is taken then, a pull follows (so the numbers are
above every version published before), the versions are numbered and
written, and the lease is let go only after the step's session has pushed
(``held`` encloses that session). So the step still costs one commit, made
under the lease, and items on one model run at once (docs/sync.md
"Concurrent runs of one model"). Used by local steps (app/workflows.py) and
by steps on a worker (app/remote_steps.py)."""

from __future__ import annotations

import contextlib
import threading

from swamp.app import cancellable_waits
from swamp.app.lifecycle import changing, refresh
from swamp.models.leases import model_lock_name

#: lease name -> the turn of this process's threads at it. The steps of one
#: process queue here, each woken the moment the one before lets go, and
#: only the thread whose turn it is waits on the lease itself (which polls,
#: backing off to a second: many threads polling would waste most of it)
_turns: dict[str, threading.RLock] = {}
_turns_mutex = threading.Lock()


@contextlib.contextmanager
def _turn(name: str, cancelled: threading.Event | None = None):
    from swamp.datastore.locks import lock_timeout_ms
    from swamp.errors import LockTimeoutError

    with _turns_mutex:
        turn = _turns.setdefault(name, threading.RLock())  # a thread at its turn takes it again
    if not cancellable_waits.acquire_turn(turn, lock_timeout_ms() / 1000, cancelled, name):
        raise LockTimeoutError(f"timed out waiting for {name!r}: other steps of this process hold it",
                               hint="raise SWAMP_LOCK_TIMEOUT_MS, or lower the step's concurrency")
    try:
        yield
    finally:
        turn.release()


class PublishingLeases:
    """``add`` is given the sync counts of the pulls taken under a lease;
    ``session(command, leases)`` opens a session of its own for a
    ``publishing`` outside ``held`` (default: lifecycle.changing)."""

    def __init__(self, repo, add, session=None) -> None:
        self.repo = repo
        self._add = add
        self._session = session or (lambda command, leases: changing(repo, command, leases=leases))
        self._mutex = threading.Lock()
        #: thread -> the leases its step's ``publishing`` took: let go when ``held`` ends
        self._held: dict[int, contextlib.ExitStack] = {}

    @contextlib.contextmanager
    def held(self):
        """Around a step's session (in the step's thread): the leases taken
        inside are let go after the session, so its push is made under them."""
        if getattr(self.repo.datastore, "offline", False):
            # refused before its method runs, as when the step's session took the lease itself
            from swamp.errors import SwampError

            raise SwampError("this step takes its model's lease on the shared datastore, which --offline "
                             "cannot do", code="offline", hint="run it without --offline")
        key = threading.get_ident()
        with contextlib.ExitStack() as leases:
            with self._mutex:
                outer = self._held.get(key)  # a probe's step inside a step's session: nested
                self._held[key] = leases
            try:
                yield
            finally:
                with self._mutex:
                    if outer is None:
                        self._held.pop(key, None)
                    else:
                        self._held[key] = outer

    @contextlib.contextmanager
    def publishing(self, definition, command: str, *, cancelled: threading.Event | None = None):
        """The model's lease taken now, then a pull; held until ``held``
        ends. Outside ``held``, a session of its own (lease, pull, the body,
        push, release). ``cancelled`` (the step's Control's event): set while
        the step waits for its turn or the lease, the wait ends with a
        SwampError coded ``cancelled``, nothing taken (the turn:
        app/cancellable_waits.py; the lease: datastore/sync/lease.py)."""
        name = model_lock_name(definition.type, definition.id)
        with self._mutex:
            leases = self._held.get(threading.get_ident())
        if leases is None:
            with self._session(command, [name]):
                yield
            return
        # A one-lane run (app/one_lane_runs.py) holds the lease since before its step's pull:
        # nothing can have been published since, so that pull stands and no second is needed.
        kept = self.repo.datastore.held.holds(name)
        leases.enter_context(_turn(name, cancelled))
        leases.enter_context(self.repo.datastore.lock(name, cancelled=cancelled))
        if not kept:
            self._add(refresh(self.repo))
        yield
