"""Dispatching a placed step to a Dask worker and waiting for it.

Dask's own retries are off (``retries=0``), and so is its re-run of a task
whose worker died (the scheduler's ``allowed_failures`` is set to 0 when a
dispatcher connects): a step's method may have touched the outside world,
so a step whose worker is lost fails with "worker lost" and is never run a
second time behind the user's back.

A cancel (``cancelled()`` polled while the step runs, or an interrupt of
the waiting thread) cancels the step's future; the worker sees its task
cancelled and stops the step (swamp.workers.steps). The step's log lines
come back on one Dask event topic per dispatcher (``swamp-log-<client
id>``), routed to the waiting step by the task's key."""

from __future__ import annotations

import dataclasses
import threading
import time
import uuid

from swamp.errors import (NoWorkerError, SchedulerUnreachableError, SealError, StepCancelledError, SwampError,
                          WorkerLostError)
from swamp.workflows.placement import Placement, StepJob, StepOutcome
from swamp.workers import placement as labels_mod

#: how long a placed step without queueTimeout waits for a fitting worker to connect
DEFAULT_QUEUE_TIMEOUT = 60.0
_POLL = 1.0
#: how often a waiting step looks for a cancel of its run
_CANCEL_POLL = 0.2
#: seconds between the progress lines of a step waiting for a fitting worker
WAIT_NOTE_INTERVAL = 10.0
#: the team certificate a dispatching process presents unless told another (--cert-name)
DISPATCHER_CERT = "dispatcher"


UNREACHABLE_HINT = ("start one with 'swamp worker scheduler'; check the address, and that the scheduler and this "
                    "machine hold certificates of the same team CA ('swamp worker cert list')")


def _no_rerun_on_worker_loss(dask_scheduler=None) -> int:
    dask_scheduler.allowed_failures = 0
    return 0


def connect(address: str, *, link=None, timeout: float = 10.0, insecure_flag: str = "--insecure-scheduler"):
    """A Dask client on ``address``: tls:// with this machine's team
    certificate, or tcp:// only when ``link`` (links.LinkSettings) allows it
    (the command's ``insecure_flag``)."""
    from swamp.workers.links import security_for

    return _client(address, security_for(address, link, default_name=DISPATCHER_CERT, insecure_flag=insecure_flag),
                   timeout)


def _client(address: str, security, timeout: float = 10.0):
    from distributed import Client

    try:
        return Client(address, timeout=timeout, set_as_default=False, security=security)
    except (OSError, TimeoutError) as e:
        raise SchedulerUnreachableError(f"cannot reach the Dask scheduler at {address}: {e}",
                                        hint=UNREACHABLE_HINT) from None


