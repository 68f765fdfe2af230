"""The schema of a definition document (``models/{type}/{name}.yaml``).
Below both the file finder (definition_files.py), which falls back on it to
explain a file it cannot read on the fast path, and definitions.py."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from swamp.errors import ValidationError
from swamp.util.ids import new_id
from swamp.util.names import check_type_name
from swamp.util.schema_types import Name


# MethodConfig and DataOverride are validated as fields of Definition, whose
# schema holds theirs: their own validators are built only if used alone.
class MethodConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    arguments: dict[str, Any] = Field(default_factory=dict)


class DataOverride(BaseModel):
    """A definition's override of one of its type's data specs."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    lifetime: str | None = None
    garbageCollection: int | str | None = None


class Definition(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: str
    typeVersion: str | None = None
    id: str = Field(default_factory=new_id)
    name: Name
    version: int = 1
    description: str | None = None
    tags: dict[str, str] = Field(default_factory=dict)
    globalArguments: dict[str, Any] = Field(default_factory=dict)
    methods: dict[str, MethodConfig] = Field(default_factory=dict)
    inputs: dict[str, Any] | None = None
    #: per spec name: lifetime and garbageCollection instead of the type's
    resources: dict[str, DataOverride] | None = None
    files: dict[str, DataOverride] | None = None
    #: the reports that run after each of its method runs (docs/reports.md)
    reports: list[str] | None = None

    @field_validator("type")
    @classmethod
    def _type(cls, v: str) -> str:
        try:
            check_type_name(v)
        except ValidationError as e:
            raise ValueError(e.message) from None
        return v
