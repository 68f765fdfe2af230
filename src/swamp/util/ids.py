from __future__ import annotations

import os
import socket
import uuid


def new_id() -> str:
    return str(uuid.uuid4())


def hostname() -> str:
    return socket.gethostname()


def holder() -> str:
    """Who holds a lock: user@host, for messages that name the holder."""
    user = os.environ.get("USER") or os.environ.get("USERNAME") or "unknown"
    return f"{user}@{hostname()}"
