"""util/yaml_light reads and writes swamp's plain YAML without ruamel.yaml,
and must never differ from ruamel.yaml: whatever it reads is what ruamel's
safe loader reads (same values, same types), whatever it writes is the
text ruamel's safe dumper writes, and anything else it leaves to ruamel.
Hypothesis builds documents, and raw YAML text with tricky scalars, and
compares."""

from __future__ import annotations

import datetime
import glob
import os
import subprocess
import sys

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from swamp.util import yaml_light, yamlio
from tests.yaml_reference import ruamel_dump, ruamel_load

SRC = os.path.join(os.path.dirname(__file__), "..", "..", "src")
MANY = settings(max_examples=600 if os.environ.get("CI") else 300, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])


def same(a, b) -> bool:
    """Equal, and of the same types all the way down (1 is not True, a
    date is not its text)."""
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if type(a) is list:
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


TRICKY = [
    "", " ", "a b", "a  b", "a: b", "a:b", "a #b", "a#b", "#a", "-", "- a", "-a", "?", "? a", ":", "a:", "~", "=",
    "<<", "null", "Null", "NULL", "true", "True", "TRUE", "false", "yes", "Yes", "no", "on", "off", "y", "n",
    "0", "-0", "+1", "1", "-5", "007", "1_000", "0x1f", "0o17", "0b101", "0b12", "1e5", "1E5", "1e-5", "12e",
    "1.5", ".5", "5.", "1.2.3", "2026.11.30.1", ".inf", "-.inf", ".nan", "inf", "nan", "2026-12-01",
    "2026-1-1", "2026-12-01T01:02:03Z", "2026-12-01T01:02:03.456Z", "2026-12-01 01:02:03", "2026-12-01t01:02:03z",
    "12:30", "1:2:3", "e0cd1e6f-badf-42de-9e6f-6d21d08fcf9d", "12345678-1234-4234-8234-123456789012",
    "16340b0328fe81b5", "1634e0328", "123e4567", "0b1010", "0e1", "deadbeef", "/abs/path", "a/b.c_d-e",
    "application/json", "command/shell", "@acme/type", "echo hello", "it's", "'q'", '"d"', "a\tb", "é", "ñandú",
    "a\u2028b", "a\x85b", "x" * 130, "a,b", "a(b)", "$x", "${{ inputs.x }}", "[a]", "{a: 1}", "&a", "*a", "!t",
    "|", ">", "%x", "`x", "a\\b", "a'", "'a", "a' #", "a 'b'", "_x", "__init__", "0.0.0", "1..2", "-1.2.3",
]
scalar_text = st.one_of(
    st.sampled_from(TRICKY),
    st.text(st.sampled_from("aZ09 _-.:/#'\"@&*!|>{}[],?%=~$+()\\é\te"), max_size=8),
    st.text(st.sampled_from("0123456789abcdefe"), min_size=1, max_size=12),
    st.from_regex(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,3})?Z)?", fullmatch=True),
    st.from_regex(r"[0-9]{1,4}(\.[0-9]{1,4}){0,4}", fullmatch=True),
    st.uuids().map(str),
)
keys = st.one_of(st.sampled_from(["id", "name", "modelName", "tags", "owner", "x-y", "a_b", "k1"]), scalar_text)
scalars = st.one_of(scalar_text, st.integers(-10**20, 10**20), st.booleans(), st.none(),
                    st.floats(allow_nan=False) | st.just(1.5))
