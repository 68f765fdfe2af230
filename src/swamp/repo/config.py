"""`.swamp.yaml`: the repository marker and its settings."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class DatastoreConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["filesystem", "s3", "gcs"]
    path: str | None = None  # filesystem
    bucket: str | None = None  # s3, gcs
    prefix: str = ""
    namespace: str = "default"
    endpointUrl: str | None = None
    region: str | None = None
    hydration: Literal["full", "lazy"] = "full"
    #: seconds an object store may take to connect, and to start answering a
    #: request (docs/sync.md "Timeouts"); None: the default, 5
    networkTimeout: float | None = Field(default=None, gt=0, le=600, strict=True)


class RepoConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    swampVersion: str
    initializedAt: str
    repoId: str
    datastore: DatastoreConfig | None = None
    defaultVault: str | None = None
    autoGc: bool = False
    logLevel: str | None = None
    #: definitions, workflows, vault configs and the extension lockfile live
    #: in the shared datastore's config tier (``swamp datastore config migrate``)
    managedConfig: bool | None = None
