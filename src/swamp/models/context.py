"""The Context a method receives: write and read its model's versioned data,
stream files, read other models' data, and log."""

from __future__ import annotations

import functools
import json
import sys
from typing import TYPE_CHECKING, Any

from swamp.data.repository import DataRepository
from swamp.errors import NotFoundError, ValidationError
from swamp.models.api import ModelType
from swamp.util import clock
from swamp.util.digest import Sha256Stream, sha256_hex
from swamp.util.ids import new_id
from swamp.util.names import check_data_name
from swamp.util.plain import Plain
from swamp.vault.redact import StreamRedactor, redact_bytes, redact_text

if TYPE_CHECKING:
    from pydantic import BaseModel

    from swamp.models.definition_schema import Definition
    from swamp.repo.context import Repo


class Artifact(Plain):
    __slots__ = ("name", "specName", "version", "kind")

    def __init__(self, name: str, specName: str, version: int, kind: str) -> None:  # noqa: N803
        self.name, self.specName, self.version, self.kind = name, specName, version, kind

    def to_json(self) -> dict:
        return {"name": self.name, "specName": self.specName, "version": self.version, "kind": self.kind}


class RunInfo(Plain):
    __slots__ = ("output_id", "method", "tags", "workflow_run_id", "workflow_name", "step_name", "overrides",
                 "ephemeral")

    def __init__(self, output_id: str, method: str, tags: dict[str, str] | None = None,
                 workflow_run_id: str | None = None, workflow_name: str | None = None,
                 step_name: str | None = None, overrides: dict[str, dict] | None = None,
                 ephemeral: dict | None = None) -> None:
        self.output_id = output_id
        self.method = method
        self.tags: dict[str, str] = {} if tags is None else tags
        self.workflow_run_id = workflow_run_id
        self.workflow_name = workflow_name
        self.step_name = step_name
        #: per spec name, a workflow step's dataOutputOverrides: lifetime,
        #: garbageCollection, tags, and ``suffix`` (its vary values joined)
        self.overrides: dict[str, dict] = {} if overrides is None else overrides
        #: ephemeral data of the whole run, {(model id, name): record}: later
        #: steps of the same run see it; it is never written
        self.ephemeral = ephemeral


