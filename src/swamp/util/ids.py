"""Ids and names of this machine, without the uuid and socket modules
(their imports, with platform's, cost a command ~3 ms): ``new_id`` is a
random (version 4) UUID in the form ``str(uuid.uuid4())`` gives, and
``hostname`` is ``socket.gethostname()``."""

from __future__ import annotations

import os

_VERSION_4 = 4 << 76
_VARIANT = 0x8000 << 48
_KEEP = ~((0xf000 << 64) | (0xc000 << 48))


def _uuid4_int(random: bytes | None = None) -> int:
    """What ``uuid.UUID(bytes=random, version=4).int`` is."""
    return (int.from_bytes(random if random is not None else os.urandom(16), "big") & _KEEP) | _VERSION_4 | _VARIANT


def uuid4_hex(random: bytes | None = None) -> str:
    """``uuid.uuid4().hex``: 32 hex digits."""
    return "%032x" % _uuid4_int(random)


def new_id(random: bytes | None = None) -> str:
    """``str(uuid.uuid4())``: 8-4-4-4-12 hex digits."""
    h = uuid4_hex(random)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def hostname() -> str:
    if hasattr(os, "uname"):
        return os.uname().nodename  # what gethostname(2) returns on a POSIX system
    import socket

    return socket.gethostname()


def os_user() -> str:
    """The account this process runs as: ``$USER`` or ``$LOGNAME`` (what a
    login sets), else the OS's own answer for the process's uid (cron, a
    container, systemd set neither), never "unknown". An account with no
    name (a uid missing from the passwd database) is ``uid<N>``."""
    name = os.environ.get("USER") or os.environ.get("LOGNAME") or os.environ.get("USERNAME")
    if name:
        return name
    if hasattr(os, "getuid"):
        import pwd  # (a builtin module: no start-up cost worth a cache)

        try:
            return pwd.getpwuid(os.getuid()).pw_name
        except KeyError:
            return f"uid{os.getuid()}"
    import getpass  # Windows: the account's name from the OS

    return getpass.getuser()


def holder() -> str:
    """Who holds a lock: user@host, for messages that name the holder."""
    return f"{os_user()}@{hostname()}"
