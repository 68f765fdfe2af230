"""The front door: checks every HTTP request gets before any handler, any
token check or any body read.

A browser is the attacker's tool against a server on loopback: a page on
another site can send it requests (a form, a ``no-cors`` fetch with a
``text/plain`` body, which needs no CORS preflight), and DNS rebinding
points a name the attacker owns at 127.0.0.1 so that the page can read
the answers as well. So, in the spirit of Jupyter Server's fixes for the
same attacks:

- ``Host`` must be a name this server answers for: the loopback names with
  its port, the ``--host`` it listens on, an IP address when it listens on
  every interface (rebinding needs a name, never an address), or an
  ``--allow-host``. Anything else is 403 ``host_refused``.
- A state-changing request (POST, PUT, PATCH, DELETE) that carries an
  ``Origin`` must come from the server's own origin or an
  ``--allow-origin``: 403 ``origin_refused``. ``Origin: null`` (a sandboxed
  frame, a file) is refused too. Clients that are not browsers send no
  ``Origin`` and are not affected.
- The JSON API and the webhooks take only ``application/json`` bodies:
  415 ``unsupported_media_type``. (The dashboard's own forms post
  ``application/x-www-form-urlencoded`` and are covered by the ``Origin``
  check and their CSRF token.)

Every refusal is a line of the audit log."""

from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass, field

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", ""})
CHANGING_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: paths whose bodies are JSON documents (the dashboard's forms are not)
JSON_PREFIXES = ("/api/", "/hooks/")
_DEFAULT_PORT = {"http": 80, "https": 443}


def split_host(value: str) -> tuple[str, int | None] | None:
    """``name:port``, ``[v6]:port``, ``name`` -> (lower-case name, port or
    None); None when the value is not a host at all."""
    value = value.strip().lower()
    if not value:
        return None
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        name, rest = value[1:end], value[end + 1:]
        if rest and not rest.startswith(":"):
            return None
        port_text = rest[1:]
    else:
        name, sep, port_text = value.rpartition(":")
        if not sep:
            name, port_text = value, ""
        elif ":" in name:  # a bare IPv6 address is not a Host value
            return None
    if port_text:
        if not port_text.isdigit() or int(port_text) > 65535:
            return None
        return name, int(port_text)
    return name, None


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return False


@dataclass(frozen=True)
class DoorPolicy:
    """What the front door lets through: built once from serve's options."""

    #: the address serve listens on (``--host``)
    bind_host: str = "127.0.0.1"
    #: the port it listens on; None (port 0) accepts any port in ``Host``
    port: int | None = None
    #: ``--allow-host`` values: ``name`` (any port), ``name:port``, or ``*`` (any Host)
    allow_hosts: tuple[str, ...] = ()
    #: ``--allow-origin`` values: ``scheme://host[:port]``
    allow_origins: tuple[str, ...] = ()
    _names: frozenset = field(default=frozenset(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        names = set(LOOPBACK_NAMES)
        bind = self.bind_host.strip("[]").lower()
        if bind not in WILDCARD_HOSTS:
            names.add(bind)
        object.__setattr__(self, "_names", frozenset(names))

    @property
    def any_host(self) -> bool:
        return "*" in self.allow_hosts

    def host_allowed(self, host: str, scheme: str) -> bool:
        if self.any_host:
            return True
        parsed = split_host(host)
        if parsed is None:
            return False
        name, port = parsed
        for allowed in self.allow_hosts:
            want = split_host(allowed)
            if want and want[0] == name and (want[1] is None or want[1] == port):
                return True
        effective = port if port is not None else _DEFAULT_PORT.get(scheme)
        if self.port is not None and effective != self.port:
            return False
        if name in self._names:
            return True
        # Listening on every interface: callers use the machine's addresses.
        # An address is never DNS rebinding, which needs a name.
        return self.bind_host.strip("[]").lower() in WILDCARD_HOSTS and _is_ip(name)

    def origin_allowed(self, origin: str, host: str, scheme: str) -> bool:
        origin = origin.strip().lower().rstrip("/")
        if origin == f"{scheme}://{host.strip().lower()}":
            return True
        return origin in {o.strip().lower().rstrip("/") for o in self.allow_origins}


def _json_media(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json"


class FrontDoor:
    """ASGI middleware: the checks above, then the application."""

    def __init__(self, app, *, policy: DoorPolicy, audit=None) -> None:
        self.app = app
        self.policy = policy
        self.audit = audit

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self.check(scope)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        status, code, message, hint = refusal
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if self.audit is not None:
            self.audit.record(who=["unauthenticated"], method=scope.get("method"), path=scope.get("path"),
                              op="frontDoor", status=status, code=code, ms=0.0,
                              host=headers.get("host", "")[:200], origin=headers.get("origin", "")[:200])
        body = json.dumps({"error": message, "code": code, "hint": hint}).encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})

    def check(self, scope) -> tuple[int, str, str, str] | None:
        """(status, code, message, hint) of a refusal, or None."""
        headers: dict[str, list[str]] = {}
        for k, v in scope.get("headers", []):
            headers.setdefault(k.decode("latin-1").lower(), []).append(v.decode("latin-1"))
        scheme = scope.get("scheme", "http")
        hosts = headers.get("host", [])
        if len(hosts) != 1 or not self.policy.host_allowed(hosts[0], scheme):
            shown = hosts[0][:100] if hosts else "(none)"
            return (403, "host_refused", f"this server does not answer for the host {shown!r}",
                    "use http://127.0.0.1:PORT (or the address it listens on); a name it should answer "
                    "for goes in 'swamp serve --allow-host NAME'")
        method = scope.get("method", "GET").upper()
        if method not in CHANGING_METHODS:
            return None
        origins = headers.get("origin", [])
        if origins and (len(origins) != 1 or not self.policy.origin_allowed(origins[0], hosts[0], scheme)):
            return (403, "origin_refused", f"a {method} from the origin {origins[0][:100]!r} is refused",
                    "only the server's own pages may send requests from a browser; a site that should "
                    "goes in 'swamp serve --allow-origin ORIGIN'")
        if scope.get("path", "").startswith(JSON_PREFIXES):
            types = headers.get("content-type", [])
            has_body = any(v.strip() not in ("", "0") for v in headers.get("content-length", [])) \
                or "transfer-encoding" in headers
            if (types or has_body) and not (len(types) == 1 and _json_media(types[0])):
                shown = types[0][:100] if types else "(none)"
                return (415, "unsupported_media_type", f"the body's Content-Type is {shown}; this API takes "
                        "application/json", "send the header 'Content-Type: application/json'")
        return None

