"""The starlette application: one endpoint per route of ``routes.ROUTES``,
``/health`` and ``/openapi.json``.

A request goes through, in order: the front door (front_door.py: its
``Host``, its ``Origin`` if it changes state, its body's type), refused
while shutting down (if it changes state), authenticated (token mode), its path names, query and body
checked (nothing runs on a malformed request), authorized by the grants,
counted against the run limits (if it runs something), then its use case
runs in a worker thread. Every request to an API route or a webhook,
refused or not, is a line of the audit log."""

from __future__ import annotations

import asyncio
import json
import time
from contextlib import asynccontextmanager
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route as StarletteRoute

from swamp.errors import HttpError, SwampError
from swamp.util import actors
from swamp.serve.errors import error_doc, status_of
from swamp.serve.request_checks import parse_json, parse_query, read_body
from swamp.serve.request_tracing import request_span
from swamp.serve.calls import Call, Reply, Route
from swamp.serve.routes import ROUTES
from swamp.serve.state import ServeState, Settings
from swamp.serve.wire import KEEPALIVE_S, _check_segments, _frame, _read_raw


# ------------------------------------------------------------ rendering
def _json(doc: Any, status: int = 200, headers: dict | None = None) -> Response:
    from swamp.vault.redact import redact_text

    body = redact_text(json.dumps(doc, default=str, sort_keys=False))
    return Response(body, status_code=status, media_type="application/json", headers=headers)


def _error(e: SwampError) -> Response:
    status = status_of(e.code)
    headers = {}
    if status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    if e.code in ("lock_timeout", "shutting_down", "too_many_runs", "unavailable"):
        headers["Retry-After"] = "1"
    return _json(error_doc(e), status, headers)


def _code(status: int, doc: Any) -> str | None:
    """The error code of a reply, for the audit log (202: unpublished)."""
    if (status >= 400 or status == 202) and isinstance(doc, dict):
        return doc.get("code")
    return None


# ------------------------------------------------------------ route order
#: the routes read most often: tried first (starlette tries each route's
#: pattern in turn, and these came last of two dozen)
HOT_OPS = ("getData",)


def _may_overlap(a: str, b: str) -> bool:
    """Whether some path could match both route patterns."""
    sa, sb = a.strip("/").split("/"), b.strip("/").split("/")
    if any(":path" in seg for seg in sa + sb):
        return True
    return len(sa) == len(sb) and all(x == y or x.startswith("{") or y.startswith("{") for x, y in zip(sa, sb))


def hot_first(routes) -> list:
    """``routes`` with the hot ones first, when no other route of the same
    method could match their paths (then the order cannot change which
    route answers a request)."""
    hot = [r for r in routes if r.op in HOT_OPS
           and not any(o is not r and o.method == r.method and _may_overlap(o.path, r.path) for o in routes)]
    return hot + [r for r in routes if r not in hot]


