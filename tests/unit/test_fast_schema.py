"""The fast path of a built-in type's schemas (util/fast_schema.py) and of a
definition (models/definition_files.light_definition): what it accepts, the
pydantic schema accepts with the same result; what it refuses is judged by
the schema exactly as before; and its tables cannot drift from the classes."""

from __future__ import annotations

import types
import typing

import pytest
from annotated_types import Ge
from hypothesis import HealthCheck, given, settings, strategies as st
from pydantic import BaseModel, ValidationError as PydanticError

from swamp.errors import ValidationError
from swamp.models import registry
from swamp.models.api import ModelType
from swamp.models.arguments import ArgumentSchema
from swamp.models.definition_files import light_definition
from swamp.models.definition_schema import Definition
from swamp.util.documents import DocView, format_errors
from swamp.util.fast_schema import Arguments, FastField, LazySchema


def _builtin_types() -> list[ModelType]:
    reg = registry.Registry()
    reg._load_builtins()
    return [reg.get(t) for t in registry.BUILTIN_TYPES]


def _lazy_schemas() -> list[tuple[str, LazySchema, bool]]:
    """(where, schema, is an argument schema) for every LazySchema a
    built-in type declares."""
    out = []
    for t in _builtin_types():
        if isinstance(t._global_arguments, LazySchema):
            out.append((f"{t.type} globalArguments", t._global_arguments, True))
        for name, m in t.methods.items():
            if m.lazy is not None:
                out.append((f"{t.type} method {name}", m.lazy, True))
        for name, r in t.resources.items():
            if r.lazy is not None:
                out.append((f"{t.type} resource {name}", r.lazy, False))
    return out


LAZY = _lazy_schemas()


def test_the_builtin_shell_declares_its_schemas_lazily():
    # what keeps a plain run of command/shell off pydantic
    assert {where for where, _, _ in LAZY} >= {"command/shell globalArguments", "command/shell resource result"}


# ---------------------------------------------------------------- drift

