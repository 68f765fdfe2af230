"""Running a method: resolve and validate its arguments (``prepare``), then
run it and write the output record and log (``execute``). A failing method
still records its run; what it wrote before failing is kept. The caller
(the application layer) holds the session around both: the model's lease,
a pull before, one push after; or, for a workflow's steps (``publishing``
set), the session without the lease, which the runner takes only once the
method has ended, to number the versions it staged
(models/staged_versions.py)."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

from swamp.data.repository import DataRepository
from swamp.errors import NotFoundError, SwampError
from swamp.models.arguments import check_inputs, resolve_arguments
from swamp.models.context import Context, RunInfo
from swamp.models.definition_files import find, read_definition
from swamp.models.outputs import OutputRecord, write_record
from swamp.models.registry import Registry, registry_for
from swamp.util import clock, tracing
from swamp.util.actors import local_user
from swamp.util.ids import new_id
from swamp.util.documents import DocView
from swamp.util.names import did_you_mean
from swamp.util.plain import Plain
from swamp.vault.redact import redact_text

if TYPE_CHECKING:
    from swamp.models.definition_schema import Definition
    from swamp.repo.context import Repo


class Runner:
    """Runs methods of one repository. Workflows hold one Runner per run."""

    def __init__(self, repo: Repo, *, registry: Registry | None = None, renderer=None, on_log=None) -> None:
        self.repo = repo
        #: called with each line a method logs, as it logs it
        self.on_log = on_log
        self.registry = registry or registry_for(repo)
        self.renderer = renderer or _lazy_renderer(repo)
        self.datastore = repo.datastore
        self.data = DataRepository(self.datastore)
        #: pre-flight checks (models/checks.py) to skip: all of them, or these names
        self.skip_checks = False
        self.skip_check: frozenset[str] = frozenset()
        #: when set (a workflow's runs: app/workflows._Host.publishing), ``publishing(definition,
        #: command)`` is the session that holds the model's lease: a method then runs without it, its
        #: versions staged, and they are numbered and published in that session once it ends
        #: (models/staged_versions.py); unset, the caller holds the lease around the whole run
        self.publishing = None

    def check(self, model: str | Definition, method: str, inputs: dict | None = None) -> tuple[Definition, Any]:
        """What can be checked before a command takes any lease or pulls:
        the definition, its type, the method and the inputs (no expression
        is evaluated). Returns (definition, model type). A model named here is
        read on the fast path when its file is exactly as expected (a
        util/documents.DocView with the Definition's attributes) and its type
        is a built-in that runs without pydantic; otherwise, and for any type
        written with pydantic (whose checks see ``ctx.definition``), as the
        pydantic Definition."""
        definition = find(self.repo, model, read_definition)[1] if isinstance(model, str) else model
        model_type = self.registry.get(definition.type)
        if method not in model_type.methods:
            raise NotFoundError(
                f"model type {model_type.type!r} has no method {method!r}",
                hint=did_you_mean(method, model_type.methods) or f"methods: {', '.join(sorted(model_type.methods))}")
        if isinstance(definition, DocView) and model_type.fast_arguments(method) is None:
            from swamp.models.definition_schema import Definition

            definition = Definition.model_validate(definition)  # the same values, as the schema's instance
        check_inputs(definition, model_type, method, inputs)
        return definition, model_type

    def prepare(self, model: str | Definition, method: str, inputs: dict | None = None,
                variables: dict | None = None) -> "Prepared":
        """The method's arguments resolved (expressions evaluated, so after
        the session's pull) and validated. Raises before any write."""
        definition, model_type = self.check(model, method, inputs)
        args, used_inputs = resolve_arguments(definition, model_type, method, inputs,
                                              variables=variables, renderer=self.renderer)
        prepared = Prepared(definition, model_type, method, args, used_inputs)
        if getattr(model_type, "checks", None):  # pre-flight checks: a failure raises, nothing written
            from swamp.models.checks import run_checks

            run_checks(self.repo, self.data, prepared, skip_all=self.skip_checks, skip=self.skip_check)
        return prepared

    @tracing.traced("swamp.method", lambda self, p, **kw: {"model": p.definition.name, "model_type": p.definition.type,
                    "method": p.method, "workflow_run": kw.get("workflow_run_id"), "step": kw.get("step_name")},
                    lambda rec: {"status": rec.status, "output_id": rec.id})
    def execute(self, prepared: "Prepared", *, tags: dict | None = None, triggered_by: str = "manual",
                initiated_by: str | None = None, workflow_run_id: str | None = None, workflow_name: str | None = None,
                step_name: str | None = None, overrides: dict | None = None,
                ephemeral: dict | None = None, control=None, discard_failed: bool = False,
                output_id: str | None = None) -> OutputRecord:
        """Run a prepared method and write its output record and log. The
        caller holds the session (the application layer: the model's lease,
        a pull before, a push after), so ``prepared`` was resolved against
        what that pull brought.

        The method runs under ``control`` (swamp.util.processes.Control; the
        thread's own, or a new one): the processes it starts are stopped when
        it is cancelled, or on an interrupt. Cancelled, the run is recorded
        ``cancelled`` with the error "cancelled", and the data versions it
        wrote are deleted before the caller's push: nothing of it is
        published. Stopped with a reason (a step's timeout), it is recorded
        ``failed`` with that reason, and its data versions are deleted the
        same way; so are a failed run's when ``discard_failed`` (an attempt
        that is tried again: only the last attempt publishes data).
        ``initiated_by`` is who started it (util/actors.py; by
        default this process's user)."""
        from swamp.models import secrets, step_environment
        from swamp.util import processes
        from swamp.vault.process_secrets import register_process_secrets

        control = control or processes.current() or processes.Control()
        register_process_secrets()  # should one reach the run's output anyway, it is masked there

        definition, model_type, method = prepared.definition, prepared.model_type, prepared.method
        used_inputs = prepared.used_inputs
        # output_id: chosen by the starter of a detached run (serve's "wait": false), else new
        run = RunInfo(output_id=output_id or new_id(), method=method, tags=dict(tags or {}),
                      workflow_run_id=workflow_run_id, workflow_name=workflow_name, step_name=step_name,
                      overrides=dict(overrides or {}), ephemeral=ephemeral)
        args = secrets.resolve_arguments(self.repo, prepared.args, model_type.secret_passthrough)
        staged = None
        if self.publishing is not None:
            from swamp.models.staged_versions import StagedVersions

            staged = StagedVersions(self.datastore)
        ctx = Context(self.repo, definition, model_type, run, staged or self.data)
        ctx.on_log = self.on_log
        ctx.cancel_event = control.cancelled
        started = clock.now()
        t0 = time.perf_counter()
        status, error = "succeeded", None
        stderr_tail = None  # a failed command's last lines of stderr (CommandFailed), beside its error
        outer_environment, control.environment = control.environment, {**step_environment.base(), **tracing.child_env()}
        ctx.environment = dict(control.environment)
        try:
            with processes.owning(control):
                if not control.cancelled.is_set():  # cancelled while it was being prepared: it never starts
                    model_type.methods[method].fn(args, ctx)
        except SwampError as e:
            status, error = "failed", e.message
            stderr_tail = getattr(e, "stderr_tail", None)
            ctx.log(f"error: {e.message}")
        except KeyboardInterrupt:
            status, error = "cancelled", "interrupted"
            control.cancel()  # its processes go too (they run in sessions of their own)
            raise
        except Exception as e:  # the method's own failure: recorded, not a crash of swamp
            status, error = "failed", f"{type(e).__name__}: {e}"
            import traceback  # (1.5 ms to load: only when a method fails this way)

            ctx.log("".join(traceback.format_exception(e)).rstrip())
        finally:
            control.environment = outer_environment
            if error != "interrupted" and control.cancelled.is_set():
                if control.reason:  # a timeout: a failure, not a person's cancel
                    status, error = "failed", control.reason
                    ctx.log(f"{control.reason}: its processes were stopped; nothing it wrote is published")
                else:
                    status, error = "cancelled", "cancelled"
                    ctx.log("cancelled: its processes were stopped; nothing it wrote is published")
                self._drop(definition, ctx)
            elif status == "failed" and discard_failed:
                ctx.log("this attempt failed and is tried again: nothing it wrote is published")
                self._drop(definition, ctx)

            def record(status: str, error: str | None) -> OutputRecord:
                rec = OutputRecord(
                    id=run.output_id, definitionId=definition.id, modelName=definition.name,
                    modelType=definition.type, modelVersion=model_type.version, methodName=method,
                    status=status, startedAt=clock.isoformat(started), completedAt=clock.isoformat(),
                    durationMs=int((time.perf_counter() - t0) * 1000),
                    dataArtifacts=[a.to_json() for a in ctx.artifacts],
                    inputs=sorted(used_inputs), tags=run.tags, triggeredBy=triggered_by,
                    initiatedBy=initiated_by or local_user(),
                    workflowRunId=workflow_run_id, workflowName=workflow_name, stepName=step_name,
                    error=redact_text(error) if error else None,
                    stderrTail=redact_text(stderr_tail) if stderr_tail and status == "failed" else None,
                    pid=os.getpid(),
                )
                write_record(self.datastore, rec, "\n".join(ctx.log_lines) + ("\n" if ctx.log_lines else ""))
                return rec

            if staged is not None and staged.pending:
                rec = self._publish(staged, ctx, record, status, error, control)
            else:
                rec = record(status, error)
        return rec

    def _publish(self, staged, ctx: Context, record, status: str, error: str | None, control) -> OutputRecord:
        """Number and publish a staged run's versions under the model's
        lease (``self.publishing``: lease, pull, this, push, release), with
        the output record that names them in the same commit. When the
        lease cannot be had, nothing of the run is published: it fails,
        its record saying why. Cancelled while it waits for the lease (the
        run's cancel, its timeout: ``control``), it ends then, recorded as
        a cancel before the wait would have been (nothing published)."""
        definition = ctx.definition
        published = None
        try:
            with self.publishing(definition, f"model method run {definition.name} {ctx.method_name}: "
                                             "publish its data", cancelled=control.cancelled):
                numbers = staged.publish()
                for a in ctx.artifacts:
                    a.version = numbers.get(a.version, a.version)
                ctx.artifacts[:] = [a for a in ctx.artifacts if a.version >= 0]  # a stream never closed
                published = record(status, error)
        except SwampError as e:
            if published is not None:
                raise  # its push under the lease failed: the step's session reports it
            ctx.artifacts.clear()
            if control.cancelled.is_set() and status != "cancelled":  # stopped while it waited for the lease
                status, error = ("failed", control.reason) if control.reason else ("cancelled", "cancelled")
                ctx.log(f"{error} while it waited for its model's lease: nothing it wrote is published")
                return record(status, error)
            ctx.log(f"error: its data was not published: {e.message}")
            return record("failed", f"its data was not published: {e.message}")
        finally:
            staged.discard()
        return published

    def _drop(self, definition: Definition, ctx: Context) -> None:
        """Delete the data versions a cancelled run wrote (before any push;
        their numbers are never given out again, as after a delete). A
        staged run's were never numbered: its staging is dropped."""
        discard = getattr(ctx._data, "discard", None)
        if discard is not None:
            discard()
            ctx.artifacts.clear()
            return
        for a in ctx.artifacts:
            if a.version > 0:
                try:
                    self.data.delete(definition.type, definition.id, a.name, a.version)
                except Exception:  # noqa: BLE001 - best effort: the cancel is what is reported
                    pass
        ctx.artifacts.clear()


def _lazy_renderer(repo: Repo):
    """models/expressions.renderer_for(repo), loaded (with the expression
    engine and the namespaces it registers) only for a value holding an
    expression: a plain run never needs it."""
    real = None

    def render(value: Any, variables: dict, source: str, field: str) -> Any:
        nonlocal real
        if not holds_expressions(value):
            return value
        if real is None:
            from swamp.models.expressions import renderer_for

            real = renderer_for(repo)
        return real(value, variables, source, field)

    return render


def holds_expressions(value: Any) -> bool:
    """swamp.expr.has_expressions, without importing the expression engine
    (tests/unit/test_builtin_fast_run.py compares the two)."""
    if isinstance(value, str):
        return "${{" in value
    if isinstance(value, dict):
        return any(holds_expressions(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(holds_expressions(v) for v in value)
    return False


class Prepared(Plain):
    """One method with its arguments resolved and checked: everything a run
    needs, found before it writes anything. Read-only."""

    __slots__ = ("definition", "model_type", "method", "args", "used_inputs")

    def __init__(self, definition: Definition, model_type: Any, method: str, args: Any, used_inputs: Any) -> None:
        for k, v in zip(self.__slots__, (definition, model_type, method, args, used_inputs)):
            object.__setattr__(self, k, v)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __reduce__(self):
        return (Prepared, tuple(getattr(self, k) for k in self.__slots__))
