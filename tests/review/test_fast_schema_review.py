"""Review of the pydantic-free fast paths for arguments and definitions
(util/fast_schema.LazySchema, models/definition_files.light_definition):
whatever the fast path accepts must be what the pydantic schema gives, to
the type (1 is not True, 5 is not 5.0), and, where a document is shown to a
person or a script, in the schema's key order too: pydantic's model_dump
lists fields in their declared order, whatever order the input had."""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
import pytest

from swamp.models.builtin.shell import SHELL_ARGUMENTS, SHELL_RESULT
from swamp.models.definition_files import light_definition
from swamp.util.documents import DocView
from tests.helpers import cli, init_repo

FEW = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def typed(v):
    """A value with its types spelled out all the way down (dict equality
    alone takes 1 == True == 1.0 and ignores key order)."""
    if isinstance(v, dict):
        return ("dict", [(typed(k), typed(x)) for k, x in v.items()])
    if isinstance(v, list):
        return ("list", [typed(x) for x in v])
    return (type(v).__name__, v)


def unordered(v):
    if isinstance(v, dict):
        return ("dict", sorted((repr(typed(k)), unordered(x)) for k, x in v.items()))
    if isinstance(v, list):
        return ("list", [unordered(x) for x in v])
    return (type(v).__name__, v)


class _Str(str):
    pass


# Values of every kind that trips a fast path: bool for int, int for float,
# big ints, str subclasses, None for missing, non-string keys, nested dicts.
odd = st.one_of(
    st.booleans(), st.integers(-2, 3), st.integers(2**63 - 2, 2**64 + 2), st.just(10**30),
    st.floats(allow_nan=True), st.just(5.0), st.none(), st.text(max_size=5), st.just(_Str("x")), st.just(b"x"),
    st.just(""), st.just("é\u2028\x85"), st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2),
    st.dictionaries(st.integers(0, 2), st.text(max_size=2), max_size=2), st.just({"a": {"b": "c"}}),
    st.just({"a": 1}), st.lists(st.text(max_size=2), max_size=2),
)
SHELL_KEYS = ["run", "workingDir", "timeout", "env", "ignoreExitCode", "extra"]
shell_args = st.dictionaries(st.sampled_from(SHELL_KEYS), odd, max_size=6)
shell_args_valid = st.fixed_dictionaries(
    {"run": st.text(max_size=5)},
    optional={"workingDir": st.none() | st.text(max_size=5), "timeout": st.none() | st.integers(1, 10**20),
              "env": st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=3),
              "ignoreExitCode": st.booleans()})


def _schema(data, schema):
    from pydantic import ValidationError

    try:
        return schema.model().model_validate(data).model_dump()
    except ValidationError:
        return "refused"


@FEW
@given(st.one_of(shell_args, shell_args_valid.flatmap(lambda d: st.permutations(list(d.items())).map(dict))))
def test_shell_arguments_fast_path_takes_only_what_pydantic_takes_with_the_same_values(data):
    fast = SHELL_ARGUMENTS.fast(data)
    if fast is None:
        return
    want = _schema(data, SHELL_ARGUMENTS)
    assert want != "refused", data
    assert unordered(fast.model_dump()) == unordered(want)


@FEW
@given(st.dictionaries(st.sampled_from(["exitCode", "executedAt", "command", "durationMs", "stdout", "stderr", "x"]),
                       odd, max_size=7))
def test_shell_result_fast_path_takes_only_what_pydantic_takes(data):
    fast = SHELL_RESULT.fast(data)
    if fast is None:
        return
    want = _schema(data, SHELL_RESULT)
    assert want != "refused", data
    assert unordered(fast.model_dump()) == unordered(want)


@FEW
@given(shell_args_valid.flatmap(lambda d: st.permutations(list(d.items())).map(dict)))
@example({"run": "true", "timeout": 5})
def test_shell_arguments_fast_path_keeps_the_schemas_key_order(data):
    fast = SHELL_ARGUMENTS.fast(data)
    assert fast is not None
    assert typed(fast.model_dump()) == typed(_schema(data, SHELL_ARGUMENTS))