def _types_of(annotation) -> tuple[set, type | None]:
    """(exact types, type of a container's values) of a simple annotation."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        found, values = set(), None
        for arg in typing.get_args(annotation):
            t, v = _types_of(arg)
            found |= t
            values = values or v
        return found, values
    if origin in (dict, list):
        args = typing.get_args(annotation)
        item = args[-1] if args else typing.Any
        return {origin}, None if item is typing.Any else item
    return {annotation}, None


@pytest.mark.parametrize("where,lazy,arguments", LAZY, ids=[w for w, _, _ in LAZY])
def test_the_fast_table_is_the_pydantic_class(where, lazy, arguments):
    model = lazy.model()
    assert issubclass(model, BaseModel)
    assert list(lazy.fields) == list(model.model_fields), f"{where}: field names differ"
    if arguments:  # argument schemas refuse unknown keys, as models/api._strict makes any other type's
        assert model.model_config.get("extra") == "forbid", where
    props = model.model_json_schema().get("properties", {})
    for name, info in model.model_fields.items():
        fast = lazy.fields[name]
        assert fast.required == info.is_required(), f"{where}.{name}: required"
        if not info.is_required():
            assert fast.default_value() == info.get_default(call_default_factory=True), f"{where}.{name}: default"
        want_types, want_values = _types_of(info.annotation)
        assert set(fast.types) == want_types, f"{where}.{name}: types"
        assert fast.values == want_values, f"{where}.{name}: value type"
        ge = [m.ge for m in info.metadata if isinstance(m, Ge)]
        assert fast.ge == (ge[0] if ge else None), f"{where}.{name}: ge"
        others = [m for m in info.metadata if not isinstance(m, Ge)]
        assert not others, f"{where}.{name}: a constraint the fast path does not know: {others}"
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        assert fast.sensitive == bool(extra.get("sensitive")), f"{where}.{name}: sensitive"
        prop = props[info.alias or name]
        branch = next((p for p in prop.get("anyOf", [prop]) if p.get("type") != "null"), prop)
        assert fast.json_type() == branch.get("type"), f"{where}.{name}: JSON type"


def test_a_table_cannot_name_a_field_a_view_would_hide():
    with pytest.raises(ValueError):
        LazySchema("x:Y", {"items": FastField(str)})


# ------------------------------------------------ fast path == the schema

class _S(str):
    pass


_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-3, max_value=3), st.integers(), st.floats(allow_nan=False),
    st.text(max_size=5), st.sampled_from(["", "5", "true", "1.0", "\udc80"]), st.builds(_S, st.text(max_size=3)))
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.one_of(st.text(max_size=4), st.integers()), inner, max_size=3)),
    max_leaves=6)


def _documents(lazy: LazySchema):
    names = list(lazy.fields)
    keys = st.one_of(st.sampled_from(names), st.sampled_from(["bogus", "Run"]))
    # mostly well-formed documents (each field a value of one of its own types), and the same with strays
    good = {name: _good_value(f) for name, f in lazy.fields.items()}
    well_formed = st.fixed_dictionaries({k: good[k] for k in lazy.required},
                                        optional={k: v for k, v in good.items() if k not in lazy.required})
    return st.one_of(well_formed, well_formed, st.dictionaries(keys, _values, max_size=6),
                     st.builds(lambda d, k, v: {**d, k: v}, well_formed, keys, _values),
                     _values)


def _good_value(f: FastField):
    options = []
    for t in f.types:
        if t is str:
            options.append(st.text(max_size=8))
        elif t is int:
            options.append(st.integers(min_value=-2, max_value=10**12))
        elif t is bool:
            options.append(st.booleans())
        elif t is float:
            options.append(st.floats(allow_nan=False))
        elif t is type(None):
            options.append(st.none())
        elif t is dict:
            options.append(st.dictionaries(st.text(max_size=4), _good_item(f.values), max_size=3))
        elif t is list:
            options.append(st.lists(_good_item(f.values), max_size=3))
    return st.one_of(*options)


def _good_item(t):
    return {str: st.text(max_size=4), int: st.integers(), bool: st.booleans(), None: _scalars}[t]


def _typed(value):
    """A value with its types spelled out (True == 1 must not pass)."""
    if isinstance(value, dict):
        return ("dict", sorted((_typed(k), _typed(v)) for k, v in value.items()))
    if isinstance(value, list):
        return ("list", [_typed(v) for v in value])
    return (type(value).__name__, repr(value))


@pytest.mark.parametrize("where,lazy,arguments", LAZY, ids=[w for w, _, _ in LAZY])
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_what_the_fast_path_accepts_the_schema_gives_alike(where, lazy, arguments, data):
    doc = data.draw(_documents(lazy))
    fast = lazy.fast(doc)
    if fast is None:
        return
    assert isinstance(fast, Arguments)
    model = lazy.model().model_validate(doc)  # raises if the fast path took what the schema refuses
    mode = "python" if arguments else "json"  # a resource is stored as JSON (context.write_resource)
    assert _typed(fast.model_dump()) == _typed(model.model_dump(mode=mode)), where
    for name in lazy.fields:
        assert _typed(getattr(fast, name)) == _typed(getattr(model, name))


def _shell_schema() -> ArgumentSchema:
    shell = next(t for t in _builtin_types() if t.type == "command/shell")
    return ArgumentSchema(shell, "execute")


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_a_run_gets_what_the_schema_says_whichever_path_it_takes(data):
    """The arguments a shell run receives, or its error, are the pydantic
    schema's: the fast path changes neither."""
    schema = _shell_schema()
    doc = data.draw(_documents(schema.fast))
    model = schema.model
    try:
        want = model.model_validate(doc)
    except PydanticError as e:
        msg, hint = format_errors(e, model)
        with pytest.raises(ValidationError) as got:
            schema.validate(doc, "model 'm' method 'execute'")
        assert got.value.message == f"model 'm' method 'execute': invalid arguments: {msg}"
        assert got.value.hint == hint
        return
    got = schema.validate(doc, "model 'm' method 'execute'")
    assert isinstance(got, Arguments)  # the same kind of object on either path
    assert _typed(got.model_dump()) == _typed(want.model_dump())


