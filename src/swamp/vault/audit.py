"""The vault audit log: who read or changed which secret, when, and through
which command; never a value. One JSON line per event, appended to
``.swamp/secrets/audit.jsonl`` (local to this machine, like the secrets of a
local vault; mode 0600).

Events: ``create``, ``put``, ``read``, ``delete``, ``annotate``,
``migrate-in`` and ``migrate-out``. A ``read`` is recorded wherever a value
is taken out of a vault: `vault get` and `vault read-secret`, and every
secret a method or workflow run resolves. ``via`` says which command: the
use case sets it (``acting``); otherwise it is the swamp command this
process runs, its leading words only (no option, no option value)."""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import re
import sys
from typing import Iterator

from swamp.errors import SwampError
from swamp.util import clock
from swamp.util.ids import hostname
from swamp.vault.redact import redact_text

AUDIT_FILE = "audit.jsonl"
#: words of the command line kept for ``via`` (``model method run NAME METHOD``)
VIA_WORDS = 5
_WORD = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/-]*$")

_via: contextvars.ContextVar[str | None] = contextvars.ContextVar("swamp_vault_via", default=None)


@contextlib.contextmanager
def acting(via: str) -> Iterator[None]:
    token = _via.set(via)
    try:
        yield
    finally:
        _via.reset(token)


def current_via() -> str:
    via = _via.get()
    if via:
        return via
    words = []
    for arg in sys.argv[1:]:
        if arg.startswith("-") or not _WORD.match(arg) or len(words) == VIA_WORDS:
            break
        words.append(arg)
    return " ".join(words) or os.path.basename(sys.argv[0] or "python")


def who() -> str:
    """user@host of this process (the login name when USER is unset)."""
    import getpass

    try:
        user = getpass.getuser()
    except Exception:
        user = "unknown"
    return f"{user}@{hostname()}"


def record(secrets_dir, op: str, vault: str, key: str | None = None, **extra) -> None:
    """Append one event. ``extra`` holds names only (another vault, a count)."""
    entry = {"at": clock.isoformat(), "by": who(), "op": op, "vault": vault}
    if key is not None:
        entry["key"] = key
    entry["via"] = redact_text(current_via())
    entry.update({k: v for k, v in extra.items() if v is not None})
    line = redact_text(json.dumps(entry, sort_keys=True)) + "\n"
    path = secrets_dir / AUDIT_FILE
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        # O_APPEND: concurrent writers' lines (this short) never interleave.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)
    except OSError as e:
        # No unrecorded access: the operation fails rather than go unaudited.
        raise SwampError(f"cannot append to the vault audit log {path}: {e.strerror or e}",
                         code="vault_audit", hint="check that .swamp/secrets is writable by you") from None


def read(secrets_dir, vault: str | None = None, key: str | None = None) -> tuple[list[dict], int]:
    """The events, oldest first, filtered; and how many lines were unreadable."""
    path = secrets_dir / AUDIT_FILE
    try:
        text = path.read_text()
    except FileNotFoundError:
        return [], 0
    events, bad = [], 0
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            e = json.loads(line)
        except ValueError:
            bad += 1
            continue
        if not isinstance(e, dict):
            bad += 1
            continue
        if vault is not None and e.get("vault") != vault and e.get("from") != vault and e.get("to") != vault:
            continue
        if key is not None and e.get("key") != key:
            continue
        events.append(e)
    events.sort(key=lambda e: str(e.get("at", "")))  # stable: same-instant events keep their order
    return events, bad
