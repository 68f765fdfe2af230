"""The audit log: one JSON line per request that reached a use case or was
refused by access control: when, who (the caller's subjects), what (action,
resource, HTTP method and path), the arguments (secrets redacted) and the
result (HTTP status and error code). Never a token: the Authorization
header is not recorded, and values under keys that look secret are masked
whatever they hold."""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from swamp.util import clock

if TYPE_CHECKING:
    from swamp.app.repository import Repo

_SECRET_KEY = re.compile(r"secret|password|passwd|token|credential|api[-_]?key|private", re.I)
MASK = "***"


def default_path(repo: Repo) -> Path:
    # Under cache/: local to this replica, never synced.
    return repo.local_dir / "cache" / "serve" / "audit.jsonl"


def scrub(value):
    """Arguments as the log keeps them: secret-looking keys masked, and every
    string through the vault's redactor."""
    from swamp.vault.redact import redact_text

    if isinstance(value, dict):
        return {k: MASK if _SECRET_KEY.search(str(k)) else scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    if isinstance(value, str):
        return redact_text(value)
    return value


class AuditLog:
    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)

    def record(self, **entry) -> None:
        if self.path is None:
            return
        from swamp.vault.redact import redact_text

        line = redact_text(json.dumps({"at": clock.isoformat(), **entry}, default=str, sort_keys=True))
        with self._lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, (line + "\n").encode())
            finally:
                os.close(fd)
