"""The two readings swamp gives CEL text the way upstream's users write it:
``model.my-model`` without brackets, and null-safe ``.?`` chains."""

from __future__ import annotations

import pytest

from swamp.expr import ExprContext, evaluate

CTX = ExprContext({"model": {"my-model": {"x": 1}, "plain": {"x": 2}},
                   "inputs": {"none": None, "rec": {"attributes": {"stdout": "out"}}, "empty": {}}})


@pytest.mark.parametrize("text, value", [
    ("model.my-model.x", 1),
    ('model["my-model"].x + model.plain.x', 3),
    ("model.my-model.x - model.plain.x", -1),
    ("'model.my-model.x'", "model.my-model.x"),  # a string literal is left alone
    ("inputs.none.?attributes.?stdout.orValue('fallback')", "fallback"),
    ("inputs.rec.?attributes.?stdout.orValue('fallback')", "out"),
    ("inputs.rec.?attributes.?nope.orValue('fallback')", "fallback"),
    ("inputs.empty.?attributes.orValue('fallback')", "fallback"),
    ("inputs.?missing.?x.orValue(0) + inputs.none.?y.orValue(1)", 1),
    ("[inputs.none.?a.orValue(5)].size()", 1),
    ("'x.?y' + inputs.rec.?attributes.?stdout.orValue('')", "x.?yout"),
])
def test_upstream_readings(text, value):
    assert evaluate(text, CTX) == value
