"""What a worker runs. ``swamp worker start`` opens the repository once for
the process (``serve``); each step Dask hands the worker then goes through
``run``, the same use case for every step (app/remote_steps.run_step),
under a ``steps.StepControl`` through which a cancel reaches it and its
log lines stream back."""

from __future__ import annotations

import dataclasses
import threading

_state: dict = {}
_lock = threading.Lock()


def serve(repo, *, identity=None) -> None:
    """Make this process a swamp worker for ``repo``: load the type registry
    now (it is not safe to load from two threads), keep it for every step.
    ``identity``: (certificate DER, key) that opens the steps' sealed secrets."""
    from swamp.models.registry import registry_for
    from swamp.util.file_modes import restrict_umask

    restrict_umask()  # however this worker was started, what its steps write is not writable by others
    registry = registry_for(repo)
    registry.all()
    with _lock:
        _state.update(repo=repo, registry=registry, identity=identity)


def run(job):
    """Run one step here; called by Dask on the worker."""
    from distributed import get_worker

    from swamp.app.remote_steps import run_step
    from swamp.errors import SwampError

    from swamp.workers import steps

    with _lock:
        repo, registry, identity = _state.get("repo"), _state.get("registry"), _state.get("identity")
    if repo is None:
        raise SwampError("this Dask worker is not a swamp worker (no repository)",
                         hint="start workers with 'swamp worker start --repo-dir ...'")
    worker = get_worker()
    if job.sealed_secrets is not None:  # sealed to this worker's key by the dispatcher
        from swamp.workers.sealed import open_sealed
        from swamp.errors import SealError

        if identity is None:
            raise SealError("this step's secrets are sealed, and this worker has no team certificate")
        opened = open_sealed(job.sealed_secrets, cert_der=identity[0], key=identity[1],
                             context=str(worker.get_current_task()))
        job = dataclasses.replace(job, secrets=opened, sealed_secrets=None)
    control = steps.StepControl(worker.get_current_task(), topic=getattr(job, "log_topic", None),
                                step=job.step_name or "", emit=worker.log_event)
    with steps.running(control):
        return run_step(repo, job, worker=str(worker.name), registry=registry, control=control)
