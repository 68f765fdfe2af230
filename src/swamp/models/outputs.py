"""Output records: one per method run, written once in its final state, with
the run log beside it.
``outputs/{type}/{definitionId}/{method}/{startedAt}-{outputId}.yaml`` (+ ``.log``)."""

from __future__ import annotations

from typing import Iterator, Literal

from pydantic import BaseModel, ConfigDict, Field

from swamp.datastore.base import Datastore
from swamp.errors import NotFoundError
from swamp.util import documents, yamlio

OUTPUTS = "outputs"


class OutputRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    definitionId: str
    modelName: str
    modelType: str
    modelVersion: str
    methodName: str
    status: Literal["succeeded", "failed", "cancelled"]
    startedAt: str
    completedAt: str
    durationMs: int
    dataArtifacts: list[dict] = Field(default_factory=list)
    inputs: list[str] = Field(default_factory=list)  # key names only: values may be secret
    tags: dict[str, str] = Field(default_factory=dict)
    triggeredBy: Literal["manual", "workflow", "model"] = "manual"
    workflowRunId: str | None = None
    workflowName: str | None = None
    stepName: str | None = None
    error: str | None = None
    logFile: str | None = None
    pid: int | None = None

    def to_json(self) -> dict:
        return self.model_dump(exclude_none=True)


def record_path(rec: OutputRecord) -> str:
    stamp = rec.startedAt.replace(":", "").replace("-", "").replace(".", "")
    return f"{OUTPUTS}/{rec.modelType}/{rec.definitionId}/{rec.methodName}/{stamp}-{rec.id}.yaml"


def write_record(ds: Datastore, rec: OutputRecord, log_text: str) -> None:
    from swamp.vault.redact import redact_text

    path = record_path(rec)
    log_path = path[: -len(".yaml")] + ".log"
    ds.write_bytes(log_path, redact_text(log_text).encode())
    rec.logFile = log_path
    ds.write_bytes(path, redact_text(yamlio.dumps(rec.to_json())).encode())


def iter_records(ds: Datastore) -> Iterator[tuple[str, OutputRecord]]:
    for rel in ds.walk(OUTPUTS):
        if rel.endswith(".yaml"):
            yield rel, load_record(ds, rel)


def load_record(ds: Datastore, rel: str) -> OutputRecord:
    return documents.validate(OutputRecord, yamlio.loads(ds.read_bytes(rel).decode(), rel), rel)


#: the shortest id prefix accepted (a shorter one matches too much to mean one run)
MIN_PREFIX = 4


def find_record(ds: Datastore, output_id: str) -> tuple[str, OutputRecord]:
    """The record of the run with this id, or with the one id that starts
    with it (as git takes a short commit id)."""
    from swamp.errors import ConflictError

    if len(output_id) < MIN_PREFIX:
        raise NotFoundError(f"no method run with id {output_id!r}",
                            hint=f"give the id, or at least its first {MIN_PREFIX} characters")
    found = []
    for rel in ds.walk(OUTPUTS):
        if not rel.endswith(".yaml"):
            continue
        run_id = _id_of(rel)
        if run_id == output_id:
            return rel, load_record(ds, rel)
        if run_id.startswith(output_id):
            found.append(rel)
    if len(found) == 1:
        return found[0], load_record(ds, found[0])
    if found:
        ids = sorted(_id_of(rel) for rel in found)
        raise ConflictError(f"{output_id!r} is the start of {len(ids)} run ids: {', '.join(ids[:5])}"
                            + (" ..." if len(ids) > 5 else ""), hint="give more of the id")
    raise NotFoundError(f"no method run with id {output_id!r}", hint="list runs with 'swamp model output search'")


def _id_of(rel: str) -> str:
    """<time>-<id>.yaml -> id (ids are uuids: the last five dash-separated parts)."""
    return "-".join(rel.rsplit("/", 1)[-1][: -len(".yaml")].split("-")[-5:])
