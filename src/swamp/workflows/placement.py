"""The domain's words for a step run elsewhere: where it may run
(``Placement``), what is sent (``StepJob``), what comes back
(``StepOutcome``) and who carries it (a ``Dispatcher``). How that fails
is drawn in swamp.errors: WorkerLostError, NoWorkerError,
StepCancelledError, NoDispatcherError.

Everything here is a plain value: the engine builds the job from its own
state, hands it to its host (``RunHost.dispatch``), and records the
outcome itself; nothing of the run's state crosses the seam. A dispatcher
(swamp.workers.dispatch, on Dask) carries jobs to workers; the worker runs
one through ``app/remote_steps.run_step``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from swamp.errors import ValidationError


@dataclass(frozen=True)
class Placement:
    """Where a step may run: workers carrying every label, or the named one;
    how long to wait for such a worker to be connected."""

    labels: dict[str, str] = field(default_factory=dict)
    target: str | None = None
    queue_timeout: float | None = None

    def describe(self) -> str:
        parts = [f"{k}={v}" for k, v in sorted(self.labels.items())]
        if self.target:
            parts.append(f"worker {self.target}")
        return ", ".join(parts) or "any worker"


@dataclass(frozen=True)
class StepJob:
    """What a worker needs to run one step, and nothing more."""

    definition: Any  # models.definitions.Definition
    method: str
    inputs: dict
    command: str
    variables: dict = field(default_factory=dict)
    #: (vault, key) -> value, for this step only; never written on the worker (cleared once sent)
    secrets: dict = field(default_factory=dict)
    #: the secrets sealed to the workers that may run the step, in their place on the way (workers/sealed.py)
    sealed_secrets: dict | None = None
    overrides: dict = field(default_factory=dict)
    #: a type run directly: its automatic definition is saved in the step's session
    auto: bool = False
    tags: dict | None = None
    triggered_by: str = "workflow"
    #: who the step runs for (util/actors.py), decided where it was dispatched, not on the worker
    initiated_by: str | None = None
    workflow_run_id: str | None = None
    workflow_name: str | None = None
    step_name: str | None = None
    #: the dispatching step's span (W3C), so the worker's spans join its trace
    traceparent: str | None = None
    #: the Dask event topic the worker sends the step's log lines to (set by the dispatcher)
    log_topic: str | None = None
    #: the run's ephemeral data of this model, {(model id, name): entry}: the step reads it
    ephemeral: dict = field(default_factory=dict)
    #: an attempt that is tried again when it fails: then what it wrote is not published (workflows/retries.py)
    discard_failed: bool = False

    def __repr__(self) -> str:  # never the secrets, should a log print the job
        return f"StepJob({self.command!r}, secrets={len(self.secrets)})"


@dataclass(frozen=True)
class StepOutcome:
    """What a worker reports back: its name, the output record's gist, and
    what its session moved."""

    worker: str
    output_id: str | None
    status: str
    error: str | None
    data_artifacts: list = field(default_factory=list)
    sync: dict = field(default_factory=dict)
    #: set when the step ran but the worker's push failed (its next session publishes it)
    unpublished: str | None = None
    #: the model's ephemeral data after the step ({(model id, name): entry}), redacted; never written
    ephemeral: dict | None = None
    #: its output record's stderrTail (a failed command's last lines of stderr)
    stderr_tail: str | None = None


class Dispatcher(Protocol):
    """Runs a StepJob on a worker that fits the placement and returns its
    outcome; raises WorkerLostError, NoWorkerError or StepCancelledError."""

    def run(self, job: StepJob, placement: Placement, *, cancelled: Callable[[], bool] | None = None,
            on_log: Callable[[str], None] | None = None,
            on_wait: Callable[[str], None] | None = None) -> StepOutcome:
        """``cancelled()`` true: cancel the step on its worker and raise
        StepCancelledError. ``on_log(line)``: each line the step logs, as
        it logs it. ``on_wait(line)``: a line of progress while no fitting
        worker is connected yet."""

    def close(self) -> None:
        """Let go of the connection."""


def placement_of(step, render, where: str, item) -> Placement | None:
    """The step's placement, its labels and target rendered for this item
    (``region: ${{ self.site }}`` places each forEach item by its own);
    ``render(value, where, item)`` is the run's Scope.render."""
    p = getattr(step, "placement", None)
    if p is None:
        return None
    labels = render(dict(p.labels or {}), f"{where}.placement.labels", item) or {}
    target = render(p.target, f"{where}.placement.target", item) if p.target else None
    if not isinstance(labels, dict) or not all(isinstance(v, str) for v in labels.values()):
        raise ValidationError("placement.labels must give a map of strings")
    if target is not None and not isinstance(target, str):
        raise ValidationError("placement.target must give a string")
    return Placement(labels=labels, target=target, queue_timeout=p.queueTimeout)


def secrets_for(repo, prepared) -> dict:
    """The values of the vault references the prepared arguments make
    (those the type resolves itself included: it resolves them on the
    worker, which holds no vault key)."""
    from swamp.vault.sentinel import find_sentinels
    from swamp.vault.service import RepoVaults

    found = find_sentinels(prepared.args.model_dump())
    vaults = RepoVaults(repo)
    return {(v, k): vaults.get(v, k) for v, k in found}


def refuse_sentinels(inputs: dict) -> None:
    """A placed step's inputs travel as they are: no vault reference in them."""
    from swamp.vault.sentinel import find_sentinels

    if find_sentinels(inputs):
        raise ValidationError("a placed step's inputs cannot carry vault references",
                              hint="reference the secret in the model's arguments (vault.get there); "
                                   "the worker resolves it with the value sent for the step")
