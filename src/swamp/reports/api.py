"""The authoring API of report types (``from swamp import ReportType, Report``)::

    costs = ReportType("costs", scope="workflow", description="What the run's steps cost")

    @costs.render
    def render(ctx: ReportContext) -> Report:
        return Report(markdown="# Costs\\n...", data={"total": 3})

A report type has a name (``^[a-z][a-z0-9_-]*$``), a scope (``method``: it
runs after a method run; ``workflow``: after a workflow run) and one render
function taking a ``ReportContext``. The function returns a ``Report``, or
a string (the markdown), or a dict (the JSON; the markdown is then made
from it)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from swamp.errors import ValidationError

SCOPES = ("method", "workflow")
NAME_RE = re.compile(r"^[a-z][a-z0-9_-]*$")
NAME_MAX = 48


@dataclass
class Report:
    """What a report type renders: markdown for people, JSON for programs."""

    markdown: str = ""
    data: dict = field(default_factory=dict)


class ReportType:
    def __init__(self, name: str, *, scope: str, description: str = "",
                 render: Callable[..., Any] | None = None) -> None:
        if not isinstance(name, str) or not NAME_RE.match(name) or len(name) > NAME_MAX:
            raise ValidationError(f"invalid report name {name!r}",
                                  hint=f"a report name matches {NAME_RE.pattern} (at most {NAME_MAX} characters)")
        if scope not in SCOPES:
            raise ValidationError(f"report {name}: scope {scope!r} is not one of {', '.join(SCOPES)}")
        self.name = name
        self.scope = scope
        self.description = description
        self.fn: Callable[..., Any] | None = None
        if render is not None:
            self.render(render)

    def render(self, fn):
        """Decorator: the function that renders the report, ``fn(ctx)``."""
        import inspect

        if not callable(fn):
            raise ValidationError(f"report {self.name}: render is not a function")
        try:
            inspect.signature(fn).bind(None)
        except TypeError:
            raise ValidationError(f"report {self.name}: the render function must take one argument (ctx)",
                                  hint="def render(ctx: ReportContext) -> Report") from None
        except ValueError:
            pass
        self.fn = fn
        if not self.description:
            self.description = (fn.__doc__ or "").strip().splitlines()[0] if fn.__doc__ else ""
        return fn

    def describe(self) -> dict:
        return {"name": self.name, "scope": self.scope, "description": self.description}

    def __repr__(self) -> str:
        return f"ReportType({self.name!r}, scope={self.scope!r})"


def normalise(name: str, value: Any) -> Report:
    """What a render function returned, as a Report (or a TypeError)."""
    if isinstance(value, Report):
        if not isinstance(value.markdown, str) or not isinstance(value.data, dict):
            raise TypeError("Report(markdown=str, data=dict) expected")
        return value
    if isinstance(value, str):
        return Report(markdown=value, data={})
    if isinstance(value, dict):
        shown = json.dumps(value, indent=2, sort_keys=True, default=str)
        return Report(markdown=f"# {name}\n\n```json\n{shown}\n```\n", data=value)
    raise TypeError(f"a report renders a Report, a str or a dict, not {type(value).__name__}")


class ReportContext:
    """What a render function receives.

    - ``scope``: ``method`` or ``workflow``;
    - ``status``: how the run ended (``succeeded``, ``failed``, ``cancelled``);
    - ``run``: the run's record as JSON (a method's output record, or a
      workflow's run record with its jobs and steps);
    - ``data``: what the run wrote, one dict per version: ``model``,
      ``name``, ``version``, ``kind`` (and ``job``, ``step`` in a workflow);
    - ``read(item)``: the content of one of them, as bytes;
    - ``read_json(item)``: the same, parsed."""

    def __init__(self, scope: str, run: dict, data: list[dict], reader: Callable[[dict], bytes]) -> None:
        self.scope = scope
        self.run = run
        self.status = run.get("status")
        self.data = data
        self._reader = reader

    @property
    def model_name(self) -> str | None:
        return self.run.get("modelName")

    @property
    def method_name(self) -> str | None:
        return self.run.get("methodName")

    @property
    def workflow_name(self) -> str | None:
        return self.run.get("workflowName")

    def read(self, item: dict) -> bytes:
        return self._reader(item)

    def read_json(self, item: dict) -> Any:
        return json.loads(self.read(item))