class Context:
    def __init__(self, repo: Repo, definition: Definition, model_type: ModelType, run: RunInfo,
                 data: DataRepository) -> None:
        self.repo = repo
        self.definition = definition
        self.model_type = model_type
        self.run = run
        self._data = data
        self.artifacts: list[Artifact] = []
        self._log: list[str] = []
        self._ephemeral: dict = run.ephemeral if run.ephemeral is not None else {}
        #: set when the run is cancelled (swamp.util.processes.Control.cancelled)
        self.cancel_event = None

    # ---------------------------------------------------------------- ids
    @property
    def model_name(self) -> str:
        return self.definition.name

    @property
    def method_name(self) -> str:
        return self.run.method

    @property
    def cancelled(self) -> bool:
        """Whether the run was cancelled (`swamp workflow cancel`, `swamp
        model cancel`, a placed step's cancel): a method that loops should
        stop, writing nothing more. The processes it started are stopped
        for it."""
        return self.cancel_event is not None and self.cancel_event.is_set()

    @property
    def repo_dir(self):
        return self.repo.root if self.repo is not None else None

    # ------------------------------------------------------------ secrets
    def resolve_secrets(self, value: Any) -> Any:
        """Vault references in ``value`` resolved to their secrets (which are
        registered for redaction first)."""
        from swamp.models import secrets

        return secrets.resolve(self.repo, value)

    def shell_secrets(self, command: str) -> tuple[str, dict[str, str]]:
        """A shell command whose vault references became $VARIABLES, and the
        environment that sets them: the secret never enters the command text."""
        from swamp.models import secrets

        return secrets.shell_env(self.repo, command)

    #: the environment of the processes this run starts (models/step_environment.py): a safe base,
    #: never swamp's own; a process started without ``env=`` gets it. Set by the runner.
    environment: dict | None = None

    # ------------------------------------------------------------ logging
    #: called with each line the method logs (redacted), e.g. to show progress
    on_log = None

    def log(self, message: str) -> None:
        line = redact_text(str(message))
        self._log.append(f"{clock.isoformat()} {line}")
        if self.on_log is not None:
            self.on_log(line)

    def progress(self, message: str) -> None:
        """A line shown while the method runs (a terminal's activity line,
        `swamp serve`'s log events, a worker's step log), not kept in the
        run's log: for output the method keeps elsewhere, as command/shell
        keeps its command's in the ``log`` file."""
        if self.on_log is not None:
            self.on_log(redact_text(str(message)))

    @property
    def log_lines(self) -> list[str]:
        return list(self._log)

    # -------------------------------------------------------------- data
    def _meta_fields(self, name: str, spec_name: str, kind: str, content_type: str,
                     lifetime: str, gc, streaming: bool = False) -> dict:
        return {
            "id": new_id(), "name": name, "specName": spec_name, "kind": kind,
            "contentType": content_type, "lifetime": lifetime, "garbageCollection": gc,
            "streaming": streaming,
            "tags": {**self.definition.tags, **self.run.tags, "type": kind, "specName": spec_name,
                     "modelName": self.definition.name, **self._provenance()},
            "owner": {
                "definitionId": self.definition.id, "definitionName": self.definition.name,
                "modelType": self.definition.type, "methodName": self.run.method,
                "outputId": self.run.output_id, "workflowRunId": self.run.workflow_run_id,
                "workflowName": self.run.workflow_name, "stepName": self.run.step_name,
            },
            "createdAt": clock.isoformat(),
        }

    def _provenance(self) -> dict[str, str]:
        """Tags saying which workflow run and step wrote a version (so
        `data search --tag workflowRunId=...` finds a run's data); none for
        a direct run."""
        run = self.run
        if not run.workflow_run_id:
            return {}
        return {"workflow": run.workflow_name or "", "workflowRunId": run.workflow_run_id,
                "step": run.step_name or ""}

    def _settings(self, kind: str, spec_name: str, spec) -> tuple[str, Any, dict, str]:
        """(lifetime, garbage collection, extra tags, name suffix) of a spec:
        the type's, then the definition's override, then a workflow step's."""
        from swamp.models.specs import check_gc_policy, check_lifetime

        lifetime, gc = spec.lifetime, spec.garbage_collection
        own = (getattr(self.definition, "resources" if kind == "resource" else "files", None) or {}).get(spec_name)
        if own is not None:
            lifetime = check_lifetime(own.lifetime) if own.lifetime is not None else lifetime
            gc = check_gc_policy(own.garbageCollection) if own.garbageCollection is not None else gc
        step = self.run.overrides.get(spec_name) or {}
        if step.get("lifetime") is not None:
            lifetime = check_lifetime(step["lifetime"])
        if step.get("garbageCollection") is not None:
            gc = check_gc_policy(step["garbageCollection"])
        return lifetime, gc, dict(step.get("tags") or {}), step.get("suffix") or ""

    def write_resource(self, spec_name: str, name: str, data: BaseModel | dict) -> Artifact:
        spec = self.model_type.resources.get(spec_name)
        if spec is None:
            raise ValidationError(f"{self.model_type.type} declares no resource {spec_name!r}",
                                  hint=f"declared: {', '.join(sorted(self.model_type.resources)) or 'none'}")
        check_data_name(name)
        if _is_model(data):
            data = data.model_dump(mode="json")
        fast = spec.lazy.fast(data) if getattr(spec, "lazy", None) is not None else None
        if fast is not None:  # exactly what its schema takes: the same as the schema would give
            data = fast.model_dump()
        elif spec.schema is not None:
            from pydantic import ValidationError as PydanticError

            try:
                data = spec.schema.model_validate(data).model_dump(mode="json")
            except PydanticError as e:
                from swamp.util.documents import format_errors

                raise ValidationError(f"resource {spec_name!r}: {format_errors(e)[0]}") from None
        lifetime, gc, extra_tags, suffix = self._settings("resource", spec_name, spec)
        name = check_data_name(name + suffix)
        if lifetime == "ephemeral":
            # Never written: kept for this invocation (or, in a workflow,
            # for the later steps of the same run).
            meta = self._meta_fields(name, spec_name, "resource", "application/json", lifetime, gc)
            meta["tags"].update(extra_tags)
            previous = self._ephemeral.get((self.definition.id, name))
            version = (previous["version"] + 1) if previous else 1
            self._ephemeral[(self.definition.id, name)] = {
                "name": name, "version": version, "specName": spec_name, "kind": "resource",
                "contentType": "application/json", "createdAt": meta["createdAt"], "size": 0, "sha256": "",
                "tags": dict(sorted(meta["tags"].items())), "lifetime": "ephemeral", "content": data,
                "attributes": data, "model": self.definition.name, "id": meta["id"]}
            return Artifact(name, spec_name, 0, "resource")
        from swamp.models import sensitive

        data = sensitive.store_sensitive(
            self.repo, data, sensitive.sensitive_fields(spec),
            f"{self.definition.type.replace('/', '-').lstrip('@')}-{self.definition.id}-{spec_name}-{name}")
        content = redact_bytes(json.dumps(data, indent=2, sort_keys=True).encode() + b"\n")
        meta = self._meta_fields(name, spec_name, "resource", "application/json", lifetime, gc)
        meta["tags"].update(extra_tags)
        rec = self._data.write(self.definition.type, self.definition.id, meta, content)
        art = Artifact(name, spec_name, rec.meta.version, "resource")
        self.artifacts.append(art)
        return art

    def read_resource(self, name: str, version: int | None = None) -> Any:
        """The content of this model's data ``name`` (highest version when
        none is given), or None when there is none."""
        if version is None and (self.definition.id, name) in self._ephemeral:
            return self._ephemeral[(self.definition.id, name)]["content"]
        try:
            rec = self._data.get(self.definition.type, self.definition.id, name, version)
        except NotFoundError:
            return None
        from swamp.models.sensitive import reveal

        return reveal(self.repo, _decode(rec.meta.contentType, self._data.content(rec)))

    def delete_resource(self, name: str) -> None:
        self._ephemeral.pop((self.definition.id, name), None)
        self._data.delete(self.definition.type, self.definition.id, name)

    def file_writer(self, spec_name: str, name: str) -> "FileWriter":
        spec = self.model_type.files.get(spec_name)
        if spec is None:
            raise ValidationError(f"{self.model_type.type} declares no file {spec_name!r}",
                                  hint=f"declared: {', '.join(sorted(self.model_type.files)) or 'none'}")
        lifetime, gc, extra_tags, suffix = self._settings("file", spec_name, spec)
        name = check_data_name(name + suffix)
        if lifetime == "ephemeral":
            return EphemeralFileWriter(self, spec_name, name, spec, extra_tags)
        return FileWriter(self, spec_name, name, spec, (lifetime, gc, extra_tags))

    def read_model_data(self, model_name: str, name: str, version: int | None = None) -> Any:
        from swamp.models.definitions import find_definition

        _, d = find_definition(self.repo, model_name)
        try:
            rec = self._data.get(d.type, d.id, name, version)
        except NotFoundError:
            return None
        return _decode(rec.meta.contentType, self._data.content(rec))


