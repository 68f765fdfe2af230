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
from dataclasses import dataclass
from typing import Iterator

from swamp.workflows.placement import Dispatcher


@dataclass(frozen=True)
class PlacedSteps:
    """A run's placed steps: the dispatcher that carries them (None: no
    scheduler configured, and a placed step is refused), and whether every
    model_method step must be placed (--remote-only)."""

    dispatcher: Dispatcher | None = None
    remote_only: bool = False


NONE = PlacedSteps()


def dask_dispatcher(scheduler: str, link=None) -> Dispatcher:
    """The Dask dispatcher on ``scheduler`` (swamp.workers.dispatch), its
    link the command's team-certificate settings (workers/links.py)."""
    from swamp.workers.dispatch import DaskDispatcher

    return DaskDispatcher(scheduler, link=link)


def open_placed_steps(scheduler: str | None, *, link=None, remote_only: bool = False) -> PlacedSteps:
    """The placed steps of these worker settings; connects to the scheduler
    when one is given (the caller closes it: ``close``)."""
    if not scheduler and not remote_only:
        return NONE
    return PlacedSteps(dask_dispatcher(scheduler, link) if scheduler else None, remote_only)


def close(placed: PlacedSteps) -> None:
    if placed.dispatcher is not None:
        placed.dispatcher.close()


@contextlib.contextmanager
def opened(scheduler: str | None, *, link=None, remote_only: bool = False) -> Iterator[PlacedSteps]:
    """``open_placed_steps`` for one command, closed when it ends."""
    placed = open_placed_steps(scheduler, link=link, remote_only=remote_only)
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
