"""The use cases of the worker fleet (docs/workers.md): what a command is
told about its link to the scheduler, the labels a person typed, what a
worker is started with, and what the scheduler says of its workers and of
the placed steps that wait for one.

The Dask transport (swamp.workers) does the talking; the fronts reach it
only through here. Starting the worker or the scheduler process itself is
the one thing left to the CLI: those processes are entry points beside it
(swamp.workers.worker, swamp.workers.scheduler), and take what
``worker_start`` decided."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from swamp.workers import placement

if TYPE_CHECKING:  # links loads team_certs and the socket helpers: only once a link is described
    from swamp.workers.links import LinkSettings


def link_settings(*, certs_dir: Path | None = None, cert_name: str | None = None,
                  insecure: bool = False) -> LinkSettings | None:
    """How a command reaches the scheduler: the team-certs folder, the
    certificate it presents, whether plain tcp:// is allowed. None when
    nothing was said (the defaults, what the fast lane passes too)."""
    if certs_dir is None and cert_name is None and not insecure:
        return None
    from swamp.workers.links import LinkSettings

    return LinkSettings(certs_dir=certs_dir, cert_name=cert_name, insecure=insecure)


def parse_labels(pairs) -> dict[str, str]:
    """The labels of ``--label KEY=VALUE`` (a worker's, or a placement's),
    checked: a wrong one is a UsageError before anything starts."""
    return placement.parse_labels(pairs)


@dataclass(frozen=True)
class WorkerStart:
    """What ``swamp worker start`` starts: every argument checked, the
    enrolment (if a token was given) done."""

    scheduler: str
    labels: dict[str, str] = field(default_factory=dict)
    concurrency: int = 1
    name: str | None = None
    host: str | None = None
    link: LinkSettings | None = None


def worker_start(repo, scheduler: str, *, labels=(), concurrency: int = 1, name: str | None = None,
                 host: str | None = None, link: LinkSettings | None = None, token: str | None = None) -> WorkerStart:
    """Check a worker's arguments and, with an enrolment ``token``, enrol
    this machine through the shared datastore first (its certificate lands
    in the link's team-certs folder; the worker is named after it unless
    ``name`` says otherwise)."""
    parsed = parse_labels(labels)  # a wrong label fails before the enrolment uses up the token
    if token:
        from swamp.app import team_certs  # the enrolment's cryptography loads only when a token is given

        name = name or team_certs.enrol(repo, token, link.certs_dir if link else None)["name"]
    return WorkerStart(scheduler=scheduler, labels=parsed, concurrency=concurrency, name=name, host=host, link=link)


def list_workers(scheduler: str, *, link: LinkSettings | None = None) -> list[dict]:
    """The swamp workers connected to ``scheduler``, by name: address,
    labels, concurrency and the steps each runs now."""
    from swamp.workers.roster import roster

    return roster(scheduler, link=link)


def queue(scheduler: str, *, link: LinkSettings | None = None) -> list[dict]:
    """The placed steps waiting for a worker, oldest first, with the
    connected workers that fit each (workers/queue.py)."""
    from swamp.workers.queue import queue as waiting

    return waiting(scheduler, link=link)


def verify(scheduler: str, *, link: LinkSettings | None = None, name: str | None = None, labels=(),
           timeout: float | None = None) -> list[dict]:
    """Each connected worker (or ``name``, or those with every label of
    ``labels``, given as KEY=VALUE) asked to answer; one row per worker,
    ``ok`` False for one that did not, or whose datastore did not."""
    from swamp.workers import verify as probe

    chosen = parse_labels(labels)
    return probe.verify(scheduler, link=link, name=name, labels=chosen,
                        timeout=probe.PROBE_TIMEOUT if timeout is None else timeout)


def failed(rows: list[dict]) -> bool:
    """Whether a ``verify`` found a worker that did not answer (exit 1)."""
    return not all(r["ok"] for r in rows)
