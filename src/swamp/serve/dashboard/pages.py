"""The dashboard's pages and forms (``/ui/...``).

Each page runs its use cases in a worker thread, as the API does, and
renders a template with autoescaping, every value passing the vault's
redactor first. Each page checks the same grants the API route for the
same thing checks; lists show only the rows the caller may read; buttons
appear only for what the caller may do, and the form handlers check again
(a hidden button is no defence). State-changing forms run the API's own
handlers (approve, reject, cancel) and are audited like API requests."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any, Callable
from urllib.parse import parse_qs, quote

import anyio
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Mount, Route as StarletteRoute
from starlette.staticfiles import StaticFiles

from swamp.errors import HttpError, SwampError
from swamp.serve.dashboard.context import FINISHED, Ctx, Page
from swamp.serve.dashboard.session import Sessions, clear_cookie, set_cookie
from swamp.serve.errors import status_of

HERE = Path(__file__).parent
#: how often a live run page's stream looks at the run record
POLL_S = 0.5
_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
                               "frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",  # so that a form sends its page's Origin (no-referrer sends "null")
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


def _finalize(value: Any) -> Any:
    """Every value a template prints, before escaping: secrets redacted."""
    from swamp.vault.redact import redact_text

    if value is None:
        return ""
    if isinstance(value, str) and not hasattr(value, "__html__"):
        return redact_text(value)
    return value


def _environment():
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(HERE / "templates")), autoescape=True,
                             finalize=_finalize, trim_blocks=True, lstrip_blocks=True)
    env.filters["ms"] = _ms
    env.filters["q"] = lambda v: quote(str(v), safe="")
    return env


def _ms(value) -> str:
    if value is None or value == "":
        return ""
    v = float(value)
    return f"{v:.0f} ms" if v < 1000 else f"{v / 1000:.1f} s" if v < 120_000 else f"{v / 60000:.1f} min"


class Dashboard:
    def __init__(self, state) -> None:
        from swamp.app.dashboard_queries import RunIndex

        self.state = state
        self.sessions = Sessions(state)
        self.index = RunIndex(state.repo.local_dir / "cache" / "dashboard")
        self.env = _environment()

    def prepare(self) -> None:
        """Compile every template and import what the pages use, before the
        server takes requests, so the first page does not pay for it (it
        would cost the first runs page more than reading its runs)."""
        import swamp.serve.dashboard.views  # noqa: F401
        import swamp.vault.redact  # noqa: F401
        from swamp.app.dashboard_queries import preload

        preload()

        for template in sorted((HERE / "templates").glob("*.html")):
            self.env.get_template(template.name)

    # ------------------------------------------------------------ rendering
    def render(self, request: Request, page: Page, subjects: list[str] | None, status: int = 200) -> Response:
        from swamp.vault.redact import redact_text

        values = {"csrf": self.sessions.csrf(request), "auth_mode": self.state.settings.auth_mode,
                  "who": ", ".join(subjects or []), "logged_in": subjects is not None,
                  "nav": page.values.pop("nav", None), **page.values}
        html = redact_text(self.env.get_template(page.template).render(**values))
        return HTMLResponse(html, status_code=status, headers=_HEADERS)

    def error(self, request: Request, e: SwampError, subjects) -> Response:
        return self.render(request, Page("error.html", {"title": "Error", "error": e.message, "code": e.code,
                                                        "hint": e.hint or ""}), subjects, status_of(e.code))

    def audit(self, request: Request, subjects: list[str], status: int, code: str | None, t0: float,
              **entry) -> None:
        from swamp.serve.audit import scrub

        self.state.audit.record(who=subjects or ["unauthenticated"], method=request.method,
                                path=request.url.path, status=status, code=code,
                                ms=round((time.monotonic() - t0) * 1000, 1),
                                **{k: scrub(v) if k == "args" else v for k, v in entry.items()})

    # ---------------------------------------------------------------- views
    def view(self, fn: Callable[[Ctx], Any], *, post: bool = False, op: str | None = None,
             action: str | None = None, resource: str | None = None):
        """A page (GET) or a form (POST, audited: ``op`` and ``action`` on
        the workflow in the path, as the API route would record them)."""

        async def endpoint(request: Request) -> Response:
            from swamp.serve.wire import _check_segments, _read_raw

            t0 = time.monotonic()
            subjects = self.sessions.subjects(request)
            if subjects is None:
                if post:
                    e = HttpError("unauthorized", "log in first", hint="open /ui/login")
                    self.audit(request, [], 401, e.code, t0, op=op)
                    return self.error(request, e, None)
                return RedirectResponse("/ui/login", 303)
            form: dict[str, str] = {}
            try:
                path = _check_segments(request.path_params)
                if post:
                    if self.state.shutting_down:
                        raise HttpError("shutting_down", "the server is shutting down", hint="retry shortly")
                    raw = await _read_raw(request, self.state.settings.max_body)
                    form = {k: v[-1] for k, v in parse_qs(raw.decode("utf-8", "replace"),
                                                         keep_blank_values=True).items()}
                    self.sessions.check_csrf(request, form.pop("csrf", None))
            except SwampError as e:
                if post:
                    self.audit(request, subjects, status_of(e.code), e.code, t0, op=op)
                return self.error(request, e, subjects)
            ctx = Ctx(self, request, subjects, path, dict(request.query_params), form)
            if action and "workflow" in path:
                what = {"op": op, "action": action, "resource": f"workflow:{path['workflow']}"}
            elif action and resource:
                what = {"op": op, "action": action, "resource": resource}
            else:
                what = {"op": op}

            def work():
                try:
                    with self.index.busy():  # the run index's background reads wait meanwhile
                        result = fn(ctx)
                        if isinstance(result, Page):  # rendered here too: the page's cost is the thread's
                            return self.render(request, result, subjects)
                    return result
                except SwampError as e:
                    return e
                except Exception as e:  # a bug: logged here, a plain page there
                    import traceback

                    traceback.print_exc()
                    return SwampError(f"internal error: {type(e).__name__}", code="internal",
                                      hint="see the server's log")

            result = await anyio.to_thread.run_sync(work)
            if isinstance(result, SwampError):
                if post or result.code == "forbidden":
                    self.audit(request, subjects, status_of(result.code), result.code, t0, **what,
                               args={"path": path, "body": form})
                return self.error(request, result, subjects)
            if post:
                status = getattr(result, "status_code", 303)
                self.audit(request, subjects, status, None if status < 400 else "validation", t0, **what,
                           args={"path": path, "body": form})
            return result

        return endpoint

    # ------------------------------------------------------------- login
    async def login_page(self, request: Request) -> Response:
        if not self.sessions.tokens_needed:
            return RedirectResponse("/ui/", 303)
        if "token" in request.query_params:  # the login link serve prints: the token becomes the session cookie
            if request.headers.get("sec-fetch-site") == "cross-site":
                # another site's link would log this browser in as whoever's token it carries
                e = HttpError("forbidden", "a login link is taken only when opened directly, not from another site",
                              hint="paste the link serve printed into the address bar")
                self.audit(request, [], 403, e.code, time.monotonic(), op="login")
                return self.error(request, e, None)
            return self._log_in(request, request.query_params["token"].strip(), time.monotonic())
        return self.render(request, Page("login.html", {"title": "Log in", "message": ""}), None)

    async def login(self, request: Request) -> Response:
        from swamp.serve.wire import _read_raw

        t0 = time.monotonic()
        if not self.sessions.tokens_needed:
            return RedirectResponse("/ui/", 303)
        try:
            raw = await _read_raw(request, 64 * 1024)
            form = {k: v[-1] for k, v in parse_qs(raw.decode("utf-8", "replace")).items()}
            self.sessions.check_csrf(request, form.get("csrf"))
        except SwampError as e:
            self.audit(request, [], status_of(e.code), e.code, t0, op="login")
            return self.error(request, e, None)
        return self._log_in(request, (form.get("token") or "").strip(), t0)

    def _log_in(self, request: Request, token: str, t0: float) -> Response:
        found = self.state.check_token(token) if token else None
        if found is None:
            self.audit(request, [], 401, "unauthorized", t0, op="login")
            page = Page("login.html", {"title": "Log in", "message": "That token is unknown or revoked."})
            return self.render(request, page, None, 401)
        self.audit(request, found, 303, None, t0, op="login")
        response = RedirectResponse("/ui/", 303)  # the token leaves the address bar (and the history) here
        set_cookie(response, token, secure=request.url.scheme == "https")
        return response

    async def logout(self, request: Request) -> Response:
        from swamp.serve.wire import _read_raw

        raw = await _read_raw(request, 64 * 1024)
        form = {k: v[-1] for k, v in parse_qs(raw.decode("utf-8", "replace")).items()}
        try:
            self.sessions.check_csrf(request, form.get("csrf"))
        except SwampError as e:
            return self.error(request, e, None)
        response = RedirectResponse("/ui/login" if self.sessions.tokens_needed else "/ui/", 303)
        clear_cookie(response, secure=request.url.scheme == "https")
        return response

    # --------------------------------------------------------- live runs
    async def run_events(self, request: Request) -> Response:
        """Server-sent events for one run, in the API's framing: ``step``
        when a step's status changes, ``log`` with new log lines,
        ``status`` when the run's status changes, ``result`` at its end."""
        from swamp.app.dashboard_queries import run_state
        from swamp.serve.wire import KEEPALIVE_S, _check_segments, _frame

        subjects = self.sessions.subjects(request)
        try:
            if subjects is None:
                raise HttpError("unauthorized", "log in first")
            path = _check_segments(request.path_params)
            self.state.authorize(subjects, "read", f"workflow:{path['workflow']}")
        except SwampError as e:
            return self.error(request, e, subjects)
        repo = self.state.repo

        async def events():
            seen: dict[str, str] = {}
            status, log_len, last = None, 0, time.monotonic()
            while not self.state.shutting_down:
                try:
                    doc, log = await anyio.to_thread.run_sync(run_state, repo, path["workflow"], path["run"])
                except SwampError as e:
                    yield _frame("error", {"error": e.message, "code": e.code})
                    return
                for job in doc.get("jobs", []):
                    for step in job.get("steps", []):
                        key = f"{job['name']}/{step['name']}"
                        if seen.get(key) != step.get("status"):
                            yield _frame("step", {"job": job["name"], "step": step["name"],
                                                  "status": step.get("status"),
                                                  "durationMs": step.get("durationMs")})
                            seen[key] = step.get("status")
                if len(log) != log_len:  # the whole log first (the page may be stale), then what is new
                    grew = log_len and len(log) > log_len
                    yield _frame("log", {"text": log[log_len:] if grew else log, "reset": not grew})
                    log_len, last = len(log), time.monotonic()
                if doc["status"] != status:
                    if status is not None:
                        yield _frame("status", {"status": doc["status"]})
                    status = doc["status"]
                if status in FINISHED:
                    yield _frame("result", {"status": status})
                    return
                if await request.is_disconnected():
                    return
                if time.monotonic() - last > KEEPALIVE_S:
                    yield b": keep-alive\n\n"
                    last = time.monotonic()
                await asyncio.sleep(POLL_S)

        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    # ---------------------------------------------------------------- routes
    def routes(self) -> list:
        from swamp.serve.dashboard import views

        v = self.view
        return [
            StarletteRoute("/ui", lambda r: RedirectResponse("/ui/", 307)),
            StarletteRoute("/ui/", lambda r: RedirectResponse("/ui/workflows", 303)),
            StarletteRoute("/ui/login", self.login_page, methods=["GET"]),
            StarletteRoute("/ui/login", self.login, methods=["POST"]),
            StarletteRoute("/ui/logout", self.logout, methods=["POST"]),
            StarletteRoute("/ui/workflows", v(views.workflows), methods=["GET"]),
            StarletteRoute("/ui/workflows/{workflow}", v(views.runs), methods=["GET"]),
            StarletteRoute("/ui/workflows/{workflow}/run", v(views.start_run, post=True, op="runWorkflow", action="run"),
                           methods=["POST"]),
            StarletteRoute("/ui/workflows/{workflow}/runs/{run}", v(views.run), methods=["GET"]),
            StarletteRoute("/ui/workflows/{workflow}/runs/{run}/events", self.run_events, methods=["GET"]),
            StarletteRoute("/ui/workflows/{workflow}/runs/{run}/approve",
                           v(views.decide("approved"), post=True, op="approveStep", action="approve"), methods=["POST"]),
            StarletteRoute("/ui/workflows/{workflow}/runs/{run}/reject",
                           v(views.decide("rejected"), post=True, op="rejectStep", action="approve"), methods=["POST"]),
            StarletteRoute("/ui/workflows/{workflow}/runs/{run}/signal",
                           v(views.signal, post=True, op="signalStep", action="approve"), methods=["POST"]),
            StarletteRoute("/ui/workflows/{workflow}/runs/{run}/resume",
                           v(views.resume, post=True, op="resumeWorkflow", action="run"), methods=["POST"]),
            StarletteRoute("/ui/workflows/{workflow}/runs/{run}/rerun",
                           v(views.rerun, post=True, op="runWorkflow", action="run"), methods=["POST"]),
            StarletteRoute("/ui/workflows/{workflow}/runs/{run}/cancel",
                           v(views.cancel, post=True, op="cancelWorkflow", action="run"), methods=["POST"]),
            StarletteRoute("/ui/approvals", v(views.approvals), methods=["GET"]),
            StarletteRoute("/ui/models", v(views.models), methods=["GET"]),
            StarletteRoute("/ui/data/{model}/{name}", v(views.versions), methods=["GET"]),
            StarletteRoute("/ui/data/{model}/{name}/diff", v(views.diff), methods=["GET"]),
            StarletteRoute("/ui/data/{model}/{name}/{version}", v(views.version), methods=["GET"]),
            StarletteRoute("/ui/datastore", v(views.datastore), methods=["GET"]),
            StarletteRoute("/ui/datastore/conflicts/restore",
                           v(views.conflict("restore"), post=True, op="restoreConflict", action="write",
                             resource="data:*"), methods=["POST"]),
            StarletteRoute("/ui/datastore/conflicts/drop",
                           v(views.conflict("drop"), post=True, op="dropConflict", action="write",
                             resource="data:*"), methods=["POST"]),
            StarletteRoute("/ui/audit", v(views.audit), methods=["GET"]),
            StarletteRoute("/ui/extensions", v(views.extensions), methods=["GET"]),
            Mount("/ui/static", StaticFiles(directory=str(HERE / "static")), name="static"),
        ]


def routes(state) -> list:
    """The dashboard's routes, and a thread that reads every run once so
    that the first page of a large history is quick too."""
    import threading

    dash = Dashboard(state)
    dash.prepare()

    def warm() -> None:
        try:
            from swamp.app.dashboard_queries import warm as read_every_run

            read_every_run(state.repo, dash.index)
        except SwampError as e:
            print(f"swamp serve: dashboard: could not read the runs ahead: {e.message}", flush=True)

    threading.Thread(target=warm, name="dashboard warm-up", daemon=True).start()
    return dash.routes()


__all__ = ["Dashboard", "routes"]
