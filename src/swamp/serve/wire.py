"""What every HTTP endpoint of serve shares, the API's and the
dashboard's: the server's log line, server-sent event frames, the check of
names in a path, and reading a body under a size limit."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from starlette.requests import Request

from swamp.errors import HttpError

#: a path segment: a name or an id; never '..', '/', or a leading dot
_SEGMENT = re.compile(r"^[A-Za-z0-9@][A-Za-z0-9_.@-]{0,199}$")
#: seconds between keep-alive comments on an idle event stream
KEEPALIVE_S = 15.0


def _log(text: str) -> None:
    print(f"swamp serve: {text}", file=sys.stderr, flush=True)


def _frame(event: str, data: Any) -> bytes:
    from swamp.vault.redact import redact_text

    return f"event: {event}\ndata: {redact_text(json.dumps(data, default=str))}\n\n".encode()


def _check_segments(params: dict) -> dict:
    for key, value in params.items():
        if not _SEGMENT.match(value) or ".." in value:
            raise HttpError("validation", f"invalid {key} {value!r} in the path",
                            hint="names and ids are letters, digits, '_', '-', '.', '@'; never '..' or '/'")
    return dict(params)


async def _read_raw(request: Request, limit: int) -> bytes:
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        raise HttpError("too_large", f"the request body is {length} bytes; the limit is {limit}",
                        hint="send data by reference (a file the method reads), or raise serve's --max-body")
    from starlette.requests import ClientDisconnect

    chunks, size = [], 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise HttpError("too_large", f"the request body is over the limit of {limit} bytes",
                                hint="raise serve's --max-body")
            chunks.append(chunk)
    except ClientDisconnect:  # gone, or cut off by serve's --body-timeout (http_limits.py)
        raise HttpError("timeout", "the request body did not arrive in time, or the client left",
                        hint="send the whole body at once") from None
    return b"".join(chunks)