class DaskDispatcher:
    """Runs steps on the workers of one Dask scheduler (workflows/placement.Dispatcher)."""

    def __init__(self, address: str, *, client=None, link=None) -> None:
        from swamp.workers.links import security_for

        self.address = address
        #: the team certificate's TLS settings (None: a plain link the user allowed, or a given client)
        self.security = None
        if client is None:
            self.security = security_for(address, link, default_name=DISPATCHER_CERT,
                                         insecure_flag="--insecure-scheduler")
            client = _client(address, self.security)
        self.client = client
        #: worker address -> the certificate it presented (DER), for sealing steps' secrets to it
        self._certs: dict[str, bytes] = {}
        self._certs_mutex = threading.Lock()  # steps are dispatched from several threads at once
        self.client.run_on_scheduler(_no_rerun_on_worker_loss)
        self._mutex = threading.Lock()
        self._workers: dict = {}
        self._seen = 0.0
        #: task key -> on_log(line) of the step waiting for it
        self._listeners: dict = {}
        self.log_topic = f"swamp-log-{self.client.id}"
        self.client.subscribe_topic(self.log_topic, self._on_event)

    def close(self) -> None:
        try:
            self.client.unsubscribe_topic(self.log_topic)
            self.client.run_on_scheduler(_forget_topic, topic=self.log_topic)
        except Exception:  # noqa: BLE001 - closing anyway
            pass
        self.client.close()

    def _on_event(self, event) -> None:
        """A log line of a step (on the client's event loop: cheap)."""
        _, msg = event
        if isinstance(msg, dict):
            listener = self._listeners.get(msg.get("key"))
            if listener is not None and isinstance(msg.get("line"), str):
                listener(msg["line"])

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

    def _wait_for_worker(self, placement: Placement, deadline: float, cancelled=None, on_wait=None) -> list[str]:
        start, noted = time.monotonic(), None
        while True:
            found = self._fitting(placement)
            if found:
                return found
            now = time.monotonic()
            if on_wait is not None and (noted is None or now - noted >= WAIT_NOTE_INTERVAL):
                noted = now  # a line at once, then one every WAIT_NOTE_INTERVAL: the user sees why nothing moves
                _note(on_wait, placement, now - start, placement.queue_timeout or DEFAULT_QUEUE_TIMEOUT)
            if time.monotonic() >= deadline:
                raise self._none(placement)
            if cancelled is not None and cancelled():
                raise _cancelled(None)
            time.sleep(min(_CANCEL_POLL if cancelled is not None else _POLL,
                           max(0.05, deadline - time.monotonic())))

    @staticmethod
    def _none(placement: Placement) -> NoWorkerError:
        wait = placement.queue_timeout or DEFAULT_QUEUE_TIMEOUT
        return NoWorkerError(f"no worker with {placement.describe()} connected within {wait:g} s (queueTimeout)",
                             hint="start one with 'swamp worker start --scheduler ... "
                                  + " ".join(f"--label {k}={v}" for k, v in sorted(placement.labels.items()))
                                  + (f" --name {placement.target}" if placement.target else "")
                                  + "', or see who is connected with 'swamp worker list'")

    def run(self, job: StepJob, placement: Placement, *, cancelled=None, on_log=None, on_wait=None) -> StepOutcome:
        from swamp.workers import waiting_steps

        wait = placement.queue_timeout or DEFAULT_QUEUE_TIMEOUT
        what = f"{job.workflow_name}: {job.step_name}" if job.step_name else f"{job.definition.name}.{job.method}"
        key = f"swamp-step-{what}-{uuid.uuid4().hex[:12]}"  # `swamp worker list` shows what
        waiting_steps.announce(self.client, key, step=what, labels=placement.labels, target=placement.target)
        try:  # until it ends, `swamp worker queue` shows it while it waits
            return self._run(job, placement, key, what, wait, cancelled, on_log, on_wait)
        finally:
            waiting_steps.withdraw(self.client, key)

    def _run(self, job: StepJob, placement: Placement, key: str, what: str, wait: float, cancelled,
             on_log, on_wait) -> StepOutcome:
        from distributed import TimeoutError as DaskTimeout
        from distributed.scheduler import KilledWorker

        from swamp.workers import task

        fitting = self._wait_for_worker(placement, time.monotonic() + wait, cancelled, on_wait)
        if on_log is not None:
            job = dataclasses.replace(job, log_topic=self.log_topic)  # the same secrets dict: cleared by the caller
            self._listeners[key] = on_log
        if cancelled is not None and cancelled():
            self._listeners.pop(key, None)
            raise _cancelled(None)
        try:
            sent, only = self._sealed(job, fitting, key)
        except BaseException:
            self._listeners.pop(key, None)
            raise
        if only is None and placement.target:
            only = fitting
        future = self.client.submit(task.run, sent, key=key, resources=labels_mod.step_resources(placement.labels),
                                    workers=only, allow_other_workers=False, retries=0, pure=False)
        alone_since = None  # when the last fitting worker left while the step was still queued
        last_look = time.monotonic()
        try:
            while True:
                try:
                    return future.result(timeout=_CANCEL_POLL if cancelled is not None else _POLL)
                except (DaskTimeout, TimeoutError):
                    pass
                if cancelled is not None and cancelled():
                    started = future.status == "pending" and self._running(key)
                    future.cancel(reason="the swamp run was cancelled")
                    raise _cancelled(started)
                if time.monotonic() - last_look < _POLL:
                    continue
                last_look = time.monotonic()
                present = [a for a in self._fitting(placement) if only is None or a in only]
                if future.status != "pending" or present:
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
            future.cancel(reason="the swamp dispatcher failed")  # (a no-op once the task ended)
            raise SwampError(f"the worker failed to run the step: {type(e).__name__}: {e}") from None
        except BaseException:  # an interrupt (Ctrl-C): the step stops on its worker too
            future.cancel(reason="the swamp run was interrupted")
            raise
        finally:
            self._listeners.pop(key, None)

    def _sealed(self, job: StepJob, fitting: list[str], key: str) -> tuple[StepJob, list[str] | None]:
        """The job as it is sent: its secrets sealed to the fitting workers'
        keys (workers/sealed.py) and the step restricted to them; as it is
        on a plain link the user allowed, which has no keys to seal to."""
        if not job.secrets or self.security is None:
            return job, None
        from swamp.workers import sealed

        context = self.security.get_connection_args("client")["ssl_context"]
        present = set(self.workers())
        recipients = {}
        with self._certs_mutex:
            for gone in set(self._certs) - present:  # its address may be another worker's next
                self._certs.pop(gone, None)
            for addr in fitting:
                if addr not in self._certs:
                    try:
                        self._certs[addr] = sealed.peer_certificate(addr, context)
                    except (OSError, SealError):
                        continue  # gone, or not who the scheduler says: not sealed to
                recipients[addr] = self._certs[addr]
        if not recipients:
            raise NoWorkerError(f"no fitting worker could be reached to seal the step's secrets to "
                                f"({', '.join(fitting)})",
                                hint="check that the workers are up ('swamp worker list') and reachable from here")
        boxes = sealed.seal(job.secrets, recipients, context=key)
        return dataclasses.replace(job, secrets={}, sealed_secrets=boxes), sorted(recipients)

    def _running(self, key: str) -> bool:
        """Whether the task has started on a worker."""
        try:
            return bool(self.client.run_on_scheduler(_is_processing, key=key))
        except Exception:  # noqa: BLE001 - only for the message
            return True


