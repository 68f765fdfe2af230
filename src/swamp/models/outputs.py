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


def find_record(ds: Datastore, output_id: str) -> tuple[str, OutputRecord]:
    suffix = f"-{output_id}.yaml"
    for rel in ds.walk(OUTPUTS):
        if rel.endswith(suffix):
            return rel, load_record(ds, rel)
    raise NotFoundError(f"no method run with id {output_id!r}")
