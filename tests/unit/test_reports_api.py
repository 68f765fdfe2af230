"""The authoring API of report types and pre-flight checks: what a
mistake in an extension says when it loads, and how a run's reports are
chosen."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from swamp import CheckFailed, ModelType, Report, ReportType
from swamp.errors import NotFoundError, ValidationError
from swamp.reports.api import normalise
from swamp.reports.run import Selection, choose


class _Registry:
    def __init__(self, *types):
        self.types = {t.name: t for t in types}

    def get(self, name):
        if name not in self.types:
            raise NotFoundError(f"unknown report {name!r}")
        return self.types[name]


def _report(name, scope="workflow"):
    return ReportType(name, scope=scope, render=lambda ctx: "")


def test_report_declaration_mistakes_are_named():
    with pytest.raises(ValidationError, match="invalid report name"):
        ReportType("Bad Name", scope="method")
    with pytest.raises(ValidationError, match="scope 'job'"):
        ReportType("ok", scope="job")
    r = ReportType("ok", scope="method")
    with pytest.raises(ValidationError, match="must take one argument"):
        r.render(lambda a, b: None)


def test_what_a_render_may_return():
    assert normalise("r", "# hi\n") == Report(markdown="# hi\n", data={})
    made = normalise("r", {"n": 1})
    assert made.data == {"n": 1} and '"n": 1' in made.markdown
    with pytest.raises(TypeError, match="not int"):
        normalise("r", 42)


def test_choosing_a_runs_reports():
    reg = _Registry(_report("a"), _report("b"), _report("m", "method"))
    names = lambda chosen: [r.name for r in chosen]  # noqa: E731
    assert names(choose(reg, "workflow", ["a"], Selection(requested=("b", "a")), "workflow w")) == ["a", "b"]
    assert names(choose(reg, "workflow", ["a", "b"], Selection(skip=("a",)), "workflow w")) == ["b"]
    assert choose(reg, "workflow", ["a"], Selection(requested=("b",), skip_all=True), "workflow w") == []
    with pytest.raises(ValidationError, match="runs after method runs"):
        choose(reg, "workflow", [], Selection(requested=("m",)), "workflow w")
    with pytest.raises(ValidationError, match=r"'m' \(workflow w\)"):
        choose(reg, "workflow", ["m"], None, "workflow w")
    with pytest.raises(NotFoundError):
        choose(reg, "workflow", [], Selection(skip=("zzz",)), "workflow w")


class _Args(BaseModel):
    x: int = 0


def test_check_declarations():
    t = ModelType("test/checked", version="2026.11.30.1", global_arguments=_Args)

    @t.method()
    def create(args, ctx):
        pass

    @t.method()
    def get(args, ctx):
        pass

    @t.method()
    def poke(args, ctx):
        pass

    @t.check(description="always")
    def first(args, ctx):
        pass

    @t.check(methods=["get"])
    def only_get(args, ctx):
        """Reads too, when asked."""

    from swamp.models.checks import describe, for_method

    assert [c.name for c in for_method(t, "create")] == ["first"]
    assert [c.name for c in for_method(t, "poke")] == ["first"]  # an action mutates
    assert [c.name for c in for_method(t, "get")] == ["only_get"]
    assert describe(t) == {"first": {"description": "always", "methods": ["create", "poke"]},
                           "only_get": {"description": "Reads too, when asked.", "methods": ["get"]}}
    with pytest.raises(ValidationError, match="declared twice"):
        t.check(name="first")(lambda a, c: None)
    with pytest.raises(ValidationError, match="two arguments"):
        t.check(name="lonely")(lambda a: None)
    with pytest.raises(ValidationError, match="check name"):
        t.check(name="Bad-Name")(lambda a, c: None)
    assert CheckFailed("x").code == "check_failed"