# --------------------------------------------------------------- endpoints
def _endpoint(state: ServeState, route: Route):
    async def endpoint(request: Request) -> Response:
        t0 = time.monotonic()
        subjects: list[str] = []
        # the path as request.url.path spells it, without building the whole URL for it
        path_text = request.scope["path"].replace("?", "%3F").replace("#", "%23").replace("\\", "%5C")
        audit = {"method": route.method, "path": path_text, "op": route.op}

        def done(status: int, code: str | None = None) -> None:
            from swamp.serve.audit import scrub

            state.audit.record(who=subjects or ["unauthenticated"], status=status, code=code,
                               ms=round((time.monotonic() - t0) * 1000, 1),
                               **{k: scrub(v) if k == "args" else v for k, v in audit.items()})

        try:
            if state.shutting_down and route.changes:
                raise HttpError("shutting_down", "the server is shutting down",
                                hint="retry on another replica, or once it is back")
            subjects = state.subjects(request)
            path = _check_segments(request.path_params)
            query = parse_query(route, request.query_params)
            body = await read_body(route, request, state.settings.max_body)
            call = Call(state.repo, path, query, body,
                        authorize=lambda action, resource: state.authorize(subjects, action, resource),
                        allowed=lambda action, resource: state.allowed(subjects, action, resource),
                        caller=actors.of_subjects(subjects))
            call.resume_later = lambda workflow, run_id: state.resume_workflow(
                workflow, run_id, subjects[0], by=call.caller, subjects=subjects)
            call.start_later = lambda workflow, inputs, fail_on, run_id, on_end: state.start_workflow(
                workflow, inputs, subjects[0], admitted=state.hand_over(subjects[0]), run_id=run_id,
                fail_on=fail_on, by=call.caller, on_end=on_end, subjects=subjects)
            call.in_background = lambda label, work: state.in_background(label, work, subjects[0], subjects)
            if route.run_id is not None:
                call.run_id = route.run_id(call)
            audit["args"] = {"path": path, "query": query, "body": body}
            if route.action and route.resource:
                audit["action"], audit["resource"] = route.action, route.resource(call)
                state.authorize(subjects, route.action, audit["resource"])
            if route.runs:
                state.admit(subjects[0])
        except SwampError as e:
            done(status_of(e.code), e.code)
            return _error(e)

        reply_headers: dict[str, str] = {}  # a Reply's own headers (a detached run's Location)

        def work() -> tuple[int, Any]:
            with request_span(route, request.headers.get("traceparent")) as span:
                status, doc = answer()
                span.status(status, _code(status, doc))
                return status, doc

        def answer() -> tuple[int, Any]:
            from swamp.app.managed_config import new_request
            from swamp.serve import vault_grants

            new_request()  # managed config: this request pulls before it first reads a definition
            key = state.begin()
            call.note = lambda info: state.note(key, info)
            try:
                with vault_grants.acting_for(state, subjects, route.op):  # the run's vault.get() is the caller's
                    result = route.run(call)
                status, doc = (result.status, result.doc) if isinstance(result, Reply) else (200, result)
                if isinstance(result, Reply) and result.headers:
                    reply_headers.update(result.headers)
                if route.row_resource is not None and isinstance(doc, list):
                    doc = [r for r in doc if state.allowed(subjects, "read", route.row_resource(r))]
                return status, doc
            except SwampError as e:
                return status_of(e.code), error_doc(e)
            except Exception as e:  # a bug: logged here, a plain document there
                import traceback

                traceback.print_exc()
                return 500, {"error": f"internal error: {type(e).__name__}", "code": "internal",
                             "hint": "see the server's log"}
            finally:
                state.end(key)
                if route.runs:
                    state.release(subjects[0])

        if route.stream and "text/event-stream" in request.headers.get("accept", ""):
            return StreamingResponse(_stream(call, work, route, done, state.threads_for(route)),
                                     media_type="text/event-stream",
                                     headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})
        try:
            if route.runs:
                status, doc = await anyio.to_thread.run_sync(work, limiter=state.threads_for(route))
            else:
                status, doc = await state.read_in_thread(work)
        except asyncio.CancelledError:
            # Shutdown waited past its bound: the client is cut off, the run
            # goes on in its thread (drain() asks it to stop).
            done(503, "shutting_down")
            return _json({"error": "the server stopped before the run finished", "code": "shutting_down"}, 503)
        done(status, _code(status, doc))
        if status >= 400:
            return _json(doc, status, {"Retry-After": "1"} if status == 503 else None)
        return _json(doc, status, reply_headers or None)

    return endpoint


