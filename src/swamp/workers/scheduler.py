"""``swamp worker scheduler``: a Dask scheduler for swamp's workers that
only enrolled parties can talk to. It listens on tls:// with the team's
certificate (links.security_for, as ``scheduler``), on loopback unless
told a host, and has no dashboard: the HTTP port Dask always opens, which
has no authentication, answers a health check only (HTTP_ROUTES)."""

from __future__ import annotations

import asyncio
import signal

from swamp.workers.links import security_for

#: the team certificate the scheduler presents unless told another (--cert-name)
SCHEDULER_CERT = "scheduler"
#: what Dask's HTTP port (which has no authentication) answers: its health check only, not
#: the info and JSON pages that show the workers and the steps' task keys
HTTP_ROUTES = ("distributed.http.health",)


def run(*, host: str, port: int, link=None, on_ready=None) -> None:
    """Serve until SIGINT or SIGTERM. Blocks."""
    scheme = "tcp" if link is not None and link.insecure else "tls"
    address = f"{scheme}://{_bracketed(host)}:{port}"
    security = security_for(address, link, default_name=SCHEDULER_CERT)
    try:
        asyncio.run(_serve(address, security, on_ready))
    except (OSError, RuntimeError) as e:  # Dask's "failed to start" wraps the OSError
        from swamp.errors import SwampError

        cause = e.__cause__ if isinstance(e, RuntimeError) and e.__cause__ is not None else e
        if not isinstance(cause, OSError):
            raise
        raise SwampError(f"the scheduler cannot listen on {address}: {cause.strerror or cause}",
                         hint="choose another --port or --host, or stop what listens there") from None


async def _serve(address: str, security, on_ready) -> None:
    import dask
    from distributed import Scheduler

    from swamp.workers.links import host_of, port_of, scheme_of

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    # allowed_failures=0: a step whose worker died is never run again behind the user's back
    # (dispatch.py sets the same on any scheduler it connects to)
    host = host_of(address)
    with dask.config.set({"distributed.scheduler.http.routes": list(HTTP_ROUTES)}):
        scheduler = Scheduler(host=host, port=port_of(address), protocol=scheme_of(address), security=security,
                              dashboard=False, dashboard_address=f"{_bracketed(host)}:0", allowed_failures=0)
    async with scheduler:
        if on_ready is not None:
            on_ready(scheduler.address)
        finished = asyncio.ensure_future(scheduler.finished())
        stopping = asyncio.ensure_future(stop.wait())
        await asyncio.wait([finished, stopping], return_when=asyncio.FIRST_COMPLETED)
        for f in (finished, stopping):
            f.cancel()


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host
