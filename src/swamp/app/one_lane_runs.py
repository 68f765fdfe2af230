"""Fewer round trips for a run whose steps all run one after another in
the thread that holds the run (a chain of model_method steps on a shared
datastore): the run keeps the model lease its last step took, and its end
goes out in its last step's commit.

Without this, a 3-step chain made 5 commits (the record "running", one per
step, the record's end) and took and released a model lease per step.
With it (docs/sync.md "Requests per workflow step"):

- a step's model lease is kept after its session, while the next step in
  the lane needs the same lease; it is released when a step needs another
  one, and when the run ends (its lease lasts the chain, heartbeats
  included). A peer's `model method run` of that model waits for the chain
  rather than for one step, as it would if it polled between two steps;
- when a step's session ends with every step of the run settled, its
  commit is held open (parked) until the engine's next call, which is the
  save of the run's end: the record's end goes out in the same commit as
  the last step's work, so a peer sees the last step and the run's end
  together, never one without the other. Any other call (a cancel check, a
  step, the run letting go of its lease) publishes the parked commit first.

Only one-lane runs qualify (``qualifies``): a step in another thread could
not re-enter a lease this thread keeps, and would wait for it."""

from __future__ import annotations

import contextlib
import threading
from typing import Callable, ContextManager, Iterator

from swamp.workflows.conditions import TERMINAL


def qualifies(wf) -> bool:
    """Whether every step of ``wf`` runs in the thread that runs the
    workflow: one job per job level, one step per step level, each a
    model_method step that runs here (no forEach, which may fan out to
    lanes of several models; no placement; no nested workflow)."""
    from swamp.workflows import dag

    if any(len(level) != 1 for level in dag.job_levels(wf)):
        return False
    for job in wf.jobs:
        if any(len(level) != 1 for level in dag.step_levels(job)):
            return False
        for step in job.steps:
            if step.task.type != "model_method" or step.forEach is not None \
                    or getattr(step, "placement", None) is not None:
                return False
    return True


class OneLane:
    """The sessions of one one-lane run, opened in the thread that holds it."""

    def __init__(self, ds) -> None:
        self.ds = ds
        self._thread: int | None = None
        self._run = None
        #: (lease name, the ExitStack holding it) kept between steps
        self._kept: tuple[str, contextlib.ExitStack] | None = None
        #: the last step's session, still open: its push waits for the run's end
        self._parked: contextlib.ExitStack | None = None
        self._depth = 0  # sessions open now (a probe's session may open inside a step's)

    def begin(self, run) -> None:
        self._thread, self._run = threading.get_ident(), run

    def here(self) -> bool:
        return self._thread == threading.get_ident()

    @contextlib.contextmanager
    def step(self, lease: str, session: Callable[[], ContextManager], *,
             cancelled: threading.Event | None = None) -> Iterator[None]:
        """A step's session (``session()``) under ``lease``, kept afterwards.
        ``cancelled`` set (the run's stop: a cancel from any peer) ends the
        wait for the lease with a SwampError coded ``cancelled``: nothing
        taken, nothing of the step run (datastore/sync/lease.py)."""
        if self._depth:  # inside another session: it holds what it needs
            with session():
                yield
            return
        self.publish()
        self._keep(lease, cancelled)
        stack = contextlib.ExitStack()
        self._depth += 1
        try:
            with stack:
                stack.enter_context(session())
                yield
                if self._run_settled():
                    self._parked = stack.pop_all()  # published with the run's end (``save``)
        finally:
            self._depth -= 1

    def save(self, write: Callable[[], None], session: Callable[[], ContextManager]) -> None:
        """Call ``write`` in the parked session when there is one (then
        publish it: one commit), else in a session of its own."""
        if self._parked is None or self._depth:
            with session():
                write()
            return
        parked, self._parked = self._parked, None
        with parked:
            write()

    def publish(self) -> None:
        """Publish the parked session, if any (its push)."""
        parked, self._parked = self._parked, None
        if parked is not None:
            parked.close()

    def end(self) -> None:
        """The run lets go: publish what is parked, then release the kept lease."""
        try:
            self.publish()
        finally:
            self._release()

    def _keep(self, lease: str, cancelled: threading.Event | None = None) -> None:
        if self._kept is not None and self._kept[0] == lease:
            return
        self._release()
        stack = contextlib.ExitStack()
        stack.enter_context(self.ds.lock(lease, cancelled=cancelled))
        self._kept = (lease, stack)

    def _release(self) -> None:
        kept, self._kept = self._kept, None
        if kept is not None:
            kept[1].close()

    def _run_settled(self) -> bool:
        run = self._run
        return run is not None and all(s.status in TERMINAL for _, s in run.steps())