async def _stream(call: Call, work, route: Route, done, limiter=None):
    """Server-sent events: ``accepted`` at once, then ``log`` and ``step``
    events as they happen, then ``result`` (HTTP-like status and the
    document the plain request would return) or ``error``."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue = asyncio.Queue()
    named = {"runId": call.run_id} if call.run_id else {}  # every event names the run, when it is known
    call.emit = lambda event, data: loop.call_soon_threadsafe(queue.put_nowait, (event, {**named, **data}))
    yield _frame("accepted", {"op": route.op, **call.path, **named})
    task = asyncio.ensure_future(anyio.to_thread.run_sync(work, limiter=limiter))
    status, doc = 499, {"code": "client_gone"}  # unless the run's end is sent: the client left first
    try:
        while True:
            getter = asyncio.ensure_future(queue.get())
            finished, _ = await asyncio.wait({getter, task}, timeout=KEEPALIVE_S,
                                             return_when=asyncio.FIRST_COMPLETED)
            if getter in finished:
                yield _frame(*getter.result())
                continue
            getter.cancel()
            if task in finished:
                while not queue.empty():
                    yield _frame(*queue.get_nowait())
                break
            yield b": keep-alive\n\n"
        status, doc = task.result()
        yield _frame("error" if status >= 400 else "result", {**named, "status": status, "body": doc})
    finally:
        done(status, _code(status, doc))


def _webhook(state: ServeState):
    """POST /hooks/{name}: check the signature, then start the workflow in
    the background and answer 202 (senders want a quick answer)."""

    async def receive(request: Request) -> Response:
        from swamp.serve.audit import scrub
        from swamp.serve.webhooks import DELIVERY, HEADER, TIMESTAMP, WINDOW_S

        name = request.path_params["name"]
        who = [f"webhook:{name}"]
        t0 = time.monotonic()

        def audit(status: int, code: str | None, **more) -> None:
            state.audit.record(who=who, method="POST", path=request.url.path, op="webhook", status=status,
                               code=code, ms=round((time.monotonic() - t0) * 1000, 1), **more)

        try:
            hook = state.settings.webhooks.get(name)
            if hook is None:
                raise HttpError("not_found", f"no webhook named {name!r}")
            if state.shutting_down:
                raise HttpError("shutting_down", "the server is shutting down", hint="send it again later")
            raw = await _read_raw(request, state.settings.max_body)
            stamp, delivery = request.headers.get(TIMESTAMP), request.headers.get(DELIVERY)
            if not hook.verify(raw, request.headers.get(HEADER), stamp, delivery):
                raise HttpError("unauthorized", "the webhook's signature is missing or wrong",
                                hint=f"send {TIMESTAMP} (Unix seconds), {DELIVERY} (a new id per event) and "
                                     f"{HEADER}: sha256=<HMAC-SHA256 of '<name>.<timestamp>.<delivery>.<body>' with "
                                     "the secret> (docs/serve.md#webhooks)")
            try:
                skew = time.time() - int(stamp)
            except ValueError:
                raise HttpError("unauthorized", f"{TIMESTAMP} must be Unix seconds, not {stamp!r}") from None
            if abs(skew) > WINDOW_S:
                raise HttpError("unauthorized", f"the webhook's timestamp is {abs(skew):.0f} s "
                                f"{'old' if skew > 0 else 'in the future'}; at most {WINDOW_S} s is accepted",
                                hint="sign each delivery when it is sent, with the current time "
                                     "(and check the sender's clock)")
            payload = parse_json(raw, what="the webhook's body") if raw.strip() else {}
            if hook.input:
                inputs = {hook.input: payload}
            elif isinstance(payload, dict):
                inputs = payload
            else:
                raise HttpError("validation", "the webhook's body must be a JSON object (its inputs)")
            from swamp.app import webhook_deliveries

            state.admit(who[0])
            try:  # a record that could not be published raises (503): nothing runs, the sender retries
                await anyio.to_thread.run_sync(
                    lambda: webhook_deliveries.record(state.repo, name, delivery, int(stamp), window_s=WINDOW_S))
            except BaseException:
                state.release(who[0])
                raise
        except SwampError as e:
            audit(status_of(e.code), e.code)
            return _error(e)

        run_id = state.start_workflow(hook.workflow, inputs, who[0], admitted=True)
        audit(202, None, workflow=hook.workflow, delivery=delivery, runId=run_id, args=scrub({"inputs": inputs}))
        return _json({"webhook": name, "workflow": hook.workflow, "accepted": True, "runId": run_id}, 202)

    return receive


def _access_reload(state: ServeState):
    """POST /api/v1/access/reload: read the grants and the tokens again now
    (they are read again by themselves when their files change); admin."""

    async def reload(request: Request) -> Response:
        t0 = time.monotonic()
        who = ["anonymous"]
        try:
            who = state.subjects(request)
            if state.settings.auth_mode == "token":
                state.authorize(who, "admin", "access:reload")
            doc = {**await anyio.to_thread.run_sync(state.grants.reload),
                   **await anyio.to_thread.run_sync(state.tokens.reload)}
            status, code = 200, None
        except SwampError as e:
            doc, status, code = None, status_of(e.code), e.code
            response = _error(e)
        state.audit.record(who=who, method="POST", path=request.url.path, op="reloadAccess", action="admin",
                           resource="access:reload", status=status, code=code,
                           ms=round((time.monotonic() - t0) * 1000, 1))
        return _json(doc) if doc is not None else response

    return reload


def _whoami(state: ServeState):
    """GET /api/v1/whoami: who the caller's token acts as (``swamp auth
    whoami --server``). Any valid token may ask about itself; none: 401."""

    async def whoami(request: Request) -> Response:
        try:
            who = state.subjects(request)
        except SwampError as e:
            return _error(e)
        return _json({"actor": actors.of_subjects(who), "subjects": who, "authMode": state.settings.auth_mode})

    return whoami


def _health(state: ServeState):
    from swamp.util.ids import new_id

    # Which process answered, for replicas sharing a port (--reuse-port): a random id of this
    # process, never its pid or host, since anyone may ask /health.
    replica = new_id()

    async def health(request: Request) -> Response:
        from importlib.metadata import version

        return _json({"status": "stopping" if state.shutting_down else "ok", "version": version("swamp"),
                      "authMode": state.settings.auth_mode, "inflight": len(state.inflight),
                      "datastore": state.repo.datastore.kind, "replica": replica})

    return health


def build_app(repo, settings: Settings | None = None) -> Starlette:
    from swamp.serve.audit import AuditLog, default_path
    from swamp.app.enforced_access import GrantSet, TokenStore
    from swamp.serve.openapi import document

    settings = settings or Settings()
    repo.datastore  # opened once, here: request threads then share it (and a bad config stops the start)
    from swamp.app.managed_config import attach

    attach(repo)  # managed config: a request pulls before it first reads a definition, workflow or vault config
    state = ServeState(repo, settings, TokenStore(repo), GrantSet(repo),
                       AuditLog(settings.audit_path or default_path(repo)))
    if settings.auth_mode == "token":
        state.grants.current()  # a broken grants file stops the start, not the first request

    openapi_doc = document()

    async def openapi(request: Request) -> Response:
        return _json(openapi_doc)

    async def not_found(request: Request, exc: HTTPException) -> Response:
        code = "not_found" if exc.status_code == 404 else "usage"
        return _json({"error": f"{request.method} {request.url.path}: {exc.detail}", "code": code,
                      "hint": "see /openapi.json for the routes"}, exc.status_code)

    routes = [StarletteRoute("/health", _health(state), methods=["GET"]),
              StarletteRoute("/openapi.json", openapi, methods=["GET"]),
              StarletteRoute("/hooks/{name}", _webhook(state), methods=["POST"]),
              StarletteRoute("/api/v1/access/reload", _access_reload(state), methods=["POST"]),
              StarletteRoute("/api/v1/whoami", _whoami(state), methods=["GET"])]
    from swamp.serve import reload as serve_reload

    routes.append(StarletteRoute("/api/v1/serve/reload", serve_reload.route(state, _json, _error), methods=["POST"]))
    routes += [StarletteRoute(r.path, _endpoint(state, r), methods=[r.method]) for r in hot_first(ROUTES)]
    if settings.dashboard:
        from swamp.serve.dashboard.pages import routes as dashboard_routes

        routes += dashboard_routes(state)

    from swamp.serve.scheduler import Scheduler
    from swamp.serve.signal_watch import SignalWatch

    from swamp.serve.watchdog import RunWatchdog

    from swamp.serve.replicas import ReplicaWatch

    scheduler = Scheduler(state, settings.schedules, triggers=settings.triggers)
    signal_watch = SignalWatch(state)  # signalled or expired waits resume their runs (docs/signals.md)
    watchdog = RunWatchdog(state, settings.max_run_duration)
    replicas = ReplicaWatch(state)
    from swamp.serve.access_state import AccessWatch

    access_watch = AccessWatch(state)  # peers' tokens, grants and groups within its bound (docs/serve.md#access)

    @asynccontextmanager
    async def lifespan(app):
        scheduler.start()
        signal_watch.start()
        watchdog.start()
        replicas.start()
        access_watch.start()
        yield
        state.shutting_down = True
        await anyio.to_thread.run_sync(scheduler.stop)
        await anyio.to_thread.run_sync(signal_watch.stop)
        await anyio.to_thread.run_sync(watchdog.stop)
        await anyio.to_thread.run_sync(replicas.stop)
        await anyio.to_thread.run_sync(access_watch.stop)
        await anyio.to_thread.run_sync(state.drain)

    from starlette.middleware import Middleware

    from swamp.serve.front_door import DoorPolicy, FrontDoor

    door = DoorPolicy(bind_host=settings.bind_host, port=settings.port or None,
                      allow_hosts=tuple(settings.allow_hosts), allow_origins=tuple(settings.allow_origins))
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers={404: not_found, 405: not_found},
                    middleware=[Middleware(FrontDoor, policy=door, audit=state.audit)])
    app.state.serve = state
    return app
