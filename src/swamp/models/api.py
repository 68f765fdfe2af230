"""The authoring API extension writers import: ``from swamp import ModelType``.

Plain functions, decorators and pydantic models; nothing to subclass::

    counter = ModelType("acme/counter", version="2026.11.30.1", global_arguments=Settings)
    counter.resource("count", schema=Count, lifetime="infinite", garbage_collection=10)

    @counter.method(description="Add one")
    def increment(args: Settings, ctx: Context) -> None: ...
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from pydantic import BaseModel, ConfigDict

from swamp.errors import ValidationError
from swamp.models.specs import METHOD_KINDS, check_gc_policy, check_lifetime, infer_kind
from swamp.util.names import check_type_name

CALVER_RE = re.compile(r"^\d{4}\.\d{2}\.\d{2}\.\d+$")
SPEC_RE = re.compile(r"^[a-z][a-z0-9_]*$")


class _NoArguments(BaseModel):
    # Built on first use (defer_build): a type with arguments never needs it.
    model_config = ConfigDict(extra="forbid", defer_build=True)


@dataclass
class ResourceSpec:
    name: str
    schema: type[BaseModel] | None
    lifetime: str
    garbage_collection: int | str | None
    description: str = ""
    sensitive: bool = False


@dataclass
class FileSpec:
    name: str
    content_type: str
    lifetime: str
    garbage_collection: int | str | None
    description: str = ""
    streaming: bool = False


@dataclass
class MethodSpec:
    name: str
    fn: Callable[..., Any]
    description: str
    arguments: type[BaseModel] | None
    kind: str
    _merged: type[BaseModel] | None = field(default=None, repr=False)


def _strict(model: type[BaseModel] | None) -> type[BaseModel] | None:
    """Argument schemas refuse unknown keys: nothing is dropped silently."""
    if model is None:
        return None
    if model.model_config.get("extra") == "forbid":
        return model
    return _forbid_extra(model)


def _forbid_extra(model: type[BaseModel]) -> type[BaseModel]:
    return type(model.__name__, (model,), {"model_config": ConfigDict(**{**model.model_config, "extra": "forbid"}),
                                           "__module__": model.__module__})


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
            raise ValidationError(f"model type {type}: version {version!r} is not CalVer YYYY.MM.DD.N")
        self.type = type
        self.version = version
        self.description = description
        self.global_arguments: type[BaseModel] = _strict(global_arguments) or _NoArguments
        self.resources: dict[str, ResourceSpec] = {}
        self.files: dict[str, FileSpec] = {}
        self.methods: dict[str, MethodSpec] = {}
        #: pre-flight checks of its mutating methods (models/checks.py)
        self.checks: dict = {}
        #: top-level arguments whose vault references the type resolves itself
        #: (through ctx.shell_secrets / ctx.resolve_secrets) instead of the runner
        self.secret_passthrough: set[str] = set()

    # ------------------------------------------------------------ declaring
    def _check_spec_name(self, name: str) -> None:
        if not SPEC_RE.match(name):
            raise ValidationError(f"{self.type}: spec name {name!r} must match {SPEC_RE.pattern}")
        if name in self.resources or name in self.files:
            raise ValidationError(f"{self.type}: spec {name!r} is declared twice")

    def resource(self, name: str, *, schema: type[BaseModel] | None = None, lifetime: str = "infinite",
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
               arguments: type[BaseModel] | None = None, kind: str | None = None):
        def decorator(fn):
            mname = name or fn.__name__
            if not re.match(r"^[a-zA-Z][a-zA-Z0-9_]*$", mname):
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
            if spec.arguments is None:
                spec._merged = self.global_arguments
            else:
                spec._merged = type(
                    f"{spec.arguments.__name__}WithGlobals",
                    (spec.arguments, self.global_arguments),
                    {"model_config": ConfigDict(extra="forbid"), "__module__": spec.arguments.__module__},
                )
        return spec._merged

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
                    "arguments": (m.arguments or _NoArguments).model_json_schema(),
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
    from swamp.models.checks import describe

    return describe(model_type)


def _check_signature(type_name: str, method: str, fn) -> None:
    """A method is called as ``fn(args, ctx)``: say so when the type loads,
    not as a TypeError in the middle of a run."""
    import inspect

    if not callable(fn):
        raise ValidationError(f"{type_name}: method {method!r} is not a function")
    try:
        inspect.signature(fn).bind(None, None)
    except TypeError:
        raise ValidationError(
            f"{type_name}: method {method!r} must take two arguments (args, ctx), "
            f"not {method}{inspect.signature(fn)}",
            hint="def " + method + "(args: Settings, ctx: Context) -> None") from None
    except ValueError:  # no signature to inspect (a builtin): it will tell at run time
        pass
