"""Running a method: resolve and validate its arguments, take the model's
lock (a lease on a shared datastore), run, and write the output record and
log. A failing method still records its run; what it wrote before failing is
kept."""

from __future__ import annotations

import os
import time
import traceback

from swamp.data.repository import DataRepository
from swamp.models.leases import model_lock_name
from swamp.errors import NotFoundError, SwampError
from swamp.models.arguments import resolve_arguments
from swamp.models.context import Context, RunInfo
from swamp.models.definitions import Definition, find_definition
from swamp.models.outputs import OutputRecord, write_record
from swamp.models.registry import Registry, registry_for
from swamp.util import clock
from swamp.util.ids import new_id
from swamp.util.names import did_you_mean
from swamp.vault.redact import redact_text


class Runner:
    """Runs methods of one repository. Workflows hold one Runner per run."""

    def __init__(self, repo, *, registry: Registry | None = None, renderer=None) -> None:
        self.repo = repo
        self.registry = registry or registry_for(repo)
        if renderer is None:
            from swamp.models.expressions import renderer_for

            renderer = renderer_for(repo)
        self.renderer = renderer
        self.datastore = repo.datastore
        self.data = DataRepository(self.datastore)
        #: what the last run's pull and push moved (zeros on a filesystem datastore)
        self.last_sync = None

    def prepare(self, model: str | Definition, method: str, inputs: dict | None = None,
                variables: dict | None = None):
        """Everything that can be checked before running: the definition, its
        type, the method, the inputs and arguments. Raises before any write."""
        definition = model if isinstance(model, Definition) else find_definition(self.repo, model)[1]
        model_type = self.registry.get(definition.type)
        if method not in model_type.methods:
            raise NotFoundError(
                f"model type {model_type.type!r} has no method {method!r}",
                hint=did_you_mean(method, model_type.methods) or f"methods: {', '.join(sorted(model_type.methods))}")
        args, used_inputs = resolve_arguments(definition, model_type, method, inputs,
                                              variables=variables, renderer=self.renderer)
        return definition, model_type, args, used_inputs

    def run(self, model: str | Definition, method: str, *, inputs: dict | None = None,
            tags: dict | None = None, triggered_by: str = "manual", workflow_run_id: str | None = None,
            workflow_name: str | None = None, step_name: str | None = None,
            variables: dict | None = None, prepared=None) -> OutputRecord:
        definition, model_type, args, used_inputs = prepared or self.prepare(model, method, inputs, variables)
        from swamp.models import secrets

        run = RunInfo(output_id=new_id(), method=method, tags=dict(tags or {}),
                      workflow_run_id=workflow_run_id, workflow_name=workflow_name, step_name=step_name)
        lock = model_lock_name(definition.type, definition.id)
        with self.datastore.session(mutating=True, locks=[lock],
                                    command=f"model method run {definition.name} {method}") as counts:
            if counts.filesPulled or counts.filesDeleted:
                # Arguments that read data must see what this pull brought.
                definition, model_type, args, used_inputs = self.prepare(definition, method, inputs, variables)
            args = secrets.resolve_arguments(self.repo, args, model_type.secret_passthrough)
            ctx = Context(self.repo, definition, model_type, run, self.data)
            started = clock.now()
            t0 = time.perf_counter()
            status, error = "succeeded", None
            try:
                model_type.methods[method].fn(args, ctx)
            except SwampError as e:
                status, error = "failed", e.message
                ctx.log(f"error: {e.message}")
            except KeyboardInterrupt:
                status, error = "cancelled", "interrupted"
                raise
            except Exception as e:  # the method's own failure: recorded, not a crash of swamp
                status, error = "failed", f"{type(e).__name__}: {e}"
                ctx.log("".join(traceback.format_exception(e)).rstrip())
            finally:
                rec = OutputRecord(
                    id=run.output_id, definitionId=definition.id, modelName=definition.name,
                    modelType=definition.type, modelVersion=model_type.version, methodName=method,
                    status=status, startedAt=clock.isoformat(started), completedAt=clock.isoformat(),
                    durationMs=int((time.perf_counter() - t0) * 1000),
                    dataArtifacts=[a.to_json() for a in ctx.artifacts],
                    inputs=sorted(used_inputs), tags=run.tags, triggeredBy=triggered_by,
                    workflowRunId=workflow_run_id, workflowName=workflow_name, stepName=step_name,
                    error=redact_text(error) if error else None, pid=os.getpid(),
                )
                write_record(self.datastore, rec, "\n".join(ctx.log_lines) + ("\n" if ctx.log_lines else ""))
        self.last_sync = counts  # complete now: the session has pushed
        return rec
