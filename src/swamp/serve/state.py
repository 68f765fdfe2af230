"""What a running server holds: its settings, its run limits and the
work in flight (which a shutdown waits for and stops), the background runs
of webhooks, schedules and detached API runs, and who a request's token
acts as and whether a grant allows it. build_app (app.py) makes one."""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import anyio
from starlette.requests import Request

from swamp.errors import HttpError, SwampError
from swamp.serve.calls import Call, Route
from swamp.serve.wire import _log

#: the default request body limit (a method's inputs, not its data)
MAX_BODY = 1024 * 1024
#: at shutdown, how long runs asked to stop may take to stop
CANCEL_GRACE_S = 30.0
#: threads for runs at once (the run limits admit fewer unless raised past it)
RUN_THREADS = 1000
#: threads for reads at once (anyio's default, which reads used before)
READ_THREADS = 40


@dataclass
class Settings:
    auth_mode: str = "token"  # token | none
    max_body: int = MAX_BODY
    #: at shutdown, how long requests in flight may finish before runs are asked to stop
    shutdown_timeout: float = 30.0
    audit_path: Any = None  # a Path, or None for the default
    #: runs (method, workflow run or resume) at once: in all, and per caller (None: no limit)
    max_runs: int | None = None
    max_runs_per_principal: int | None = None
    #: name -> webhooks.Webhook
    webhooks: dict = field(default_factory=dict)
    #: scheduler.Schedule, fired by whichever replica claims each tick
    schedules: list = field(default_factory=list)
    #: fire the workflows' own triggers too (serve --no-schedules: neither these nor --schedule)
    triggers: bool = True
    #: a workflow run going longer is asked to stop (None: no limit)
    max_run_duration: float | None = None
    #: serve the dashboard's pages under /ui/ too
    dashboard: bool = False
    #: the front door (front_door.py): where it listens, and the Host and Origin values it also accepts
    bind_host: str = "127.0.0.1"
    port: int | None = None
    allow_hosts: tuple = ()
    allow_origins: tuple = ()
    #: the local user's token (local_token.py), full access; None: none
    local_token: str | None = None
    local_token_file: Any = None
    #: the HTTP server's bounds (http_limits.py)
    header_timeout: float = 10.0
    body_timeout: float = 20.0
    max_connections: int = 1000


