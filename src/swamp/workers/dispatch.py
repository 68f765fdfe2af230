"""Dispatching a placed step to a Dask worker and waiting for it.

Dask's own retries are off (``retries=0``), and so is its re-run of a task
whose worker died (the scheduler's ``allowed_failures`` is set to 0 when a
dispatcher connects): a step's method may have touched the outside world,
so a step whose worker is lost fails with "worker lost" and is never run a
second time behind the user's back."""

from __future__ import annotations

import threading
import time
import uuid

from swamp.app.remote_steps import NoWorkerError, Placement, StepJob, StepOutcome, WorkerLostError
from swamp.errors import SwampError
from swamp.workers import placement as labels_mod

#: how long a placed step without queueTimeout waits for a fitting worker to connect
DEFAULT_QUEUE_TIMEOUT = 60.0
_POLL = 1.0


class SchedulerUnreachableError(SwampError):
    code = "scheduler_unreachable"


def _no_rerun_on_worker_loss(dask_scheduler=None) -> int:
    dask_scheduler.allowed_failures = 0
    return 0


def connect(address: str, *, timeout: float = 10.0):
    """A Dask client on ``address`` (tcp://HOST:PORT or tls://...; TLS
    settings come from Dask's configuration, see docs/workers.md)."""
    from distributed import Client

    try:
        return Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError) as e:
        raise SchedulerUnreachableError(f"cannot reach the Dask scheduler at {address}: {e}",
                                        hint="start one with 'dask scheduler', and check the address") from None


class DaskDispatcher:
    """Runs steps on the workers of one Dask scheduler (app/remote_steps.Dispatcher)."""

    def __init__(self, address: str, *, client=None) -> None:
        self.address = address
        self.client = client or connect(address)
        self.client.run_on_scheduler(_no_rerun_on_worker_loss)
        self._mutex = threading.Lock()
        self._workers: dict = {}
        self._seen = 0.0

    def close(self) -> None:
        self.client.close()

    def workers(self) -> dict:
        """The scheduler's workers, asked at most once a second however
        many steps are waiting."""
        with self._mutex:
            if time.monotonic() - self._seen >= _POLL:
                self._workers = dict(self.client.scheduler_info(n_workers=-1).get("workers", {}))
                self._seen = time.monotonic()
            return self._workers

    def _fitting(self, placement: Placement) -> list[str]:
        return [addr for addr, w in self.workers().items()
                if labels_mod.fits(w, placement.labels, placement.target)]

    def _wait_for_worker(self, placement: Placement, deadline: float) -> list[str]:
        while True:
            found = self._fitting(placement)
            if found:
                return found
            if time.monotonic() >= deadline:
                raise self._none(placement)
            time.sleep(min(_POLL, max(0.05, deadline - time.monotonic())))

    @staticmethod
    def _none(placement: Placement) -> NoWorkerError:
        wait = placement.queue_timeout or DEFAULT_QUEUE_TIMEOUT
        return NoWorkerError(f"no worker with {placement.describe()} connected within {wait:g} s (queueTimeout)",
                             hint="start one with 'swamp worker start --scheduler ... "
                                  + " ".join(f"--label {k}={v}" for k, v in sorted(placement.labels.items()))
                                  + (f" --name {placement.target}" if placement.target else "")
                                  + "', or see who is connected with 'swamp worker list'")

    def run(self, job: StepJob, placement: Placement) -> StepOutcome:
        from distributed import TimeoutError as DaskTimeout
        from distributed.scheduler import KilledWorker

        from swamp.workers import task

        wait = placement.queue_timeout or DEFAULT_QUEUE_TIMEOUT
        fitting = self._wait_for_worker(placement, time.monotonic() + wait)
        what = f"{job.workflow_name}: {job.step_name}" if job.step_name else f"{job.definition.name}.{job.method}"
        key = f"swamp-step-{what}-{uuid.uuid4().hex[:12]}"  # `swamp worker list` shows what
        future = self.client.submit(task.run, job, key=key, resources=labels_mod.step_resources(placement.labels),
                                    workers=fitting if placement.target else None, allow_other_workers=False,
                                    retries=0, pure=False)
        alone_since = None  # when the last fitting worker left while the step was still queued
        try:
            while True:
                try:
                    return future.result(timeout=_POLL)
                except (DaskTimeout, TimeoutError):
                    pass
                if future.status != "pending" or self._fitting(placement):
                    alone_since = None
                    continue
                alone_since = alone_since or time.monotonic()
                if time.monotonic() - alone_since >= wait:
                    future.cancel()
                    raise self._none(placement) from None
        except KilledWorker as e:
            raise WorkerLostError(f"worker lost: the worker running the step went away ({_who(e)}); "
                                  "nothing it had not pushed is published",
                                  hint="the step was not retried (its method may have touched the outside world); "
                                       "run it again with 'swamp workflow resume --from STEP'") from None
        except SwampError:
            raise
        except Exception as e:  # swamp's own failure on the worker, reported as the step's
            raise SwampError(f"the worker failed to run the step: {type(e).__name__}: {e}") from None


def _who(e) -> str:
    last = getattr(e, "last_worker", None)
    return str(getattr(last, "name", None) or getattr(last, "address", None) or last or "unknown")
