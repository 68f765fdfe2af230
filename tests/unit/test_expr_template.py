"""The `${{ }}` scanner: where expressions start and end, without CEL."""

import pytest

from swamp.expr.template import (
    Expr,
    TemplateSyntaxError,
    has_expressions,
    iter_templates,
    parse,
    to_text,
)


def texts(template):
    return [s.text if isinstance(s, Expr) else s for s in parse(template)]


def test_literal_only():
    assert parse("plain") == ("plain",)


def test_whole_and_embedded():
    assert texts("${{ inputs.x }}") == ["inputs.x"]
    assert texts(" ${{ inputs.x }}") == [" ", "inputs.x"]
    assert texts("a ${{ x }} b ${{y}}") == ["a ", "x", " b ", "y"]


@pytest.mark.parametrize("body, expected", [
    ("'}}'", "'}}'"),
    ('"a}}b" + x', '"a}}b" + x'),
    ("'''x}}'''", "'''x}}'''"),
    ('"""x}}"""', '"""x}}"""'),
    (r"'it\'s }}'", r"'it\'s }}'"),
    (r"r'\'", r"r'\'"),
    ("{'a': {'b': 1}}", "{'a': {'b': 1}}"),
    ("{'a': 1}", "{'a': 1}"),
    ("x // a comment with }} and '\n + 1", "x // a comment with }} and '\n + 1"),
])
def test_close_is_quote_and_brace_aware(body, expected):
    segments = parse("${{ " + body + " }}")
    assert len(segments) == 1
    assert segments[0].text == expected


def test_map_literal_closing_right_before_close():
    assert texts("${{ {'a': 1}}}") == ["{'a': 1}"]


def test_positions():
    (lit, e) = parse("ab${{ x }}")
    assert (e.start, e.end) == (2, 10)


@pytest.mark.parametrize("template, message", [
    ("${{ x", "never closed"),
    ("${{ 'x }}", "unterminated string"),
    ("${{ }}", "empty expression"),
    ("${{ a } }}", "unbalanced"),
])
def test_malformed(template, message):
    with pytest.raises(TemplateSyntaxError, match=message) as info:
        parse(template)
    assert info.value.template == template


def test_has_expressions_and_templates_walk_nested_values():
    value = {"a": ["x", {"b": "${{ one }} and ${{ two }}"}], "c": 3, "d": "none"}
    assert has_expressions(value)
    assert not has_expressions({"a": ["x"], "b": 1})
    assert list(iter_templates(value)) == [("a[1].b", "${{ one }} and ${{ two }}")]


@pytest.mark.parametrize("value, text", [
    ("s", "s"), (True, "true"), (False, "false"), (None, "null"), (3, "3"), (1.5, "1.5"),
    (["a", "b"], '["a","b"]'), ({"k": [1, True]}, '{"k":[1,true]}'), ("é", "é"),
])
def test_to_text_prints_like_json_with_strings_bare(value, text):
    assert to_text(value) == text
