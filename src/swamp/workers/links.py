"""The links between the scheduler, the workers and the dispatching
processes: mutual TLS with the team's certificates (team_certs), or, only
when the user says so, plain TCP.

A placed step carries its secrets, and whoever can talk to the scheduler
can run code on every worker. So a ``tls://`` address is the default and
the only one taken silently: each party presents its certificate and
accepts only peers whose certificate the team CA signed
(``distributed.security.Security`` with ``require_encryption``). A
``tcp://`` address (or one without a scheme, which Dask reads as tcp) is
refused unless the command was given its insecure flag, and then a warning
says what that exposes.

Where a worker listens: where its scheduler is reachable (bind_host), not
every interface."""

from __future__ import annotations

import ipaddress
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

from swamp.errors import InsecureLinkError, UsageError
from swamp.workers import team_certs

SECURE_SCHEME = "tls"


@dataclass(frozen=True)
class LinkSettings:
    """What a command was told about its link to the scheduler (None: the
    defaults): where the team's certificates are, which one it presents,
    whether plain TCP is allowed."""

    certs_dir: Path | None = None
    cert_name: str | None = None
    insecure: bool = False


def scheme_of(address: str) -> str:
    scheme, sep, _ = str(address).partition("://")
    return scheme.lower() if sep else "tcp"


def security_for(address: str, settings: LinkSettings | None, *, default_name: str,
                 insecure_flag: str = "--insecure"):
    """The ``distributed.security.Security`` to reach ``address`` with, or
    None for a plain link the user allowed (``insecure_flag``: the flag that
    allows it on this command, for the message)."""
    settings = settings or LinkSettings()
    scheme = scheme_of(address)
    if scheme != SECURE_SCHEME:
        if not settings.insecure:
            raise InsecureLinkError(
                f"refused: {address} is a {scheme}:// link, neither authenticated nor encrypted; anyone who "
                "reaches it could run code on the workers and read the secrets sent with placed steps",
                hint=f"use the team's certificates and a tls:// address (docs/workers.md, 'Enrolling'), or "
                     f"pass {insecure_flag} on a network only you can reach")
        warn_insecure(address)
        return None
    from distributed.security import Security

    folder = settings.certs_dir or team_certs.default_dir()
    name = team_certs.check_name(settings.cert_name or default_name)
    ca, cert, key = team_certs.party_files(folder, name)
    return Security(require_encryption=True, tls_ca_file=str(ca),
                    tls_client_cert=str(cert), tls_client_key=str(key),
                    tls_worker_cert=str(cert), tls_worker_key=str(key),
                    tls_scheduler_cert=str(cert), tls_scheduler_key=str(key))


def warn_insecure(address: str) -> None:
    print(f"warning: INSECURE link to {address}: not authenticated, not encrypted. Anyone who can reach it can "
          "run code on the workers, join as a worker and receive placed steps with their secrets.",
          file=sys.stderr, flush=True)


def host_of(address: str) -> str:
    """``tls://10.0.0.5:8786`` -> ``10.0.0.5`` (``[::1]`` -> ``::1``)."""
    rest = str(address).partition("://")[2] or str(address)
    host = rest.rsplit(":", 1)[0] if rest.count(":") == 1 or rest.startswith("[") else rest
    return host.strip("[]")


def port_of(address: str) -> int:
    rest = str(address).partition("://")[2] or str(address)
    try:
        return int(rest.rsplit(":", 1)[1])
    except (IndexError, ValueError):
        return 8786


def bind_host(scheduler: str) -> str:
    """The address a worker listens on: loopback for a scheduler on this
    machine, else this machine's address on the route to the scheduler
    (what the kernel would send from; no packet is sent)."""
    host = host_of(scheduler)
    try:
        infos = socket.getaddrinfo(host, port_of(scheduler), type=socket.SOCK_DGRAM)
    except socket.gaierror as e:
        raise UsageError(f"cannot resolve the scheduler's host {host!r}: {e}",
                         hint="check --scheduler, or say where the worker listens with --host") from None
    family, _, _, _, sockaddr = infos[0]
    if ipaddress.ip_address(sockaddr[0]).is_loopback:
        return "::1" if family == socket.AF_INET6 else "127.0.0.1"
    with socket.socket(family, socket.SOCK_DGRAM) as s:
        try:
            s.connect(sockaddr)  # a UDP connect only picks the route
            return s.getsockname()[0]
        except OSError as e:
            raise UsageError(f"no route to the scheduler's host {host!r}: {e}",
                             hint="say where the worker listens with --host") from None
