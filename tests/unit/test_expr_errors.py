"""Errors name the file, the field, the expression and, when the engine
knows it, the position in the expression."""

import pytest

from swamp.data.provider import NAMESPACE as DATA
from swamp.errors import ExpressionError, NotFoundError, SwampError
from swamp.expr import ExprContext, evaluate, register_namespace, render, validate
from swamp.vault.expressions import NAMESPACE as VAULT

register_namespace(DATA)
register_namespace(VAULT)


class FailingData:
    def latest(self, model, name):
        raise NotFoundError(f"model {model!r} has no data {name!r}", hint="run the method first")

    def find_by_tag(self, key, value):
        raise RuntimeError("catalog exploded")


def fail(value, ctx=None, **kw):
    with pytest.raises(ExpressionError) as info:
        render(value, ctx or ExprContext({"inputs": {"a": 1}}), source="workflows/deploy.yaml", **kw)
    return info.value


def test_is_a_swamp_error():
    assert issubclass(ExpressionError, SwampError)
    assert ExpressionError("x").code == "expression"


def test_syntax_error_has_position_and_caret():
    e = fail({"steps": [{"run": "${{ inputs.a + }}"}]})
    assert e.source == "workflows/deploy.yaml"
    assert e.field == "steps[0].run"
    assert e.expression == "inputs.a +"
    assert (e.line, e.column) == (1, 11)
    assert "Syntax error" in e.message
    assert e.message.startswith("workflows/deploy.yaml: steps[0].run: ${{ inputs.a + }}: 1:11: ")
    assert e.message.endswith(" | inputs.a +\n | ..........^")


def test_field_prefix_is_joined_with_the_path():
    e = fail({"x": "${{ 1 + }}"}, field="jobs[0]")
    assert e.field == "jobs[0].x"


def test_undeclared_variable():
    e = fail("${{ nosuch.field }}")
    assert "undeclared reference to 'nosuch.field'" in e.message
    assert (e.line, e.column) == (1, 7)
    assert "inputs" in e.hint


def test_missing_key_names_expression_and_field():
    e = fail({"args": {"url": "http://${{ inputs.nope }}"}})
    assert e.field == "args.url"
    assert e.expression == "inputs.nope"
    assert '"nope"' in e.detail
    assert "workflows/deploy.yaml: args.url: ${{ inputs.nope }}" in e.message


def test_hyphenated_name_without_brackets_gets_a_hint():
    # (model.my-model.x works as upstream reads it: issue 14 item 14)
    e = fail("${{ inputs.my-input.x }}", ExprContext({"inputs": {"my-input": {"x": 1}}}))
    assert e.hint == 'a name with hyphens needs brackets: inputs["my-input"]'


def test_root_not_given_in_this_context():
    e = fail("${{ steps.build }}")
    assert "'steps' is not available here" in e.message


def test_error_inside_provider_keeps_message_hint_and_cause():
    ctx = ExprContext(providers={"data": FailingData()})
    e = fail({"v": "${{ data.latest('vpc', 'main').attributes.id }}"}, ctx)
    assert e.detail == "model 'vpc' has no data 'main'"
    assert e.hint == "run the method first"
    assert isinstance(e.__cause__, NotFoundError)
    assert e.field == "v"

    e = fail("${{ data.findByTag('a', 'b') }}", ctx)
    assert e.detail == "catalog exploded"
    assert isinstance(e.__cause__, RuntimeError)


def test_provider_error_swallowed_by_cel_logic_is_not_raised():
    ctx = ExprContext(providers={"data": FailingData()})
    assert render("${{ data.findByTag('a', 'b').size() > 0 || true }}", ctx) is True


def test_data_functions_without_a_provider():
    e = fail("${{ data.latest('a', 'b') }}")
    assert "data.latest() is not available here" in e.message


def test_runtime_errors():
    assert "divide by zero" in fail("${{ 1 / 0 }}").detail
    assert "overflow" in fail("${{ 9223372036854775807 + 1 }}").detail


def test_optional_result_must_be_unwrapped():
    e = fail("${{ inputs.?a }}")
    assert "optional" in e.detail and ".orValue" in e.hint
    # An optional hidden in a dyn value is caught too (the engine would crash).
    e = fail("${{ {'a': 1, 'b': inputs.?zz} }}")
    assert "optional" in e.detail


def test_template_syntax_error_points_into_the_field_string():
    e = fail({"x": "abc ${{ 'oops }}"})
    assert e.field == "x"
    assert (e.line, e.column) == (1, 9)
    assert "unterminated string" in e.message
    assert e.message.endswith(" | abc ${{ 'oops }}\n | ........^")


def test_evaluate_names_source_and_field():
    with pytest.raises(ExpressionError) as info:
        evaluate("inputs.b", ExprContext({"inputs": {}}), source="models/x.yaml", field="condition")
    assert info.value.message.startswith("models/x.yaml: condition: ${{ inputs.b }}: ")


def test_validate_collects_every_error_without_evaluating():
    errors = validate({"a": "${{ 1 + }}", "b": ["${{ unknown }}"], "c": "${{ inputs.x.y }}",
                       "d": "${{ data.latest('m', 'n') }}", "e": "${{ oops"}, source="w.yaml")
    assert [e.field for e in errors] == ["a", "b[0]", "e"]
    assert all(e.source == "w.yaml" for e in errors)
    assert validate("${{ inputs.x }} and ${{ self.y }}") == []


def test_validate_catches_wrong_function_arguments():
    (e,) = validate("${{ data.latest('m') }}")
    assert e.hint == "usage: data.latest(model, name[, varyValues])"
    (e,) = validate("${{ vault.get('v', 1) }}")
    assert e.hint == "usage: vault.get(vault, key)"