def test_the_documents_that_matter_take_the_fast_path():
    schema = _shell_schema()
    assert schema.fast.fast({"run": "true"}) == {"run": "true", "workingDir": None, "timeout": None, "env": {},
                                                  "inheritEnv": [], "ignoreExitCode": False}
    assert schema.fast.fast({"run": "x", "timeout": 1, "env": {"A": "b"}, "ignoreExitCode": True}) is not None
    for refused in ({"run": "x", "timeout": 0}, {"run": "x", "timeout": True}, {"run": "x", "ignoreExitCode": 1},
                    {"run": "x", "env": {"A": 1}}, {"run": _S("x")}, {"run": "x", "other": 1}, {}, None):
        assert schema.fast.fast(refused) is None, refused


def test_defaults_are_fresh_on_each_read():
    schema = _shell_schema()
    a, b = schema.fast.fast({"run": "x"}), schema.fast.fast({"run": "x"})
    a.env["A"] = "1"
    assert b.env == {}
    env = {"A": "1"}
    c = schema.fast.fast({"run": "x", "env": env})
    c.env["B"] = "2"
    assert env == {"A": "1"}  # the document's own containers are never shared


# --------------------------------------------------------------- definitions

_names = st.one_of(st.sampled_from(["m00", "web-1", "Bad Name", "a" * 70, "x\n"]), st.text(max_size=6))
_type_names = st.one_of(st.sampled_from(["command/shell", "acme/x", "acme/../x", "noslash", "@a/b/c"]),
                        st.text(max_size=6))
_str_maps = st.dictionaries(st.text(max_size=4), st.text(max_size=4), max_size=3)
_override = st.one_of(st.fixed_dictionaries({}, optional={
    "lifetime": st.one_of(st.none(), st.text(max_size=4), st.integers()),
    "garbageCollection": st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=4), st.floats())}),
    _values)
_DEFINITION_FIELDS = {
    "typeVersion": st.one_of(st.none(), st.text(max_size=5), st.integers()),
    "version": st.one_of(st.integers(), st.booleans(), st.floats(), st.text(max_size=2)),
    "description": st.one_of(st.none(), st.text(max_size=5), st.integers()),
    "tags": st.one_of(_str_maps, _values),
    "globalArguments": st.one_of(st.dictionaries(st.text(max_size=4), _values, max_size=3), _values),
    "methods": st.one_of(
        st.dictionaries(st.text(max_size=4), st.one_of(
            st.fixed_dictionaries({}, optional={"arguments": st.one_of(
                st.dictionaries(st.text(max_size=4), _values, max_size=2), _values)}), _values), max_size=2),
        _values),
    "inputs": st.one_of(st.none(), st.dictionaries(st.text(max_size=4), _values, max_size=2), _values),
    "resources": st.one_of(st.none(), st.dictionaries(st.text(max_size=4), _override, max_size=2), _values),
    "files": st.one_of(st.none(), st.dictionaries(st.text(max_size=4), _override, max_size=2), _values),
    "reports": st.one_of(st.none(), st.lists(st.text(max_size=4), max_size=2), _values),
    "bogus": _values,
}
_GOOD_DEFINITION_FIELDS = {
    "typeVersion": st.one_of(st.none(), st.text(max_size=5)),
    "version": st.integers(),
    "description": st.one_of(st.none(), st.text(max_size=5)),
    "tags": _str_maps,
    "globalArguments": st.dictionaries(st.text(max_size=4), _values, max_size=3),
    "methods": st.dictionaries(st.text(max_size=4), st.fixed_dictionaries({}, optional={
        "arguments": st.dictionaries(st.text(max_size=4), _values, max_size=2)}), max_size=2),
    "inputs": st.one_of(st.none(), st.dictionaries(st.text(max_size=4), _values, max_size=2)),
    "resources": st.one_of(st.none(), st.dictionaries(st.text(max_size=4), _override, max_size=2)),
    "files": st.one_of(st.none(), st.dictionaries(st.text(max_size=4), _override, max_size=2)),
    "reports": st.one_of(st.none(), st.lists(st.text(max_size=4), max_size=2)),
}
_good_definitions = st.fixed_dictionaries(
    {"type": st.sampled_from(["command/shell", "acme/x", "@a/b/c"]), "id": st.text(max_size=8),
     "name": st.sampled_from(["m00", "web-1", "a" * 64])}, optional=_GOOD_DEFINITION_FIELDS)