class FileWriter:
    """Streams a file version: bytes go straight to an atomic temp file; the
    version becomes visible only when the writer closes cleanly."""

    def __init__(self, ctx: Context, spec_name: str, name: str, spec, settings: tuple) -> None:
        self._ctx, self._spec_name, self._name, self._spec = ctx, spec_name, name, spec
        self._settings = settings
        self._hash = Sha256Stream()
        self._size = 0
        #: chunks may cut a secret anywhere: its start is held back until the rest is seen
        self._redactor = StreamRedactor()
        self._cm = None
        self._f = None
        self._version = None
        self.artifact: Artifact | None = None

    def __enter__(self) -> "FileWriter":
        d = self._ctx._data
        t, mid = self._ctx.definition.type, self._ctx.definition.id
        self._version = d.allocate(t, mid, self._name)
        try:
            self._cm = d.ds.open_write(d.raw_target(t, mid, self._name, self._version))
            self._f = self._cm.__enter__()
        except BaseException:  # no temp file to write into (a full disk): leave no empty claim
            d.abandon(t, mid, self._name, self._version)
            raise
        return self

    def write(self, chunk: bytes | str) -> None:
        if isinstance(chunk, str):
            chunk = chunk.encode()
        self._put(self._redactor.feed(chunk))

    def _put(self, chunk: bytes) -> None:
        if chunk:
            self._hash.update(chunk)
            self._size += len(chunk)
            self._f.write(chunk)

    def write_line(self, line: str) -> None:
        self.write(line.rstrip("\n") + "\n")

    def __exit__(self, exc_type, exc, tb) -> None:
        ctx = self._ctx
        abandon = functools.partial(ctx._data.abandon, ctx.definition.type, ctx.definition.id, self._name,
                                    self._version)
        try:
            if exc_type is None:
                self._put(self._redactor.flush())
            self._cm.__exit__(exc_type, exc, tb)
        except BaseException:  # closing the file failed (a full disk)
            abandon()
            raise
        if exc_type is not None:  # the method failed or was interrupted mid-stream
            abandon()
            return
        lifetime, gc, extra_tags = self._settings
        meta = ctx._meta_fields(self._name, self._spec_name, "file", self._spec.content_type,
                                lifetime, gc, self._spec.streaming)
        meta["tags"].update(extra_tags)
        try:
            rec = ctx._data.finish_stream(ctx.definition.type, ctx.definition.id, meta,
                                          self._version, self._size, self._hash.hexdigest())
        except BaseException:
            abandon()
            raise
        self.artifact = Artifact(self._name, self._spec_name, rec.meta.version, "file")
        ctx.artifacts.append(self.artifact)


