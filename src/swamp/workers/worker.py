"""Starting a swamp worker (a Dask worker whose steps run against this
repository's shared datastore): the worker process's entry point, which
`swamp worker start` hands what app/worker_fleet.worker_start decided.
Listing a scheduler's workers is workers/roster.py."""

from __future__ import annotations

import asyncio
import signal

from swamp.errors import ConflictError
from swamp.workers import placement

#: how long a worker tries to reach (or reach again) its scheduler before it stops
DEATH_TIMEOUT = 60
#: how long a starting worker tries to reach its scheduler the first time
CONNECT_TIMEOUT = 10
#: the team certificate a worker without --name (or --cert-name) presents
WORKER_CERT = "worker"


def check_repo(repo) -> None:
    """A worker is a peer of the shared datastore: a directory datastore
    would keep what it writes on this machine only."""
    if repo.datastore.kind == "filesystem":
        raise ConflictError("a worker needs a shared datastore; this repository's is a local directory",
                            hint="run 'swamp datastore setup s3 ...' (the same as the dispatching side's) first")


def start(repo, scheduler: str, *, labels: dict[str, str], concurrency: int = 1, name: str | None = None,
          link=None, host: str | None = None, on_ready=None) -> None:
    """Run a worker until it is stopped (SIGINT or SIGTERM) or its scheduler
    goes away for good. Blocks. It presents this machine's team certificate
    (its name, or ``link.cert_name``) on a tls:// scheduler, and listens
    where that scheduler reaches it (``host``, else links.bind_host)."""
    from swamp.workers import task
    from swamp.workers.links import bind_host, security_for

    security = security_for(scheduler, link, default_name=name or WORKER_CERT)  # refused before anything else
    check_repo(repo)
    host = host or bind_host(scheduler)
    task.serve(repo, identity=_identity(security))
    try:
        asyncio.run(_run(repo, scheduler, labels, concurrency, name, on_ready, security, host))
    except (OSError, TimeoutError, EOFError) as e:
        from swamp.workers.dispatch import UNREACHABLE_HINT
        from swamp.errors import SchedulerUnreachableError

        raise SchedulerUnreachableError(f"the worker could not reach the Dask scheduler at {scheduler}: {e}",
                                        hint=UNREACHABLE_HINT) from None
    except RuntimeError as e:  # Dask's "Worker failed to start", from what stopped it
        if e.__cause__ is None:
            raise
        from swamp.errors import SwampError

        raise SwampError(f"the worker could not start on {host}: {e.__cause__}",
                         hint="check --host (an address of this machine) and the scheduler's address") from None


def _identity(security):
    """(certificate DER, private key) this worker presents: what opens the
    secrets dispatchers seal to it (workers/sealed.py). None on a plain link."""
    if security is None:
        return None
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    with open(security.tls_worker_cert, "rb") as f:
        der = x509.load_pem_x509_certificate(f.read()).public_bytes(serialization.Encoding.DER)
    with open(security.tls_worker_key, "rb") as f:
        key = serialization.load_pem_private_key(f.read(), password=None)
    return der, key


async def _reach(scheduler: str, security) -> None:
    """One connection to the scheduler first: a scheduler that is not there,
    or refuses this machine's certificate, is an error within
    CONNECT_TIMEOUT rather than after the worker's DEATH_TIMEOUT."""
    from distributed.comm import connect

    kwargs = security.get_connection_args("worker") if security is not None else {}
    comm = await connect(scheduler, timeout=CONNECT_TIMEOUT, **kwargs)
    try:
        await comm.write({"op": "identity"})
        await asyncio.wait_for(comm.read(), CONNECT_TIMEOUT)  # a refused certificate ends the link here
    finally:
        await comm.close()


async def _run(repo, scheduler, labels, concurrency, name, on_ready, security, host) -> None:
    import dask
    from distributed import Worker

    from swamp.workers.scheduler import HTTP_ROUTES

    await _reach(scheduler, security)
    # for this process: the worker's HTTP port (no authentication) answers a health check only
    dask.config.set({"distributed.worker.http.routes": list(HTTP_ROUTES)})
    worker = Worker(scheduler, name=name, nthreads=concurrency, host=host, security=security,
                    resources=placement.worker_resources(labels, concurrency),
                    local_directory=str(repo.local_dir / "cache" / "worker"),
                    dashboard=False, death_timeout=DEATH_TIMEOUT)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with worker:
        if on_ready is not None:
            on_ready(worker)
        from swamp.workers import steps

        watching = asyncio.ensure_future(steps.watch(worker))  # cancels reach running steps
        finished = asyncio.ensure_future(worker.finished())
        stopping = asyncio.ensure_future(stop.wait())
        await asyncio.wait([finished, stopping], return_when=asyncio.FIRST_COMPLETED)
        for f in (finished, stopping, watching):
            f.cancel()
        steps.cancel_all()  # no step's process outlives its worker