_definitions = st.one_of(
    _good_definitions, _good_definitions,
    st.builds(lambda d, k, v: {**d, k: v}, _good_definitions, st.sampled_from(sorted(_DEFINITION_FIELDS)),
              st.one_of(*_DEFINITION_FIELDS.values())),
    st.fixed_dictionaries({"type": st.one_of(_type_names, _values), "id": st.one_of(st.text(max_size=8), _values),
                           "name": st.one_of(_names, _values)}, optional=_DEFINITION_FIELDS),
    st.fixed_dictionaries({}, optional={"type": _type_names, "id": st.text(max_size=3), "name": _names}),
    _values)


def _plain(value):
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


@settings(max_examples=1500, deadline=None)
@given(raw=_definitions)
def test_a_definition_read_on_the_fast_path_is_the_schemas(raw):
    light = light_definition(raw)
    if light is None:
        return
    assert isinstance(light, DocView)
    model = Definition.model_validate(raw)  # raises if the fast path took what the schema refuses
    assert _typed(_plain(light)) == _typed(model.model_dump())
    for name, cfg in model.methods.items():
        assert light.methods[name].arguments == cfg.arguments
    for kind in ("resources", "files"):
        for name, own in (getattr(model, kind) or {}).items():
            got = getattr(light, kind)[name]
            assert (got.lifetime, got.garbageCollection) == (own.lifetime, own.garbageCollection)


def test_a_plain_definition_takes_the_fast_path():
    raw = {"type": "command/shell", "typeVersion": "2026.11.30.1", "id": "abc", "name": "m00", "version": 1,
           "globalArguments": {"run": "true"}, "methods": {"execute": {"arguments": {"timeout": 5}}},
           "resources": {"result": {"lifetime": "1h"}}, "tags": {"team": "a"}}
    light = light_definition(raw)
    assert light is not None
    assert light.methods["execute"].arguments == {"timeout": 5}
    assert light.resources["result"].garbageCollection is None
    assert light.reports is None and light.inputs is None


class _Globals(BaseModel):
    model_config = {"extra": "forbid"}
    region: str = "eu"


class _Own(BaseModel):
    model_config = {"extra": "forbid"}
    count: int = 1
    region: str | None = None


def test_a_method_declared_lazily_merges_its_arguments_over_the_global_ones():
    t = ModelType("acme/lazy", version="2026.01.01.1",
                  global_arguments=LazySchema(lambda: _Globals, {"region": FastField(str, default="eu")}))

    @t.method(arguments=LazySchema(lambda: _Own, {"count": FastField(int, default=1),
                                                  "region": FastField(str, None, default=None)}))
    def run(args, ctx):
        pass

    fast = t.fast_arguments("run")
    assert fast.fast({}) == {"count": 1, "region": None}  # the method's own field wins, as in the class
    model = t.arguments_model("run")
    assert fast.model() is model and model.model_validate({}).model_dump() == {"count": 1, "region": None}
    assert t.methods["run"].arguments is _Own and t.global_arguments is _Globals
    schema = ArgumentSchema(t, "run")
    assert schema.validate({"count": "2"}, "x") == {"count": 2, "region": None}  # converted by the class
    with pytest.raises(ValidationError, match="x: invalid arguments: other: unknown key"):
        schema.validate({"other": 1}, "x")
    assert t.describe()["methods"]["run"]["arguments"] == _Own.model_json_schema()


def test_a_type_written_with_pydantic_has_no_fast_path():
    t = ModelType("acme/plain", version="2026.01.01.1", global_arguments=_Globals)

    @t.method()
    def run(args, ctx):
        pass

    assert t.fast_arguments("run") is None
    assert isinstance(ArgumentSchema(t, "run").validate({}, "x"), _Globals)
