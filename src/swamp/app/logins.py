"""The local user's token: the credential a ``swamp serve`` in token mode
(the default, loopback included) creates for the person who started it.

One token per server address, in ``$XDG_CONFIG_HOME/swamp/serve/`` (or
``~/.config/swamp/serve/``), a file ``<host>-<port>.token`` of mode 0600
in a folder of mode 0700: only that user can read it. It gives full
access, as the user has to the repository anyway. The CLI's ``--server
URL`` sends it to that address only (never to another server, which
could then replay it). This module is the one place that knows the path.

Loopback names and a server listening on every interface share the
``127.0.0.1`` file: the CLI on the same machine reaches them all through
loopback.

``swamp auth server-login URL --token T`` keeps T beside it, in
``<host>-<port>.login`` (same modes): a file of its own, never the
``.token`` a ``swamp serve`` on that address would take for the local
user's full-access token. ``--server URL`` sends the login, else the local
token, to that address only."""

from __future__ import annotations

import os
import secrets
import stat
import urllib.parse
from pathlib import Path

from swamp.errors import SwampError

PREFIX = "local."
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1", "0.0.0.0", "::", ""})
_DEFAULT_PORT = {"http": 80, "https": 443}


def config_dir(environ=None) -> Path:
    """swamp's folder in the user's configuration (XDG base directories)."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME") or ""
    if not base or not os.path.isabs(base):  # the spec: a relative value is ignored
        base = os.path.join(env.get("HOME") or os.path.expanduser("~"), ".config")
    return Path(base) / "swamp"


def _address(host: str, port: int) -> str:
    name = host.strip("[]").lower()
    if name in _LOOPBACK:
        name = "127.0.0.1"
    return f"{name.replace(':', '_')}-{port}"


def token_path(host: str, port: int, environ=None) -> Path:
    return config_dir(environ) / "serve" / f"{_address(host, port)}.token"


def ensure(host: str, port: int, environ=None) -> tuple[str, Path]:
    """The token of the server at host:port, created (0600) if there is none."""
    from swamp.util.atomic import atomic_write

    path = token_path(host, port, environ)
    existing = _read(path)
    if existing:
        return existing, path
    path.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(path.parent, 0o700)
    token = PREFIX + secrets.token_urlsafe(32)
    atomic_write(path, token + "\n", mode=0o600)
    return token, path


def address_of(url: str) -> tuple[str, int] | None:
    """(host, port) of an http(s) URL, or None."""
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port or _DEFAULT_PORT.get(parts.scheme)
    except ValueError:
        return None
    if not parts.hostname or port is None or parts.scheme not in _DEFAULT_PORT:
        return None
    return parts.hostname, port


def for_url(url: str, environ=None) -> str | None:
    """The token for a ``--server`` URL: its login, else the local token, else None."""
    address = address_of(url)
    if address is None:
        return None
    return _read(login_path(*address, environ)) or _read(token_path(*address, environ))


def login_path(host: str, port: int, environ=None) -> Path:
    return config_dir(environ) / "serve" / f"{_address(host, port)}.login"


def save_login(url: str, token: str, environ=None) -> Path:
    """Keep ``token`` for the server at ``url`` (mode 0600 in a 0700 folder)."""
    from swamp.util.atomic import atomic_write

    address = address_of(url)
    if address is None:
        from swamp.errors import UsageError

        raise UsageError(f"{url!r} is not an http:// or https:// URL with a host",
                         hint="e.g. swamp auth server-login https://swamp.example.com --token NAME.SECRET")
    path = login_path(*address, environ)
    path.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(path.parent, 0o700)
    atomic_write(path, token + "\n", mode=0o600)
    return path


def forget_login(url: str, environ=None) -> Path | None:
    """Delete the login kept for ``url``; its path, or None when there was none."""
    address = address_of(url)
    if address is None:
        return None
    path = login_path(*address, environ)
    try:
        path.unlink()
    except FileNotFoundError:
        return None
    return path


def login_for_url(url: str, environ=None) -> tuple[str | None, Path | None]:
    """(the login token, its file) for ``url``, or (None, None)."""
    address = address_of(url)
    if address is None:
        return None, None
    path = login_path(*address, environ)
    token = _read(path)
    return (token, path) if token else (None, None)


def _read(path: Path) -> str | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    if st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise SwampError(f"{path} can be read or changed by other users of this machine", code="usage",
                         hint=f"delete it (a new token is made at the next 'swamp serve'), or chmod 600 {path}")
    text = path.read_text().strip()
    return text or None