class EphemeralFileWriter:
    """A file of an ephemeral spec: kept in memory for the invocation (or
    the workflow run), never written."""

    def __init__(self, ctx: Context, spec_name: str, name: str, spec, extra_tags: dict) -> None:
        self._ctx, self._spec_name, self._name, self._spec = ctx, spec_name, name, spec
        self._tags = extra_tags
        self._chunks: list[bytes] = []
        self.artifact: Artifact | None = None

    def __enter__(self) -> "EphemeralFileWriter":
        return self

    def write(self, chunk: bytes | str) -> None:
        # bytes(): a copy of a bytearray or memoryview the method may reuse for its next chunk
        # (redacted whole at the end: a chunk may cut a secret anywhere)
        self._chunks.append(bytes(chunk.encode() if isinstance(chunk, str) else chunk))

    def write_line(self, line: str) -> None:
        self.write(line.rstrip("\n") + "\n")

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            return
        ctx = self._ctx
        raw = redact_bytes(b"".join(self._chunks))
        meta = ctx._meta_fields(self._name, self._spec_name, "file", self._spec.content_type, "ephemeral", None)
        meta["tags"].update(self._tags)
        key = (ctx.definition.id, self._name)
        previous = ctx._ephemeral.get(key)
        content = _decode(self._spec.content_type, raw)
        ctx._ephemeral[key] = {
            "name": self._name, "version": (previous["version"] + 1) if previous else 1,
            "specName": self._spec_name, "kind": "file", "contentType": self._spec.content_type,
            "createdAt": meta["createdAt"], "size": len(raw), "sha256": sha256_hex(raw),
            "tags": dict(sorted(meta["tags"].items())), "lifetime": "ephemeral", "content": content,
            "model": ctx.definition.name, "id": meta["id"]}
        self.artifact = Artifact(self._name, self._spec_name, 0, "file")


def _is_model(value: Any) -> bool:
    """A pydantic instance? (Without importing pydantic: if nobody has,
    there is none.)"""
    pydantic = sys.modules.get("pydantic")
    return pydantic is not None and isinstance(value, pydantic.BaseModel)


def _decode(content_type: str, raw: bytes) -> Any:
    if content_type == "application/json":
        return json.loads(raw)
    try:
        return raw.decode()
    except UnicodeDecodeError:
        return raw
