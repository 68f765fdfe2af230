"""Field types shared by the pydantic schemas (imported only by modules that
already import pydantic)."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator

from swamp.util.names import NAME_MAX, NAME_RE, is_workflow_name


def _name(v: str) -> str:
    if not NAME_RE.match(v) or len(v) > NAME_MAX:
        raise ValueError(f"must match {NAME_RE.pattern} and have at most {NAME_MAX} characters")
    return v


#: A name that becomes a path segment: a model's or a workflow's.
Name = Annotated[str, AfterValidator(_name)]


def _workflow_name(v: str) -> str:
    if not is_workflow_name(v):
        raise ValueError(f"must match {NAME_RE.pattern}, or be scoped as @scope/name with both parts so, "
                         f"each at most {NAME_MAX} characters")
    return v


#: A workflow's name: a Name, or scoped to a collective ("@acme/child"; its
#: file is workflows/@acme/workflow-child.yaml)
WorkflowName = Annotated[str, AfterValidator(_workflow_name)]