#: what swamp's own documents hold, mostly in the narrow form
swamp_text = st.one_of(
    st.from_regex(r"[a-z][a-zA-Z0-9_./-]{0,12}", fullmatch=True), st.uuids().map(str),
    st.from_regex(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z", fullmatch=True),
    st.from_regex(r"[0-9]{4}\.[0-9]{1,2}\.[0-9]{1,2}\.[0-9]", fullmatch=True),
    st.text(st.sampled_from("0123456789abcdef"), min_size=8, max_size=64), st.sampled_from(TRICKY),
    # who did it (util/actors.py): "user:NAME@HOST", "token:NAME (user:USER)", and near misses
    st.from_regex(r"[a-z]{1,8}:[a-z0-9._-]{0,40}(@[a-z0-9.-]{0,30})?( \(user:[a-z0-9@.]{0,50}\))?:?",
                  fullmatch=True),
    st.from_regex(r"[A-Za-z_][A-Za-z0-9 _./@():-]{0,90}", fullmatch=True),
)
swamp_keys = st.one_of(st.from_regex(r"[a-zA-Z][a-zA-Z0-9_-]{0,10}", fullmatch=True), st.uuids().map(str))
swamp_scalars = st.one_of(swamp_text, st.integers(-10**6, 10**12), st.booleans(), st.none())


def _documents(k, v):
    return st.recursive(
        st.dictionaries(k, v, max_size=4),
        lambda inner: st.dictionaries(k, st.one_of(v, inner, st.lists(st.one_of(v, inner), max_size=3)), max_size=5),
        max_leaves=14,
    )


docs = st.one_of(_documents(keys, scalars), _documents(swamp_keys, swamp_scalars))


# ------------------------------------------------------------------- writing
@MANY
@given(docs)
@example({"id": "e0cd1e6f-badf-42de-9e6f-6d21d08fcf9d", "startedAt": "2026-12-01T01:28:34.585Z", "durationMs": 36,
          "dataArtifacts": [{"name": "log", "version": 1}], "inputs": [], "tags": {}, "pid": 7})
@example({"o": [{"p": {"q": 1}, "r": [1, 2]}, {}], "l": {"m": {"n": None}}, "e": "", "t": True})
def test_what_it_writes_is_what_ruamel_writes(doc):
    text = yaml_light.dump(doc)
    if text is not None:
        assert text == ruamel_dump(doc)


# ------------------------------------------------------------------- reading
@MANY
@given(docs)
def test_what_it_reads_of_ruamels_text_is_what_ruamel_reads(doc):
    try:
        text = ruamel_dump(doc)
    except Exception:
        return
    ok, got = yaml_light.load(text)
    if ok:
        assert same(got, ruamel_load(text))


def _raw(doc, indent=0) -> list[str]:
    """A document written naively: every scalar as its raw text, unquoted
    (often not what it means, sometimes not YAML at all)."""
    lines = []
    for k, v in doc.items():
        pad = " " * indent
        if isinstance(v, dict):
            lines.append(f"{pad}{k}:")
            lines += _raw(v, indent + 2)
        elif isinstance(v, list):
            lines.append(f"{pad}{k}:")
            lines += [f"{pad}- {x}" for x in v]
        else:
            lines.append(f"{pad}{k}: {v}")
    return lines


raw_docs = st.recursive(
    st.dictionaries(scalar_text, scalar_text, min_size=1, max_size=4),
    lambda inner: st.dictionaries(scalar_text, st.one_of(scalar_text, inner, st.lists(scalar_text, max_size=3)),
                                  min_size=1, max_size=4),
    max_leaves=10,
)


@MANY
@given(raw_docs, st.sampled_from(["", "\n", "\n\n"]))
def test_raw_text_is_read_as_ruamel_reads_it_or_left_to_ruamel(doc, tail):
    text = "\n".join(_raw(doc)) + tail
    ok, got = yaml_light.load(text)
    if not ok:
        return
    expected = ruamel_load(text)  # it must not raise: text taken here is YAML
    assert same(got, expected), (text, got, expected)


@given(st.sampled_from(TRICKY))
def test_a_single_scalar_is_read_as_ruamel_reads_it(value):
    for text in (f"k: {value}\n", f"k:\n- {value}\n", f"{value}: 1\n", f"k: '{value}'\n"):
        ok, got = yaml_light.load(text)
        if ok:
            assert same(got, ruamel_load(text)), text


def test_what_it_leaves_to_ruamel():
    for text in ["# a comment\na: 1\n", "a: 1 # note\n", "a: \"x\"\n", "a: |\n  x\n", "a: [1, 2]\n", "a: &x 1\n",
                 "---\na: 1\n", "a:\n\t- 1\n", "a: 1\na: 2\n", "- 1\n", "", "a: 2026-12-01\n", "a: 1.5\n",
                 "a: yes\n", "a:\n  b: 1\n c: 2\n", "a: 'x\n  y'\n"]:
        assert yaml_light.load(text) == (False, None), text


def test_swamps_own_files_are_read_and_written_the_same(tmp_path):
    """A repository made by swamp, a run's record and data metadata:
    each file reads through the fast path as ruamel reads it, and is
    written back byte for byte."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "_SWAMP_", "SWAMP_"))}
    env["PYTHONPATH"] = os.path.abspath(SRC)
    for args in (["repo", "init"], ["model", "create", "command/shell", "m", "--global-arg", "run=true"],
                 ["model", "method", "run", "m", "execute", "--tag", "env=prod"]):
        subprocess.run([sys.executable, "-m", "swamp.cli.main", *args], cwd=tmp_path, env=env, check=True,
                       capture_output=True)
    files = [p for p in glob.glob(f"{tmp_path}/**/*.yaml", recursive=True, include_hidden=True) if "/extensions/" not in p]
    files.append(str(tmp_path / ".swamp.yaml"))
    assert len(files) >= 5
    for path in files:
        text = open(path).read()
        ok, doc = yaml_light.load(text)
        assert ok, path
        assert same(doc, ruamel_load(text))
        assert yaml_light.dump(doc) == text == ruamel_dump(doc)


def test_yamlio_takes_the_fast_path_and_falls_back():
    assert yamlio.loads("a: 1\nb: 'x'\n") == {"a": 1, "b": "x"}
    assert yamlio.loads("a: 2026-12-01\n") == {"a": datetime.date(2026, 12, 1)}  # ruamel's reading
    assert yamlio.dumps({"a": 1.5}) == "a: 1.5\n"
    code = ("import sys\nfrom swamp.util import yamlio\nyamlio.loads(\"a: 1\\nb:\\n- c: 'x'\\n\")\n"
            "yamlio.dumps({'a': [{'b': '2026-12-01T00:00:00Z'}]})\nprint('ruamel' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": os.path.abspath(SRC)},
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
