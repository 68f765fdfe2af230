"""THE schema of an output record (``outputs/.../<startedAt>-<id>.yaml``).

Reading a record back validates it with this model. Writing one does not
import it: the runner builds the record itself (``models/outputs.py``
``OutputRecord``), which hands its values to this schema whenever one is not
exactly of the type this schema keeps (tests/unit/test_output_record_light.py
proves both paths give the same document)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class OutputRecordSchema(BaseModel):
    model_config = ConfigDict(extra="forbid", title="OutputRecord")  # as its errors were titled

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
    #: who started it (util/actors.py); a workflow step's is its run's
    initiatedBy: str | None = None
    workflowRunId: str | None = None
    workflowName: str | None = None
    stepName: str | None = None
    error: str | None = None
    #: a failed command's last lines of stderr (command/shell), kept apart from its short error
    stderrTail: str | None = None
    logFile: str | None = None
    pid: int | None = None
