"""The authoring API extension writers import: ``from swamp import ModelType``.

Plain functions, decorators and pydantic models; nothing to subclass::

    counter = ModelType("acme/counter", version="2026.11.30.1", global_arguments=Settings)
    counter.resource("count", schema=Count, lifetime="infinite", garbage_collection=10)

    @counter.method(description="Add one")
    def increment(args: Settings, ctx: Context) -> None: ...
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Callable

from swamp.errors import ValidationError
from swamp.models.checks import describe
from swamp.models.specs import METHOD_KINDS, check_gc_policy, check_lifetime, infer_kind
from swamp.util.fast_schema import LazySchema
from swamp.util.names import check_type_name

if TYPE_CHECKING:
    from pydantic import BaseModel

# pydantic is not imported here: a built-in type declares its schemas as
# LazySchema (util/fast_schema.py), and an extension's own pydantic classes
# come with pydantic already imported.

CALVER_RE = re.compile(r"^\d{4}\.\d{2}\.\d{2}\.\d+$")
SPEC_RE = re.compile(r"^[a-z][a-z0-9_]*$")
METHOD_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9_]*$")

_no_arguments: Any = None


def _NoArguments() -> type[BaseModel]:  # noqa: N802 - stands for the class it builds
    """The schema of no arguments, built on first use: a type with
    arguments never needs it."""
    global _no_arguments
    if _no_arguments is None:
        from pydantic import BaseModel, ConfigDict

        class _NoArguments(BaseModel):
            model_config = ConfigDict(extra="forbid")

        _no_arguments = _NoArguments
    return _no_arguments


def _model(schema) -> Any:
    """The pydantic class a declared schema stands for (a LazySchema's is
    imported now)."""
    return schema.model() if isinstance(schema, LazySchema) else schema


class ResourceSpec:
    """A resource a type writes. ``schema`` is its pydantic class (a
    built-in's is imported when first read); ``lazy`` its LazySchema, if
    declared so."""

    def __init__(self, name: str, schema, lifetime: str, garbage_collection: int | str | None,
                 description: str = "", sensitive: bool = False) -> None:
        self.name = name
        self.lazy: LazySchema | None = schema if isinstance(schema, LazySchema) else None
        self._schema = schema
        self.lifetime = lifetime
        self.garbage_collection = garbage_collection
        self.description = description
        self.sensitive = sensitive

    @property
    def schema(self) -> type[BaseModel] | None:
        return _model(self._schema)

    def __repr__(self) -> str:
        return (f"ResourceSpec(name={self.name!r}, schema={self._schema!r}, lifetime={self.lifetime!r}, "
                f"garbage_collection={self.garbage_collection!r}, description={self.description!r}, "
                f"sensitive={self.sensitive!r})")


class FileSpec:
    def __init__(self, name: str, content_type: str, lifetime: str, garbage_collection: int | str | None,
                 description: str = "", streaming: bool = False) -> None:
        self.name = name
        self.content_type = content_type
        self.lifetime = lifetime
        self.garbage_collection = garbage_collection
        self.description = description
        self.streaming = streaming

    def __repr__(self) -> str:
        return (f"FileSpec(name={self.name!r}, content_type={self.content_type!r}, lifetime={self.lifetime!r}, "
                f"garbage_collection={self.garbage_collection!r}, description={self.description!r}, "
                f"streaming={self.streaming!r})")


class MethodSpec:
    """A method. ``arguments`` is its own pydantic class of arguments, or
    None (a built-in's is imported when first read)."""

    def __init__(self, name: str, fn: Callable[..., Any], description: str, arguments, kind: str) -> None:
        self.name = name
        self.fn = fn
        self.description = description
        self.lazy: LazySchema | None = arguments if isinstance(arguments, LazySchema) else None
        self._arguments = arguments
        self.kind = kind
        self._merged: Any = None
        self._fast: Any = None

    @property
    def arguments(self) -> type[BaseModel] | None:
        if self.lazy is not None:
            return self.lazy.model()
        return self._arguments

    def __repr__(self) -> str:
        return (f"MethodSpec(name={self.name!r}, fn={self.fn!r}, description={self.description!r}, "
                f"arguments={self._arguments!r}, kind={self.kind!r})")


def _strict(model):
    """Argument schemas refuse unknown keys: nothing is dropped silently
    (a LazySchema's class is declared so: tests check it)."""
    if model is None or isinstance(model, LazySchema):
        return model
    if model.model_config.get("extra") == "forbid":
        return model
    return _forbid_extra(model)


def _forbid_extra(model: type[BaseModel]) -> type[BaseModel]:
    return type(model.__name__, (model,), {"model_config": {**model.model_config, "extra": "forbid"},
                                           "__module__": model.__module__})


def _calver_today() -> str:
    from swamp.util import clock

    return clock.isoformat()[:10].replace("-", ".") + ".1"


class ModelType:
    def __init__(
        self,
        type: str,
        *,
        version: str,
        global_arguments: type[BaseModel] | None = None,
        description: str = "",
    ) -> None:
        check_type_name(type)
        if not CALVER_RE.match(version):
            raise ValidationError(f"model type {type}: version {version!r} is not CalVer YYYY.MM.DD.N "
                                  f"(the release's date and a counter, such as {_calver_today()}); "
                                  "a type whose version is not is left out of 'model type search'")
        self.type = type
        self.version = version
        self.description = description
        #: as declared: a pydantic class, a LazySchema, or None
        self._global_arguments = _strict(global_arguments)
        self.resources: dict[str, ResourceSpec] = {}
        self.files: dict[str, FileSpec] = {}
        self.methods: dict[str, MethodSpec] = {}
        #: pre-flight checks of its mutating methods (models/checks.py)
        self.checks: dict = {}
        #: top-level arguments whose vault references the type resolves itself
        #: (through ctx.shell_secrets / ctx.resolve_secrets) instead of the runner
        self.secret_passthrough: set[str] = set()

    @property
    def global_arguments(self) -> type[BaseModel]:
        """The pydantic class of its global arguments (a built-in's is
        imported now)."""
        return _model(self._global_arguments) or _NoArguments()

    # ------------------------------------------------------------ declaring
    def _check_spec_name(self, name: str) -> None:
        if not SPEC_RE.match(name):
            raise ValidationError(f"{self.type}: spec name {name!r} must match {SPEC_RE.pattern}")
        if name in self.resources or name in self.files:
            raise ValidationError(f"{self.type}: spec {name!r} is declared twice")

    def resource(self, name: str, *, schema: type[BaseModel] | LazySchema | None = None, lifetime: str = "infinite",
                 garbage_collection: int | str | None = None, description: str = "",
                 sensitive: bool = False) -> ResourceSpec:
        self._check_spec_name(name)
        spec = ResourceSpec(name, schema, check_lifetime(lifetime), check_gc_policy(garbage_collection),
                            description, sensitive)
        self.resources[name] = spec
        return spec

    def file(self, name: str, *, content_type: str = "text/plain", lifetime: str = "infinite",
             garbage_collection: int | str | None = None, description: str = "",
             streaming: bool = False) -> FileSpec:
        self._check_spec_name(name)
        spec = FileSpec(name, content_type, check_lifetime(lifetime), check_gc_policy(garbage_collection),
                        description, streaming)
        self.files[name] = spec
        return spec

    def method(self, name: str | None = None, *, description: str = "",
               arguments: type[BaseModel] | LazySchema | None = None, kind: str | None = None):
        def decorator(fn):
            mname = name or fn.__name__
            if not METHOD_RE.match(mname):
                raise ValidationError(f"{self.type}: invalid method name {mname!r}")
            if mname in self.methods:
                raise ValidationError(f"{self.type}: method {mname!r} is declared twice")
            _check_signature(self.type, mname, fn)
            k = kind or infer_kind(mname)
            if k not in METHOD_KINDS:
                raise ValidationError(f"{self.type}: method kind {k!r} is not one of {', '.join(METHOD_KINDS)}")
            self.methods[mname] = MethodSpec(mname, fn, description or (fn.__doc__ or "").strip(),
                                             _strict(arguments), k)
            return fn

        return decorator

    def check(self, name: str | None = None, *, description: str = "", methods=None):
        """Declare a pre-flight check, run before the methods it guards
        (``methods``; default: every mutating method). See models/checks.py."""
        from swamp.models.checks import declare

        def decorator(fn):
            spec = declare(self.type, self.checks, fn, name, description, methods)
            self.checks[spec.name] = spec
            return fn

        return decorator

    # ------------------------------------------------------------- using
    def arguments_model(self, method: str) -> type[BaseModel]:
        """Global and method arguments merged into one schema (method wins)."""
        spec = self.methods[method]
        if spec._merged is None:
            own = spec.arguments
            if own is None:
                spec._merged = self.global_arguments
            else:
                spec._merged = type(
                    f"{own.__name__}WithGlobals",
                    (own, self.global_arguments),
                    {"model_config": {"extra": "forbid"}, "__module__": own.__module__},
                )
        return spec._merged

    def fast_arguments(self, method: str) -> LazySchema | None:
        """The fast path of ``method``'s merged arguments, when the type
        declares every one of its argument schemas as a LazySchema (a
        built-in); None for any other type, whose methods receive pydantic
        instances as always."""
        spec = self.methods[method]
        if spec._fast is None:
            glob, own = self._global_arguments, spec._arguments
            if not (isinstance(glob, LazySchema) or isinstance(own, LazySchema)) \
                    or not isinstance(glob, (LazySchema, type(None))) \
                    or not isinstance(own, (LazySchema, type(None))):
                spec._fast = False
            elif own is None:
                spec._fast = glob
            else:
                spec._fast = own.merged(glob, lambda: self.arguments_model(method),
                                        f"{own.__name__}WithGlobals")
        return spec._fast or None

    def describe(self) -> dict:
        return {
            "type": self.type,
            "version": self.version,
            "description": self.description,
            "globalArguments": self.global_arguments.model_json_schema(),
            "methods": {
                name: {
                    "description": m.description,
                    "kind": m.kind,
                    "arguments": (m.arguments or _NoArguments()).model_json_schema(),
                }
                for name, m in sorted(self.methods.items())
            },
            "resources": {
                name: {
                    "description": r.description,
                    "lifetime": r.lifetime,
                    "garbageCollection": r.garbage_collection,
                    "sensitive": r.sensitive,
                    "schema": r.schema.model_json_schema() if r.schema else {"type": "object"},
                }
                for name, r in sorted(self.resources.items())
            },
            "files": {
                name: {
                    "description": f.description,
                    "contentType": f.content_type,
                    "lifetime": f.lifetime,
                    "garbageCollection": f.garbage_collection,
                    "streaming": f.streaming,
                }
                for name, f in sorted(self.files.items())
            },
            **({"checks": _describe_checks(self)} if self.checks else {}),
        }

    def __repr__(self) -> str:
        return f"ModelType({self.type!r}, version={self.version!r})"


def _describe_checks(model_type) -> dict:
    return describe(model_type)


def _check_signature(type_name: str, method: str, fn) -> None:
    """A method is called as ``fn(args, ctx)``: say so when the type loads,
    not as a TypeError in the middle of a run."""
    if not callable(fn):
        raise ValidationError(f"{type_name}: method {method!r} is not a function")
    if _takes_two(fn):  # a plain function, read from its code: no need to load inspect
        return
    import inspect

    try:
        inspect.signature(fn).bind(None, None)
    except TypeError:
        raise ValidationError(
            f"{type_name}: method {method!r} must take two arguments (args, ctx), "
            f"not {method}{inspect.signature(fn)}",
            hint="def " + method + "(args: Settings, ctx: Context) -> None") from None
    except ValueError:  # no signature to inspect (a builtin): it will tell at run time
        pass


def _takes_two(fn) -> bool:
    """True when ``fn`` is a plain function that ``inspect.signature(fn)
    .bind(None, None)`` accepts; False when it is not, or is anything else
    (inspect then decides). tests/unit/test_builtin_fast_run.py compares."""
    if type(fn) is not type(_takes_two) or hasattr(fn, "__wrapped__") or hasattr(fn, "__signature__"):
        return False
    code = fn.__code__
    positional = code.co_argcount
    required = positional - len(fn.__defaults__ or ())
    kwonly = code.co_varnames[positional:positional + code.co_kwonlyargcount]
    return (positional >= 2 or bool(code.co_flags & 0x04)) and required <= 2 \
        and all(k in (fn.__kwdefaults__ or {}) for k in kwonly)
