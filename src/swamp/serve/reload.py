"""``POST /api/v1/serve/reload`` (``swamp serve reload --server URL``): a
running server takes up, now, what changed since it started, without a
restart, so no request in flight is dropped and none is refused meanwhile:

- it pulls (on a shared datastore), so peers' commits are in its copy;
- the grants, tokens and groups are read again (as ``access reload``);
- the extensions the lockfile pins, and its trusted indexes, are brought
  up to date: pinned wheels not installed here are installed
  (hash-checked), installs no longer pinned are removed (the next lookup
  of a type loads from what is pinned now, as it always does).

It needs ``admin`` on ``serve:reload``; a server with ``--auth-mode none``
lets anyone who can connect do it, as it lets them do everything."""

from __future__ import annotations

import time

import anyio
from starlette.requests import Request
from starlette.responses import Response

from swamp.errors import SwampError
from swamp.serve.errors import status_of

RESOURCE = "serve:reload"


def _reload_now(state) -> dict:
    from swamp.app import extensions
    from swamp.app.lifecycle import refresh

    refresh(state.repo)
    access = {**state.grants.reload(), **state.tokens.reload()}
    installed = extensions.install_all(state.repo)
    installed.pop("sync", None)
    return {"access": access, "extensions": installed,
            "trustedIndexes": extensions.trust_list(state.repo)["trusted"]}


def route(state, to_json, to_error):
    """The handler (app.py passes its response helpers, to answer as every route does)."""

    async def reload(request: Request) -> Response:
        t0 = time.monotonic()
        who = ["anonymous"]
        try:
            who = state.subjects(request)
            if state.settings.auth_mode == "token":
                state.authorize(who, "admin", RESOURCE)
            doc = await anyio.to_thread.run_sync(_reload_now, state)
            status, code, response = 200, None, to_json(doc)
        except SwampError as e:
            status, code, response = status_of(e.code), e.code, to_error(e)
        state.audit.record(who=who, method="POST", path=request.url.path, op="reloadServe", action="admin",
                           resource=RESOURCE, status=status, code=code,
                           ms=round((time.monotonic() - t0) * 1000, 1))
        return response

    return reload
