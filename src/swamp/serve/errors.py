"""HTTP statuses for swamp's error codes, and the error document.

The document is the command line's: ``{"error", "code", "hint"}``. The
status follows the code:

========================  ======  ==========================================
code                      status  why
========================  ======  ==========================================
usage, validation         400     the request is wrong; nothing was written
expression                400     an expression (a predicate, a template) that does not parse or evaluate
unauthorized              401     no token, an unknown or a revoked one
forbidden                 403     a grant denies it, or none allows it
not_found                 404
conflict, lease_lost      409     the state changed under the request
too_large                 413     the body is over the limit
host_refused              403     a Host the server does not answer for
origin_refused            403     a state-changing request from a foreign web page
unsupported_media_type    415     an API body that is not application/json
timeout                   408     the request did not arrive in time
too_many_runs             429     over --max-runs or --max-runs-per-caller
lock_timeout              503     a lease stayed busy; retry (Retry-After)
shutting_down             503     the server is stopping; retry elsewhere
unavailable               503     not recorded (a webhook delivery); retry
access_broken             503     its grants, groups or tokens cannot be read: every request is refused until fixed
unpublished               202     done, not yet published (see below)
anything else             500
========================  ======  ==========================================

``unpublished`` is the one error that comes with a result: the work is done
on the server but its push failed (the next session publishes it). The
body is the error document plus ``value``, the result as it would have been
returned, with ``"published": false``."""

from __future__ import annotations

from swamp.errors import HttpError, SwampError  # noqa: F401  (HttpError: importable from here too)

STATUS = {
    "usage": 400, "validation": 400, "unauthorized": 401, "forbidden": 403, "not_found": 404,
    "conflict": 409, "lease_lost": 409, "too_large": 413, "host_refused": 403, "origin_refused": 403,
    "unsupported_media_type": 415, "timeout": 408, "expression": 400, "too_many_runs": 429,
    "lock_timeout": 503, "shutting_down": 503,
    "unavailable": 503, "access_broken": 503, "no_scheduler": 503,
    "unpublished": 202, "repo_not_found": 500, "internal": 500,
}

#: the exit code the command line gives each code (everything else exits 1)
EXIT_CODES = {"usage": 2, "lock_timeout": 75}


def status_of(code: str) -> int:
    return STATUS.get(code, 500)


def error_doc(e: SwampError) -> dict:
    from swamp.vault.redact import redact_text

    doc = {k: redact_text(v) if isinstance(v, str) else v for k, v in e.to_json().items()}
    if isinstance(doc.get("errors"), list):  # a schema error's places and messages: text, redacted as the message
        doc["errors"] = [{k: redact_text(str(v)) for k, v in p.items()} for p in doc["errors"]]
    value = getattr(e, "value", None)
    if value is not None:
        doc["value"] = value
    return doc


