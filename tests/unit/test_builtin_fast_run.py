"""A plain run of the built-in command/shell takes the fast path of its
schemas and of its definition (util/fast_schema.py): it starts without
pydantic, and its method gets the arguments the schema would give. Types
written with pydantic (extensions, local types) get pydantic instances, as
always."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from hypothesis import given, settings, strategies as st
from pydantic import BaseModel

from swamp.expr import has_expressions
from swamp.models.runner import Runner, holds_expressions
from swamp.repo.context import Repo
from swamp.util.documents import DocView
from swamp.util.fast_schema import Arguments
from tests.helpers import PROBE_TYPE, _env, init_repo, write_shell, write_type


@pytest.fixture
def repo(tmp_path):
    path = init_repo(tmp_path / "repo")
    write_shell(path, "m00", """
        type: command/shell
        id: 0b2e6a36-6c1e-4c57-9d39-1c2a3f0e9a01
        name: m00
        globalArguments:
          run: "true"
    """)
    return path


def test_a_plain_shell_run_starts_without_pydantic(repo):
    code = textwrap.dedent(f"""
        import json, sys
        from swamp.app.methods import run_method
        from swamp.repo.context import Repo
        run = run_method(Repo.open({str(repo)!r}), "m00", "execute")
        print(json.dumps({{"status": run.record.status,
                          "pydantic": sorted(m for m in sys.modules if m.split(".")[0] == "pydantic")}}))
    """)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(), timeout=60)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out == {"status": "succeeded", "pydantic": []}


def test_shell_arguments_and_definition_come_from_the_fast_path(repo):
    prepared = Runner(Repo.open(repo)).prepare("m00", "execute", {"timeout": "5"})
    assert isinstance(prepared.definition, DocView)
    assert isinstance(prepared.args, Arguments)
    assert prepared.args == {"run": "true", "workingDir": None, "timeout": 5, "env": {}, "inheritEnv": [],
                             "ignoreExitCode": False}
    assert prepared.args.timeout == 5 and prepared.args.model_dump()["env"] == {}


def test_an_unusual_definition_is_read_by_the_schema(repo):
    # version 1.0 is not exactly an int: the pydantic Definition reads (and normalizes) it
    write_shell(repo, "m01", """
        type: command/shell
        name: m01
        version: 1.0
        globalArguments:
          run: "true"
    """)
    prepared = Runner(Repo.open(repo)).prepare("m01", "execute")
    assert not isinstance(prepared.definition, DocView)
    assert prepared.definition.version == 1
    assert isinstance(prepared.args, Arguments)


def test_a_type_written_with_pydantic_gets_pydantic_instances(tmp_path):
    path = init_repo(tmp_path / "repo")
    write_type(path, "probe.py", PROBE_TYPE)
    p = path / "models" / "acme" / "probe" / "p1.yaml"
    p.parent.mkdir(parents=True)
    p.write_text("type: acme/probe\nname: p1\nglobalArguments:\n  count: 2\n")
    prepared = Runner(Repo.open(path)).prepare("p1", "write", {"times": "3"})
    assert isinstance(prepared.args, BaseModel)
    assert (prepared.args.count, prepared.args.times) == (2, 3)


_values = st.recursive(st.one_of(st.none(), st.integers(), st.text(alphabet="${} a", max_size=6)),
                       lambda inner: st.one_of(st.lists(inner, max_size=3), st.tuples(inner, inner),
                                               st.dictionaries(st.text(alphabet="${} a", max_size=4), inner,
                                                               max_size=3)), max_leaves=8)


@settings(max_examples=500, deadline=None)
@given(value=_values)
def test_the_runner_sees_an_expression_where_the_engine_does(value):
    # the runner loads the expression engine only for a value that holds one
    assert holds_expressions(value) == has_expressions(value)


@st.composite
def _signatures(draw) -> str:
    names = iter(f"p{i}" for i in range(20))
    posonly = [next(names) for _ in range(draw(st.integers(0, 3)))]
    normal = [next(names) for _ in range(draw(st.integers(0, 3)))]
    positional = posonly + normal
    defaults = draw(st.integers(0, len(positional)))
    shown = [p + ("=1" if i >= len(positional) - defaults else "") for i, p in enumerate(positional)]
    parts = shown[:len(posonly)] + (["/"] if posonly else []) + shown[len(posonly):]
    star = draw(st.booleans())
    kwonly = [next(names) + draw(st.sampled_from(["", "=2"])) for _ in range(draw(st.integers(0, 2)))]
    if star:
        parts.append("*args")
    elif kwonly:
        parts.append("*")
    parts += kwonly
    if draw(st.booleans()):
        parts.append("**kw")
    return ", ".join(parts)


@settings(max_examples=300, deadline=None)
@given(signature=_signatures())
def test_a_method_signature_is_judged_as_inspect_judges_it(signature):
    import inspect

    from swamp.models.api import _takes_two

    namespace: dict = {}
    exec(f"def f({signature}): pass", namespace)
    fn = namespace["f"]
    try:
        inspect.signature(fn).bind(None, None)
        bound = True
    except TypeError:
        bound = False
    assert _takes_two(fn) == bound, signature


def test_a_type_written_with_pydantic_sees_its_definition_as_the_schemas_instance(tmp_path):
    from swamp.models.definition_schema import Definition

    path = init_repo(tmp_path / "repo")
    write_type(path, "probe.py", PROBE_TYPE)
    p = path / "models" / "acme" / "probe" / "p1.yaml"
    p.parent.mkdir(parents=True)
    p.write_text("type: acme/probe\nname: p1\nid: abc\nglobalArguments:\n  count: 2\n")
    definition, _ = Runner(Repo.open(path)).check("p1", "write")
    assert isinstance(definition, Definition)
    assert definition.model_dump()["globalArguments"] == {"count": 2}
