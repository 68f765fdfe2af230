"""A check's Problem (util/problems.py): a place and a message, read as the
line ``<place>: <message>``, compared and hashed by value, never changed
after it is made."""

from __future__ import annotations

import pytest

from swamp.errors import ExpressionError
from swamp.util.problems import Problem, joined


def test_a_problem_reads_as_its_place_then_its_message():
    p = Problem("jobs[0].steps[1].task.inputs.a: b", "model 'm' takes no input 'a: b'")
    assert str(p) == "jobs[0].steps[1].task.inputs.a: b: model 'm' takes no input 'a: b'"
    assert p.to_json() == {"path": "jobs[0].steps[1].task.inputs.a: b", "message": "model 'm' takes no input 'a: b'"}
    assert str(Problem("", "malformed YAML in x.yaml:1:1: oops")) == "malformed YAML in x.yaml:1:1: oops"
    assert joined([Problem("a", "x"), Problem("b", "y")]) == "a: x; b: y"


def test_problems_are_values():
    assert Problem("a", "x") == Problem("a", "x") and len({Problem("a", "x"), Problem("a", "x")}) == 1
    with pytest.raises(AttributeError):
        Problem("a", "x").path = "b"


def test_an_expression_error_is_placed_at_its_field():
    e = ExpressionError("Syntax error", expression="1 +", field="globalArguments.run: x", line=1, column=4)
    assert e.problem() == Problem("globalArguments.run: x", "${{ 1 + }}: 1:4: Syntax error")
    assert str(e.problem()) == e.message
    whole = ExpressionError("Syntax error", source="a.yaml", field="f")
    assert whole.problem() == Problem("", whole.message)  # a file and a field: reported as the error says it