def test_model_evaluate_lists_arguments_in_the_schemas_order(tmp_path):
    from swamp.models.builtin.shell_schemas import ShellArguments

    repo = init_repo(tmp_path / "r")
    r = cli(repo, "model", "create", "command/shell", "ev", "--global-arg", "run=true", "--global-arg", "timeout=5")
    assert r.code == 0, r
    r = cli(repo, "model", "evaluate", "ev")
    assert r.code == 0, r
    # what 9a5db86 printed: run, workingDir, timeout, env, ignoreExitCode
    assert list(r.data["methods"]["execute"]) == list(ShellArguments.model_fields)


# ------------------------------------------------------------ definitions
def_keys = ["type", "typeVersion", "id", "name", "version", "description", "tags", "globalArguments", "methods",
            "inputs", "resources", "files", "reports", "extra"]
def_values = st.one_of(
    odd, st.sampled_from(["command/shell", "m", "m\n", "M", "a" * 65, "@a/b", "a//b", "a/b\n", "a/../b"]),
    st.just({"execute": {"arguments": {"run": "x"}}}), st.just({"execute": {}}), st.just({"execute": None}),
    st.just({"execute": {"arguments": None}}), st.just({"r": {"lifetime": "1d", "garbageCollection": 3}}),
    st.just({"r": {"garbageCollection": True}}), st.just({"r": {"garbageCollection": 1.5}}),
    st.just({"r": {}}), st.just({"r": None}), st.just(["a", "b"]), st.just([1]),
)
definitions = st.fixed_dictionaries(
    {"type": st.sampled_from(["command/shell", "acme/x"]) | def_values,
     "id": st.just("11111111-2222-4333-8444-555555555555") | def_values,
     "name": st.sampled_from(["m", "m-1"]) | def_values},
    optional={k: def_values for k in def_keys if k not in ("type", "id", "name")})


@FEW
@given(definitions)
@example({"type": "command/shell", "id": "x", "name": "m", "version": True})
@example({"type": "command/shell", "id": "x", "name": "m", "resources": {"r": {"garbageCollection": False}}})
def test_a_definition_is_read_on_the_fast_path_only_as_the_schema_reads_it(raw):
    from pydantic import ValidationError

    from swamp.models.definition_schema import Definition

    light = light_definition(raw)
    if light is None:
        return
    try:
        want = Definition.model_validate(raw).model_dump()
    except ValidationError as e:
        raise AssertionError(f"fast path took what the schema refuses: {raw!r}: {e}") from None

    def plain(v):
        if isinstance(v, DocView) or isinstance(v, dict):
            return {k: plain(x) for k, x in v.items()}
        return v

    assert unordered(plain(light)) == unordered(want)


def _float_ge_schema():
    from pydantic import BaseModel, ConfigDict, Field

    class Limits(BaseModel):
        model_config = ConfigDict(extra="forbid")
        ratio: float = Field(default=1.0, ge=0)

    from swamp.util.fast_schema import FastField, LazySchema

    return LazySchema(lambda: Limits, {"ratio": FastField(float, default=1.0, ge=0)}, name="Limits")


@pytest.mark.parametrize("value", [-1.0, float("nan")])
def test_a_float_field_with_a_lower_bound_refuses_what_pydantic_refuses(value):
    lazy = _float_ge_schema()
    assert _schema({"ratio": value}, lazy) == "refused"  # the table below passes the drift test's ge check
    assert lazy.fast({"ratio": value}) is None


def test_a_mutable_default_is_not_shared_between_results():
    from pydantic import BaseModel, ConfigDict

    from swamp.util.fast_schema import FastField, LazySchema

    class Names(BaseModel):
        model_config = ConfigDict(extra="forbid")
        names: list[str] = []

    lazy = LazySchema(lambda: Names, {"names": FastField(list, default=[], values=str)}, name="Names")
    first = lazy.fast({})
    first["names"].append("changed by a method")
    assert Names().names == [] and lazy.model().model_validate({}).names == []
    assert lazy.fast({})["names"] == []
