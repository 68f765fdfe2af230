"""Review of util/yaml_light (swamp's plain YAML without ruamel.yaml): for
anything it reads, the values and types ruamel.yaml's safe loader reads;
for anything it writes, ruamel's safe dumper's bytes. Attacked with YAML's
traps (booleans and nulls in every spelling, numbers in every base, dates,
special floats), line-break and space characters, quoting, indentation,
length and depth."""

from __future__ import annotations


import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from swamp.errors import ValidationError
from swamp.util import yaml_light, yamlio
from tests.yaml_reference import ruamel_dump, ruamel_load, typed


TRAPS = [
    "yes", "no", "on", "off", "Yes", "NO", "On", "OFF", "y", "N", "true", "True", "TRUE", "tRue", "false", "FALSE",
    "~", "null", "Null", "NULL", "nUll", "", "1e3", "1E3", "1e-3", "1e+3", "-1e3", "0x10", "0X10", "0o7", "0O7", "0b11",
    "-0b11", "+0x1", "07", "08", "012", "0012", "1_000", "1__0", "_1", "+1", "-0", "+0", "-00", "0", "00", ".5", "5.",
    "1.", "-.5", ".inf", "-.inf", "+.inf", ".Inf", ".INF", ".nan", ".NaN", ".NAN", "inf", "nan", "NaN",
    "2026-12-01", "2026-1-1", "2026-12-01T01:02:03Z", "2026-12-01t01:02:03z", "2026-12-01 01:02:03",
    "2026-12-01T01:02:03+01:00", "2026-12-01T01:02:03.123456789Z", "12:30:00", "1:20", "190:20:30",
    "a:b", "a: b", "a:", "a :b", "http://x/y", "a#b", "a #b", "#b", "a  b", "a ", " a", "a\tb", "a\x85b",
    "a\u2028b", "a\u2029b", "\ufeffa", "a\x00b", "a\x7fb", "é", "\U0001f600", "'", "''", "'a'", "'a''b'", "\"a\"",
    "-", "- a", "-a", "?", "? a", ":", "=", "<<", "&a", "*a", "!a", "!!str a", "%a", "@a", "`a", "|", ">", "[a]",
    "{a: 1}", "{}", "[]", "{ }", "a,b", "a(b)", "$x", "1.2.3", "1.2", "10.0.0.1", "0.0.0", "1..2", "e0cd1e6f-badf-42de-9e6f-6d21d08fcf9d",
    "E0CD1E6F-BADF-42DE-9E6F-6D21D08FCF9D", "12345678", "1234567890123456789", "123456789012345678",
    "-123456789012345678", "deadbeef", "0e5", "0e", "0b", "0a", "1e5a", "x" * 200,
]


@pytest.mark.parametrize("value", TRAPS)
def test_a_trap_is_read_as_ruamel_reads_it_or_left_to_ruamel(value):
    for text in (f"k: {value}\n", f"k:\n- {value}\n", f"{value}: 1\n", f"k: '{value}'\n", f"k:\n  - {value}\n",
                 f"k:\n- a: {value}\n  b: 1\n", f"k: {value}\r\n", f"k: {value}\n# c\n", f"k: {value} # c\n",
                 f"\ufeffk: {value}\n", f"k:\t{value}\n", f"k: {value}\x85z: 1\n", f"k: {value}\u2028z: 1\n"):
        ok, got = yaml_light.load(text)
        if not ok:
            continue
        assert typed(got) == typed(ruamel_load(text)), text


@pytest.mark.parametrize("value", TRAPS)
def test_a_trap_is_written_as_ruamel_writes_it(value):
    for doc in ({"k": value}, {"k": [value, {"a": value}]}, {"a": {"b": {"c": value}}}):
        text = yaml_light.dump(doc)
        if text is None:
            continue
        assert text == ruamel_dump(doc), doc
        ok, back = yaml_light.load(text)
        if ok:  # and what it wrote it reads back as written
            assert typed(back) == typed(doc)


