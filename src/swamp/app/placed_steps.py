"""Where a run's placed steps go: the one place that turns a command's (or
a server's) worker settings into a dispatcher, so no front builds a
transport and no module global chooses one.

A front asks ``opened(scheduler, link=..., remote_only=...)`` for a
``PlacedSteps`` value and hands it to the run use cases
(``app.workflows.run(..., placed=...)``). A long-running server that opens
one repository session attaches it to that session once (``attach``);
a run given no ``placed`` takes what its repository session carries."""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass
from typing import Iterator

from swamp.errors import UsageError
from swamp.workflows.placement import Dispatcher, Placement


@dataclass(frozen=True)
class PlacedSteps:
    """A run's placed steps: the dispatcher that carries them (None: no
    scheduler configured, and a placed step is refused), and whether every
    model_method step must be placed (--remote-only)."""

    dispatcher: Dispatcher | None = None
    remote_only: bool = False
    #: the longest a placed step waits for a fitting worker (--queue-timeout; a step's own shorter one wins)
    queue_timeout: float | None = None

    def can_dispatch(self) -> bool:
        return self.dispatcher is not None

    def bounded(self, placement: Placement) -> Placement:
        """``placement`` with its wait for a worker bounded by ``queue_timeout``."""
        if self.queue_timeout is None:
            return placement
        own = placement.queue_timeout
        return dataclasses.replace(placement, queue_timeout=self.queue_timeout if own is None
                                   else min(own, self.queue_timeout))


NONE = PlacedSteps()


def dask_dispatcher(scheduler: str, link=None) -> Dispatcher:
    """The Dask dispatcher on ``scheduler`` (swamp.workers.dispatch), its
    link the command's team-certificate settings (workers/links.py)."""
    from swamp.workers.dispatch import DaskDispatcher

    return DaskDispatcher(scheduler, link=link)


def open_placed_steps(scheduler: str | None, *, link=None, remote_only: bool = False,
                      queue_timeout: float | None = None) -> PlacedSteps:
    """The placed steps of these worker settings; connects to the scheduler
    when one is given (the caller closes it: ``close``)."""
    if queue_timeout is not None and not queue_timeout > 0:
        raise UsageError(f"--queue-timeout must be a positive number of seconds, not {queue_timeout:g}")
    if not scheduler and not remote_only:
        return PlacedSteps(queue_timeout=queue_timeout)
    return PlacedSteps(dask_dispatcher(scheduler, link) if scheduler else None, remote_only, queue_timeout)


def close(placed: PlacedSteps) -> None:
    if placed.dispatcher is not None:
        placed.dispatcher.close()


@contextlib.contextmanager
def opened(scheduler: str | None, *, link=None, remote_only: bool = False,
           queue_timeout: float | None = None) -> Iterator[PlacedSteps]:
    """``open_placed_steps`` for one command, closed when it ends."""
    placed = open_placed_steps(scheduler, link=link, remote_only=remote_only, queue_timeout=queue_timeout)
    try:
        yield placed
    finally:
        close(placed)


def attach(repo, placed: PlacedSteps) -> None:
    """The placed steps of every run started on this repository session
    without its own (``swamp serve --scheduler``: its one session)."""
    repo.placed_steps = placed


def attached(repo) -> PlacedSteps:
    return getattr(repo, "placed_steps", None) or NONE
