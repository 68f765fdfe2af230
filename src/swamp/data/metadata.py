"""metadata.yaml of one data version: one document, one schema."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class Owner(BaseModel):
    # validated as a field of DataMetadata; its own validator only if used alone
    model_config = ConfigDict(extra="forbid", defer_build=True)

    definitionId: str
    definitionName: str
    modelType: str
    methodName: str | None = None
    outputId: str | None = None
    workflowRunId: str | None = None
    workflowName: str | None = None
    stepName: str | None = None


class DataMetadata(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    name: str
    version: int
    specName: str
    kind: Literal["resource", "file"]
    contentType: str
    lifetime: str
    garbageCollection: int | str | None = None
    streaming: bool = False
    tags: dict[str, str] = Field(default_factory=dict)
    owner: Owner
    createdAt: str
    size: int
    sha256: str