def _note(on_wait, placement: Placement, waited: float, limit: float) -> None:
    """One line of progress while a step waits for a fitting worker."""
    try:
        if waited < 1:
            on_wait(f"waiting up to {limit:g} s for a worker with {placement.describe()}")
        else:
            on_wait(f"still waiting for a worker with {placement.describe()}: {waited:.0f} s of {limit:g} s")
    except Exception:  # noqa: BLE001 - progress that cannot be shown never fails the step
        pass


def _cancelled(started: bool | None) -> StepCancelledError:
    if started is False or started is None:
        return StepCancelledError("cancelled: the run was cancelled before the step started on a worker")
    return StepCancelledError("cancelled: the run was cancelled; the step was stopped on its worker and "
                              "nothing it wrote was published")


def _is_processing(dask_scheduler=None, key=None) -> bool:
    ts = dask_scheduler.tasks.get(key)
    return ts is not None and ts.state == "processing"


def _forget_topic(dask_scheduler=None, topic=None) -> int:
    """Drop a closed dispatcher's log topic from the scheduler's memory
    (its lines are in the runs' logs; nobody reads them there)."""
    broker = getattr(dask_scheduler, "_broker", None)
    topics = getattr(broker, "_topics", None)
    if isinstance(topics, dict):
        topics.pop(topic, None)
    return 0


def _who(e) -> str:
    last = getattr(e, "last_worker", None)
    return str(getattr(last, "name", None) or getattr(last, "address", None) or last or "unknown")