@pytest.mark.parametrize("text", [
    "a: 1\na: 2\n", "a: 1\n  b: 2\n", "a:\n  b: 1\n c: 2\n", "a:\n- 1\n  - 2\n", "a: b\n  c\n", "a: 'b\n  c'\n",
    "a:\n  - b\n  c: 1\n", "- a\n", "a: [\n", "a: {b\n", "a: 'x\n", "\tb: 1\n", "a:\n\t- 1\n", "a: b: c\n",
    "a: @b\n", "a: `b\n", "a: *x\n", "a: &x\n  b: *y\n", "---\na: 1\n---\nb: 2\n",
])
def test_yamlio_refuses_and_reads_as_ruamel_does(text):
    """What yamlio.loads gives (fast path first) is what ruamel alone gives:
    the same document, or a ValidationError where ruamel raises."""
    try:
        want = ("ok", typed(ruamel_load(text)))
    except Exception:
        want = ("error",)
    try:
        got = ("ok", typed(yamlio.loads(text)))
    except ValidationError:
        got = ("error",)
    assert got == want


@pytest.mark.parametrize("text", ["a: 2026-13-45\n", "a: 2026-02-30T01:02:03Z\n", "a: !!int x\n", "a: !!bool x\n",
                                  "a: " + "1" * 5000 + "\n"], ids=lambda t: t[:24])
def test_a_malformed_scalar_is_a_validation_error(text):
    with pytest.raises(ValidationError):
        yamlio.loads(text)


def test_long_keys_values_and_deep_nesting_are_written_as_ruamel_writes_them():
    docs = [{"k" * n: 1} for n in (79, 80, 99, 100, 101, 128, 129)]
    docs += [{"a": ["x", {"k" * n: "v" * n}]} for n in (81, 100, 200)]
    docs += [{"a": "v" * 5000, "b": "1.2." + "3" * 300, "c": "0" + "a" * 300, "d": 10**200, "e": -(10**40)}]
    deep: object = "x"
    for _ in range(50):
        deep = {"k": [deep, {"z": 1}, {}], "e": {}}
    docs.append(deep)  # indented far past ruamel's line width
    for doc in docs:
        text = yaml_light.dump(doc)
        if text is not None:
            assert text == ruamel_dump(doc)
            ok, back = yaml_light.load(text)
            assert not ok or typed(back) == typed(doc)


_chars = st.characters(codec="utf-8") | st.sampled_from(list("aeb019_-./:#' \"\t\r\x85\u2028\ufeff@=,()$+~!&*|>%?[]{}"))
_word = st.text(_chars, max_size=10)
_line = st.tuples(st.integers(0, 5), _word, st.sampled_from([": ", ":", "- ", "", ": '", "- '", "- a: "]), _word,
                  st.sampled_from(["", "'", " ", " #x", ":"]))


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_line, min_size=1, max_size=6), st.sampled_from(["", "\n", "\r\n", "\n\n"]))
def test_any_text_it_reads_is_read_as_ruamel_reads_it(lines, tail):
    text = "\n".join(" " * i + a + s + b + e for i, a, s, b, e in lines) + tail
    ok, got = yaml_light.load(text)
    if ok:
        assert typed(got) == typed(ruamel_load(text)), text


def test_a_deep_document_is_read_as_ruamel_reads_it():
    depth = 700
    text = "".join(" " * (2 * i) + "k:\n" for i in range(depth)) + " " * (2 * depth) + "v: 1\n"
    got, want = yamlio.loads(text), ruamel_load(text)
    for _ in range(depth):  # walked down, not recursed: the test's own stack is as deep as the reader's
        assert type(got) is dict and list(got) == list(want) == ["k"]
        got, want = got["k"], want["k"]
    assert got == want == {"v": 1} and type(got["v"]) is int


@pytest.mark.parametrize("shared", [["a"], {"k": "v"}, {}], ids=["list", "dict", "empty dict"])
def test_a_container_shared_by_two_keys_is_written_as_ruamel_writes_it(shared):
    doc = {"p": shared, "q": [shared]} if type(shared) is dict and shared else {"p": shared, "q": shared}
    assert yamlio.dumps(doc) == ruamel_dump(doc)
