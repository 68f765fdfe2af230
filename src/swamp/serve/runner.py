"""Running the API under uvicorn, and stopping it gracefully.

On SIGTERM (or SIGINT) the server stops accepting connections and new
state-changing requests at once, lets requests in flight finish for up to
``shutdown_timeout`` seconds, then asks workflow runs still going to stop
(their steps in flight are stopped and their engine records them cancelled) and
waits for them up to ``state.CANCEL_GRACE_S`` more. A run is never left recorded as running by a clean
shutdown; a killed process leaves its runs to ``workflow cancel``, which
cancels a run whose process is gone."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from swamp.errors import UsageError

if TYPE_CHECKING:
    from swamp.app.repository import Repo

LOOPBACK = ("127.0.0.1", "::1", "localhost")


def check_exposure(host: str, auth_mode: str, insecure: bool) -> None:
    if auth_mode == "none" and host not in LOOPBACK and not insecure:
        raise UsageError(f"--auth-mode none on {host} would let anyone who can reach it run anything",
                         hint="use --auth-mode token (mint tokens with 'swamp access token mint'), "
                              "or pass --insecure if a proxy in front of it authenticates")


def serve(repo: Repo, *, host: str, port: int, settings, cert_file: str | None = None,
          key_file: str | None = None, reuse_port: bool = False) -> None:
    import uvicorn

    from swamp.serve.app import build_app
    from swamp.vault.process_secrets import register_process_secrets

    register_process_secrets()  # its webhook secrets, AWS keys, tokens: masked in every answer from the start
    app = build_app(repo, settings)
    state = app.state.serve

    class Server(uvicorn.Server):
        def handle_exit(self, sig, frame):
            state.shutting_down = True  # refuse new runs from now on, not only once connections close
            super().handle_exit(sig, frame)
            # A stop asked for is a clean exit (0), not death by the signal uvicorn would re-raise.
            self._captured_signals.clear()

    from swamp.serve.http_limits import Limits, protocol

    limits = Limits(header_timeout=settings.header_timeout, body_timeout=settings.body_timeout,
                    max_connections=settings.max_connections)
    config = uvicorn.Config(app, host=host, port=port, ssl_certfile=cert_file, ssl_keyfile=key_file,
                            log_level="warning", access_log=False, lifespan="on", http=protocol(limits),
                            timeout_graceful_shutdown=max(settings.shutdown_timeout, 0.1))
    scheme = "https" if cert_file else "http"
    print(f"swamp serve: {scheme}://{host}:{port} (auth {settings.auth_mode}, repository {repo.root})",
          file=sys.stderr, flush=True)
    if settings.local_token:
        _print_login(scheme, host, port, settings)
    elif settings.auth_mode == "token":  # --port 0: no address to keep a local token for
        print("swamp serve: no local token on a port chosen by the system; use a minted one "
              "('swamp access token mint NAME')", file=sys.stderr, flush=True)
    from swamp.serve.announce import startup_lines

    for line in startup_lines(settings):
        print(f"swamp serve: {line}", file=sys.stderr, flush=True)
    Server(config).run(sockets=[shared_socket(host, port)] if reuse_port else None)
    if state.inflight:
        # Past every bound: exit now rather than wait on worker threads forever.
        print(f"swamp serve: stopped with {len(state.inflight)} run(s) unfinished", file=sys.stderr, flush=True)
        import os

        os._exit(1)
    print("swamp serve: stopped", file=sys.stderr, flush=True)


def shared_socket(host: str, port: int):
    """A listening socket on host:port with SO_REUSEPORT: several servers
    bind the same port and the kernel spreads new connections across them.
    Linux lets only processes of the same user share a port this way, so
    no other user's process can take a share of the connections."""
    import socket

    if not hasattr(socket, "SO_REUSEPORT"):
        raise UsageError("--reuse-port needs SO_REUSEPORT, which this system does not have",
                         hint="run replicas on their own ports behind a proxy instead (docs/serve.md)")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # (IPPROTO_TCP named: asyncio sets TCP_NODELAY only on sockets that say they are TCP)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as e:
        sock.close()
        raise UsageError(f"cannot listen on {host}:{port} with --reuse-port: {e.strerror}",
                         hint="every process on that port must use --reuse-port, as the same user") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def _print_login(scheme: str, host: str, port: int, settings) -> None:
    """Where the local user's token is, and the dashboard's login link (the
    token in it becomes a session cookie and leaves the address bar)."""
    from swamp.serve.front_door import WILDCARD_HOSTS

    name = host if host not in WILDCARD_HOSTS else "127.0.0.1"
    name = f"[{name}]" if ":" in name else name
    print(f"swamp serve: your token is in {settings.local_token_file} ('swamp --server {scheme}://{name}:{port}' "
          "uses it)", file=sys.stderr, flush=True)
    if settings.dashboard:
        print(f"swamp serve: open the dashboard: {scheme}://{name}:{port}/ui/login?token={settings.local_token}",
              file=sys.stderr, flush=True)
