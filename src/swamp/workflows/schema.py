"""The workflow document (``workflows/workflow-<name>.yaml``): jobs of steps,
each with a task, joined by ``dependsOn`` conditions. One pydantic schema;
unknown keys are refused with a did-you-mean hint (swamp.util.documents)."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from swamp.util.schema_types import WorkflowName
from swamp.workflows import retries

SEVERITIES = ("low", "medium", "high")
IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


#: the longest approval or signal wait, in seconds (100 years)
TIMEOUT_MAX = 100 * 365 * 24 * 3600

class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Condition(_Strict):
    """``{type: always|succeeded|failed|completed|skipped}``, or
    ``{type: and|or, conditions: [...]}`` (two or more), or
    ``{type: not, condition: {...}}``. ``completed`` is succeeded or failed."""

    type: Literal["always", "succeeded", "failed", "completed", "skipped", "and", "or", "not"]
    conditions: list[Condition] | None = None
    condition: Condition | None = None

    @model_validator(mode="before")
    @classmethod
    def _no_bare_string(cls, v: Any) -> Any:
        if isinstance(v, str):
            raise ValueError(f"a condition is a map: write {{type: {v}}}")
        return v

    @model_validator(mode="after")
    def _shape(self) -> "Condition":
        if self.type in ("and", "or"):
            if not self.conditions or len(self.conditions) < 2:
                raise ValueError(f"'{self.type}' needs 'conditions' with at least two entries")
            if self.condition is not None:
                raise ValueError(f"'{self.type}' takes 'conditions', not 'condition'")
        elif self.type == "not":
            if self.condition is None:
                raise ValueError("'not' needs one 'condition'")
            if self.conditions is not None:
                raise ValueError("'not' takes one 'condition', not 'conditions'")
        elif self.conditions is not None or self.condition is not None:
            raise ValueError(f"'{self.type}' takes no nested conditions")
        return self


SUCCEEDED = Condition(type="succeeded")


def _refuse_bare_dependency(v: Any, key: str) -> Any:
    if isinstance(v, str):
        raise ValueError(f"a bare name is not allowed here: write {{{key}: {v}, condition: {{type: succeeded}}}}")
    return v


class JobDependency(_Strict):
    job: str
    condition: Condition = SUCCEEDED

    @model_validator(mode="before")
    @classmethod
    def _bare(cls, v: Any) -> Any:
        return _refuse_bare_dependency(v, "job")


class StepDependency(_Strict):
    step: str
    condition: Condition = SUCCEEDED

    @model_validator(mode="before")
    @classmethod
    def _bare(cls, v: Any) -> Any:
        return _refuse_bare_dependency(v, "step")


# Which keys each task type requires and allows. One flat model (rather
# than a tagged union) keeps error paths plain (`task.methodName`) and lets
# the unknown-key hint see every task key.
TASK_KEYS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    # a model by name or id, or a type run directly (modelType + modelName,
    # globalArgs for its automatic definition): checked in Task._keys
    "model_method": (frozenset({"methodName"}),
                     frozenset({"modelIdOrName", "modelType", "modelName", "globalArgs", "inputs"})),
    "workflow": (frozenset({"workflowIdOrName"}), frozenset({"inputs"})),
    "manual_approval": (frozenset({"prompt"}), frozenset({"timeout"})),
    "assert": (frozenset({"expr", "message"}), frozenset({"severity"})),
    # a message from outside (docs/signals.md): checked in swamp.workflows.signals
    "wait_for_signal": (frozenset(), frozenset({"prompt", "schema", "timeout", "onTimeout", "default"})),
}


class Task(_Strict):
    """``model_method {modelIdOrName, methodName, inputs?}`` (or
    ``{modelType, modelName, globalArgs?, methodName, inputs?}``: the type
    run directly, as ``swamp model method run TYPE METHOD NAME``),
    ``workflow {workflowIdOrName, inputs?}``, ``manual_approval {prompt,
    timeout? (seconds)}``, ``assert {expr, message, severity? (high)}``,
    ``wait_for_signal {prompt?, schema?, timeout? (seconds), onTimeout?
    (fail | continue), default?}``."""

    type: Literal["model_method", "workflow", "manual_approval", "assert", "wait_for_signal"]
    modelIdOrName: str | None = None
    modelType: str | None = None
    modelName: str | None = None
    globalArgs: dict[str, Any] | None = None
    methodName: str | None = None
    workflowIdOrName: str | None = None
    inputs: dict[str, Any] | str | None = None
    prompt: str | None = None
    #: seconds; at most 100 years, so its deadline is a date (one far past that is a typo)
    timeout: int | None = Field(default=None, ge=1, le=TIMEOUT_MAX)
    expr: str | bool | None = None
    message: str | None = None
    severity: Literal["low", "medium", "high"] | None = None
    #: wait_for_signal: the JSON schema a message must match, what a timeout does, the message it gives
    signalSchema: dict[str, Any] | None = Field(default=None, alias="schema")
    onTimeout: Literal["fail", "continue"] | None = None
    default: Any = None

    @model_validator(mode="before")
    @classmethod
    def _no_shell(cls, v: Any) -> Any:
        if isinstance(v, dict) and v.get("type") == "shell":
            raise ValueError("'shell' tasks are gone: define a command/shell model and call it with "
                             "{type: model_method, modelIdOrName: <model>, methodName: execute}")
        return v

    @model_validator(mode="after")
    def _keys(self) -> "Task":
        required, optional = TASK_KEYS[self.type]
        given = {"schema" if f == "signalSchema" else f for f in self.model_fields_set} - {"type"}
        missing = sorted(required - given)
        if missing:
            raise ValueError(f"a {self.type} task needs {', '.join(missing)}")
        if self.type == "model_method":
            direct = {"modelType", "modelName"} & given
            if "modelIdOrName" in given and (direct or "globalArgs" in given):
                raise ValueError("a model_method task names its model with modelIdOrName, or runs a type "
                                 "with modelType and modelName, not both")
            if "modelIdOrName" not in given and direct != {"modelType", "modelName"}:
                raise ValueError("a model_method task needs modelIdOrName (or modelType and modelName)")
        foreign = sorted(given - required - optional)
        if foreign:
            raise ValueError(f"{', '.join(foreign)} {'does' if len(foreign) == 1 else 'do'} not belong in a "
                             f"{self.type} task (it takes {', '.join(sorted(required | optional))})")
        if self.type == "wait_for_signal":
            if ("onTimeout" in given or "default" in given) and self.timeout is None:
                raise ValueError("onTimeout and default need a timeout (seconds)")
            if self.onTimeout == "continue" and "default" not in given:
                raise ValueError("onTimeout: continue needs a default: the message the step continues with")
            if "default" in given and self.onTimeout != "continue":
                raise ValueError("a default is the message of onTimeout: continue; add it, or drop the default")
        return self

    @property
    def assert_severity(self) -> str:
        return self.severity or "high"


class ForEach(_Strict):
    item: str
    in_: Any = Field(alias="in")

    @field_validator("item")
    @classmethod
    def _ident(cls, v: str) -> str:
        if not IDENT_RE.match(v):
            raise ValueError("must be an identifier (letters, digits, '_'), reached as self.<item>")
        return v


class DataOutputOverride(_Strict):
    """How a step's writes of one spec are kept: ``lifetime``,
    ``garbageCollection``, extra ``tags``, and ``vary``: input names whose
    values are appended to the data name (``result`` -> ``result-prod``), so
    each value has its own version chain."""

    specName: str
    lifetime: str | None = None
    garbageCollection: int | str | None = None
    tags: dict[str, str] = Field(default_factory=dict)
    vary: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _valid(self) -> "DataOutputOverride":
        from swamp.errors import SwampError
        from swamp.models.specs import check_gc_policy, check_lifetime

        try:
            if self.lifetime is not None:
                check_lifetime(self.lifetime)
            check_gc_policy(self.garbageCollection)
        except SwampError as e:
            raise ValueError(e.message) from None
        return self


class Placement(_Strict):
    """Where a model_method step runs (docs/workers.md): on a worker carrying
    every label, or the worker named ``target``; ``queueTimeout`` seconds to
    wait for one to be connected."""

    labels: dict[str, str] = Field(default_factory=dict)
    target: str | None = None
    queueTimeout: float | None = Field(default=None, gt=0)


class _Attempts(_Strict):
    """``retries``, ``retryDelay``, ``retryBackoff``, ``timeout`` (workflows/retries.py)."""

    retries: int | None = None
    retryDelay: float | None = None
    retryBackoff: float | None = None
    #: seconds an attempt of a model_method step may run (an approval's or a signal's wait is its task's timeout)
    timeout: float | None = None

    @field_validator("retries", mode="before")
    @classmethod
    def _retries(cls, v: Any) -> Any:
        return retries.count(v)

    @field_validator("retryDelay", mode="before")
    @classmethod
    def _delay(cls, v: Any) -> Any:
        return retries.seconds(v, least=0, most=retries.MAX_DELAY, zero=True)

    @field_validator("retryBackoff", mode="before")
    @classmethod
    def _backoff(cls, v: Any) -> Any:
        return retries.backoff(v)

    @field_validator("timeout", mode="before")
    @classmethod
    def _timeout(cls, v: Any) -> Any:
        return retries.seconds(v, least=0, most=TIMEOUT_MAX, zero=False)


class StepDefaults(_Attempts):
    """``stepDefaults``: what every model_method step of the workflow gets
    unless it sets its own."""


class Step(_Attempts):
    name: str = Field(min_length=1)
    description: str | None = None
    dependsOn: list[StepDependency] = Field(default_factory=list)
    weight: float = 0
    concurrency: int | None = Field(default=None, ge=0)
    forEach: ForEach | None = None
    guard: str | bool | None = None
    allowFailure: bool = False
    dataOutputOverrides: list[DataOutputOverride] = Field(default_factory=list)
    placement: Placement | None = None  # run on a worker (workers/)
    task: Task

    @model_validator(mode="after")
    def _attempts_of_methods(self) -> "Step":
        if self.task.type != "model_method" and retries.given(self):
            keys = ", ".join(k for k in retries.KEYS if getattr(self, k) is not None)
            hint = (" (the wait of an approval or a signal is its task's timeout)"
                    if self.timeout is not None and self.task.type in ("manual_approval", "wait_for_signal") else "")
            raise ValueError(f"{keys}: retries and timeouts are for model_method steps, "
                             f"not a {self.task.type} step{hint}")
        return self


class Job(_Strict):
    name: str = Field(min_length=1)
    description: str | None = None
    dependsOn: list[JobDependency] = Field(default_factory=list)
    weight: float = 0
    concurrency: int | None = Field(default=None, ge=0)
    steps: list[Step] = Field(min_length=1)


class Trigger(_Strict):
    """``trigger: {schedule: CRON, inputs: {...}}``: ``swamp serve`` runs the
    workflow at each tick of CRON (UTC), with these inputs (app/schedules.py)."""

    schedule: str | None = None
    inputs: dict[str, Any] = Field(default_factory=dict)

    @field_validator("schedule")
    @classmethod
    def _cron(cls, v: str | None) -> str | None:
        if v is not None:
            from swamp.errors import SwampError
            from swamp.util.cron import Cron

            try:
                Cron.parse(v)
            except SwampError as e:
                raise ValueError(e.message) from None
        return v


class Workflow(_Strict):
    id: str | None = None
    name: WorkflowName
    description: str | None = None
    version: int = Field(default=1, ge=1)
    tags: dict[str, str] = Field(default_factory=dict)
    inputs: dict[str, Any] | None = None
    concurrency: int | None = Field(default=None, ge=0)
    #: retries and timeout of every model_method step that sets none of its own (workflows/retries.py)
    stepDefaults: StepDefaults | None = None
    #: the reports that run after each run of it (docs/reports.md)
    reports: list[str] | None = None
    #: run by swamp serve on a schedule (docs/serve.md#schedules)
    trigger: Trigger | None = None
    jobs: list[Job] = Field(min_length=1)

    @field_validator("inputs")
    @classmethod
    def _inputs(cls, v: dict | None) -> dict | None:
        if v is None:
            return v
        props = v.get("properties", {})
        if not isinstance(props, dict) or not all(isinstance(p, dict) for p in props.values()):
            raise ValueError("'properties' must map each input name to a schema such as {type: string}")
        required = v.get("required", [])
        if not isinstance(required, list) or any(r not in props for r in required):
            missing = [r for r in required if r not in props] if isinstance(required, list) else required
            raise ValueError(f"'required' names inputs that 'properties' does not declare: {missing}")
        return v


def workflow_id(wf: Workflow) -> str:
    """The id run records are filed under. A hand-written file without one
    gets an id derived from its name, the same on every load."""
    if wf.id:
        return wf.id
    import uuid

    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"swamp:workflow:{wf.name}"))