@dataclass
class ServeState:
    repo: Any
    settings: Settings
    tokens: Any = None
    grants: Any = None
    audit: Any = None
    shutting_down: bool = False
    inflight: dict = field(default_factory=dict)
    cond: threading.Condition = field(default_factory=threading.Condition)
    next_id: int = 0
    running: dict = field(default_factory=dict)  # caller -> runs now
    _run_threads: Any = None
    _read_pool: Any = None

    async def read_in_thread(self, fn):
        """``fn()`` in a thread of the read pool, in a copy of this context
        (as anyio's run_sync), for less than anyio's hop costs: this is on
        every read. A request cancelled at shutdown stops waiting; the
        read finishes in its thread."""
        if self._read_pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._read_pool = ThreadPoolExecutor(READ_THREADS, thread_name_prefix="swamp-read")
        import contextvars

        return await asyncio.get_running_loop().run_in_executor(self._read_pool, contextvars.copy_context().run, fn)

    def threads_for(self, route: Route):
        """The worker threads a request waits for: runs have their own, so
        that however many runs are going, reads never queue behind them
        (reads go through read_in_thread's own pool; the runs are bounded
        by admit())."""
        if not route.runs:
            return None
        if self._run_threads is None:  # made in the event loop, at the first run
            self._run_threads = anyio.CapacityLimiter(RUN_THREADS)
        return self._run_threads

    # --------------------------------------------------------------- limits
    def admit(self, who: str) -> None:
        s = self.settings
        with self.cond:
            total = sum(self.running.values())
            if s.max_runs is not None and total >= s.max_runs:
                raise HttpError("too_many_runs", f"{total} runs are going; this server runs at most {s.max_runs}",
                                hint="retry shortly, or on another replica")
            mine = self.running.get(who, 0)
            if s.max_runs_per_principal is not None and mine >= s.max_runs_per_principal:
                raise HttpError("too_many_runs", f"{who} has {mine} runs going; the limit is "
                                f"{s.max_runs_per_principal} per caller", hint="retry once one has finished")
            self.running[who] = mine + 1

    def hand_over(self, who: str) -> bool:
        """Count one more run for ``who`` without the limit check: a request
        admitted already hands its run to a background thread (which then
        releases it), as its own admission ends with the request."""
        with self.cond:
            self.running[who] = self.running.get(who, 0) + 1
        return True

    def release(self, who: str) -> None:
        with self.cond:
            self.running[who] -= 1
            if not self.running[who]:
                del self.running[who]

    # ------------------------------------------------------ in-flight work
    def begin(self) -> int:
        with self.cond:
            self.next_id += 1
            self.inflight[self.next_id] = {"since": time.monotonic()}
            return self.next_id

    def note(self, key: int, info: dict) -> None:
        with self.cond:
            if key in self.inflight:
                self.inflight[key].update(info)

    def end(self, key: int) -> None:
        with self.cond:
            self.inflight.pop(key, None)
            self.cond.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self.cond:
            while self.inflight:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.cond.wait(left)
            return True

    def drain(self) -> None:
        """Called once uvicorn has stopped accepting and waited (up to
        ``shutdown_timeout``) for requests in flight. Workflow runs still
        going are asked to stop (their steps in flight are stopped and
        their engine records them cancelled), and waited for, up to
        CANCEL_GRACE_S."""
        self.shutting_down = True
        if self.wait_idle(0):
            return
        from swamp.app import workflows

        with self.cond:
            pending = [dict(v) for v in self.inflight.values()]
        for info in pending:
            if info.get("kind") == "workflow" and info.get("runId"):
                try:
                    workflows.cancel(self.repo, info["workflow"], info["runId"])
                    _log(f"shutdown: asked run {info['runId']} of {info['workflow']} to stop")
                except SwampError as e:
                    _log(f"shutdown: could not cancel run {info['runId']}: {e.message}")
        if not self.wait_idle(CANCEL_GRACE_S):
            with self.cond:
                left = list(self.inflight.values())
            _log(f"shutdown: {len(left)} run(s) still going after {CANCEL_GRACE_S:.0f} s more: {left}")

    def start_workflow(self, workflow: str, inputs: dict, who: str, *, admitted: bool = False,
                       run_id: str | None = None, fail_on: str | None = None, by: str | None = None,
                       on_end=None, subjects: list[str] | None = None) -> str:
        """Run a workflow in a thread of its own (webhooks, schedules,
        detached API runs), counted in flight so that a shutdown waits for
        it. Returns the run's id (``run_id``, or a new one), known before
        the run starts. ``subjects``: the caller whose vault grants the run
        reads with (a request's); None for the server's own webhooks and
        schedules, which read with the server's authority."""
        from swamp.serve.workflow_routes import step_observer
        from swamp.util.ids import new_id

        run_id = run_id or new_id()

        def work(call) -> str:
            from swamp.app import workflows

            call.note({"kind": "workflow", "workflow": workflow, "runId": run_id})
            result = workflows.run(self.repo, workflow, inputs, fail_on=fail_on,
                                   observer=step_observer(call, workflow), by=by or who, run_id=run_id)
            return f"{who}: run {result.run.id} of {workflow} {result.run.status}"

        self._in_background(f"run {workflow} for {who}", workflow, work, who, admitted,
                            failed=f"{who}: {workflow} did not run", on_end=on_end,
                            subjects=subjects, op="detachedRun")
        return run_id

    def resume_workflow(self, workflow: str, run_id: str, who: str, *, by: str | None = None,
                        subjects: list[str] | None = None) -> None:
        """Continue a suspended run in a thread of its own (after the last
        decision it waited for), counted against ``who``'s run limits, its
        vaults read with ``subjects``' grants."""
        from swamp.serve.workflow_routes import step_observer

        self.admit(who)

        def work(call) -> str:
            from swamp.app import workflows

            call.note({"kind": "workflow", "workflow": workflow, "runId": run_id})
            result = workflows.resume(self.repo, workflow, run_id, {}, observer=step_observer(call, workflow),
                                      by=by or who)
            return f"{who}: run {run_id} of {workflow} {result.run.status} (continued after a decision)"

        self._in_background(f"resume {workflow} for {who}", workflow, work, who, True,
                            failed=f"{who}: run {run_id} of {workflow} did not continue",
                            subjects=subjects or [who], op="continueAfterDecision")

    def in_background(self, label: str, work, who: str, subjects: list[str] | None = None) -> None:
        """Run ``work()`` (it returns the line to log) in a thread of its own,
        counted as ``who``'s run, which the request admitted and hands over."""
        self.hand_over(who)
        self._in_background(label, "", lambda call: work(), who, True, failed=f"{who}: {label} failed",
                            subjects=subjects or [who], op="detachedRun")

    def _in_background(self, label: str, workflow: str, work, who: str, admitted: bool, *, failed: str,
                       on_end=None, subjects: list[str] | None = None, op: str = "") -> None:
        import contextlib

        from swamp.serve import vault_grants

        key = self.begin()
        # a new thread starts with no context: the caller's vault grants are set again here
        grants = (vault_grants.acting_for(self, subjects, op) if subjects is not None
                  else contextlib.nullcontext())

        def run() -> None:
            call = Call(self.repo, {"workflow": workflow}, {}, {})
            call.note = lambda info: self.note(key, info)
            call.note({"kind": "workflow", "workflow": workflow})
            try:
                with grants:
                    _log(work(call))
            except SwampError as e:
                _log(f"{failed}: {e.message}")
            except Exception:
                import traceback

                traceback.print_exc()
            finally:
                self.end(key)
                if admitted:
                    self.release(who)
                if on_end is not None:
                    on_end()

        threading.Thread(target=run, name=label).start()

    # ------------------------------------------------------------ access
    def subjects(self, request: Request) -> list[str]:
        if self.settings.auth_mode == "none":
            return ["anonymous"]
        header = request.headers.get("authorization", "")
        scheme, _, presented = header.partition(" ")
        if scheme.lower() != "bearer" or not presented.strip():
            raise HttpError("unauthorized", "this server needs a token",
                            hint="pass --token (or SWAMP_SERVE_TOKEN): the user who started the server has "
                                 "one in ~/.config/swamp/serve/ (which --server on that machine uses), and an "
                                 "admin mints others with 'swamp access token mint NAME'")
        found = self.check_token(presented.strip())
        if found is None:
            raise HttpError("unauthorized", "the token is unknown or revoked",
                            hint="ask for a new one ('swamp access token mint' or 'rotate')")
        self.grants.current()  # broken grants refuse every request (503 access_broken), lists with no rows too
        return found

    def check_token(self, presented: str) -> list[str] | None:
        """The subjects of a token (the local user's or a minted one), or None."""
        import hmac

        local = self.settings.local_token
        if local and hmac.compare_digest(presented.encode(), local.encode()):
            return local_subjects()
        found = self.tokens.check(presented)
        return found[1] if found else None

    def full_access(self, subjects: list[str]) -> bool:
        """The local user's token, or a server that asks nobody: no grant is checked."""
        return self.settings.auth_mode == "none" or LOCAL_SUBJECT in subjects

    def allowed(self, subjects: list[str], action: str, resource: str) -> bool:
        if self.full_access(subjects):
            return True
        return self.grants.allowed(subjects, action, resource)

    def authorize(self, subjects: list[str], action: str, resource: str) -> None:
        if not self.allowed(subjects, action, resource):
            raise HttpError("forbidden", f"{action} on {resource} is not allowed",
                            hint="an admin adds a grant ('swamp access grant create', or grants/*.yaml); "
                                 f"explain with 'swamp access check --token NAME --action {action} --on {resource}'")


#: the subject only the local user's token carries: full access (no grant names it)
LOCAL_SUBJECT = "local"


def local_subjects() -> list[str]:
    """Who the local token acts for: the user who started the server."""
    import getpass

    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "local"
    return [f"user:{user}", LOCAL_SUBJECT]
