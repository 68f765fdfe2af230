"""A pydantic schema declared lazily, with a fast path beside it.

A built-in model type names its pydantic classes by reference
(``"module:Class"``) and describes each field in a small table. A document
whose keys and value types are exactly what the table allows is checked and
given its defaults without importing pydantic (whose import and model
builds cost a method run most of its start-up). Anything else goes to the
pydantic class, which stays THE schema: it accepts and normalizes, or names
every problem. The table may only accept what the class accepts, with the
same result (tests/unit/test_fast_schema.py proves it on many inputs, and
checks that the table and the class name the same fields and defaults).
"""

from __future__ import annotations

from typing import Any, Callable

from swamp.util.documents import DocView

_MISSING = object()
#: the only value types a table knows: anything else is the schema's to judge
_EXACT = (str, int, bool, float, type(None), dict, list)
_JSON = {str: "string", int: "integer", bool: "boolean", float: "number", dict: "object", list: "array"}


class FastField:
    """One field: the exact value types it takes (``None`` for null), its
    default (a value, or ``factory`` for a container), a ``ge`` bound for
    a number, and for a dict or list the exact type of its values / items."""

    __slots__ = ("types", "default", "factory", "ge", "values", "sensitive")

    def __init__(self, *types: Any, default: Any = _MISSING, factory: Callable[[], Any] | None = None,
                 ge: int | float | None = None, values: type | None = None, sensitive: bool = False) -> None:
        self.types = tuple(type(None) if t is None else t for t in types)
        for t in self.types:
            if t not in _EXACT:
                raise TypeError(f"a fast field takes only {_EXACT}, not {t!r}")
        self.default = default
        self.factory = factory
        self.ge = ge
        self.values = values
        self.sensitive = sensitive

    @property
    def required(self) -> bool:
        return self.default is _MISSING and self.factory is None

    def default_value(self) -> Any:
        # A fresh container each time, as pydantic copies a default for each instance.
        return self.factory() if self.factory is not None else self.copy(self.default)

    def json_type(self) -> str | None:
        """The JSON-Schema type of its first non-null branch (what a
        command-line value is coerced to)."""
        return next((_JSON[t] for t in self.types if t in _JSON), None)

    def fits(self, value: Any) -> bool:
        """Exactly a value the field takes, as it is (no conversion)."""
        t = type(value)
        if t not in self.types:
            return False
        if self.ge is not None and t in (int, float) and not value >= self.ge:  # (NaN is not >= anything)
            return False
        if t is dict:
            return all(type(k) is str for k in value) and (
                self.values is None or all(type(v) is self.values for v in value.values()))
        if t is list:
            return self.values is None or all(type(v) is self.values for v in value)
        return True

    def copy(self, value: Any) -> Any:
        # A schema builds new containers: the document's are never shared.
        t = type(value)
        return dict(value) if t is dict else list(value) if t is list else value


class Arguments(DocView):
    """Arguments read on the fast path: attribute access like the pydantic
    instance they stand for, and its ``model_dump``."""

    def model_dump(self, mode: str = "python", **_: Any) -> dict:
        return _plain(self)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


class LazySchema:
    """A pydantic class named by ``ref`` (``"package.module:Class"``, or a
    function returning the class), imported on first use, with its
    fast-path table ``fields``."""

    def __init__(self, ref: "str | Callable[[], Any]", fields: dict[str, FastField], *, name: str = "") -> None:
        self.ref = ref
        self._name = name or (ref.rpartition(":")[2] if isinstance(ref, str) else "")
        self.fields = dict(fields)
        clash = sorted(k for k in self.fields if hasattr(Arguments, k))
        if clash:  # a DocView would answer with a dict method instead of the field
            raise ValueError(f"{ref}: field name(s) {', '.join(clash)} cannot be read on the fast path")
        self._model: Any = None

    @property
    def __name__(self) -> str:  # noqa: A003 - reads like the class it stands for
        return self._name

    def model(self) -> Any:
        """The pydantic class (imported now)."""
        if self._model is None:
            if callable(self.ref):
                self._model = self.ref()
            else:
                import importlib

                module, _, name = self.ref.partition(":")
                self._model = getattr(importlib.import_module(module), name)
        return self._model

    @property
    def required(self) -> list[str]:
        return [k for k, f in self.fields.items() if f.required]

    @property
    def sensitive(self) -> set[str]:
        return {k for k, f in self.fields.items() if f.sensitive}

    def fast(self, data: Any) -> Arguments | None:
        """``data`` checked and given its defaults, when every key and
        value is exactly what the table allows; None otherwise (then only
        the pydantic class can tell)."""
        if type(data) is not dict:
            return None
        fields = self.fields
        for k, v in data.items():
            f = fields.get(k) if type(k) is str else None
            if f is None or not f.fits(v):
                return None
        out = {}
        for k, f in fields.items():  # in the schema's order, as pydantic's model_dump lists them
            if k in data:
                out[k] = f.copy(data[k])
            elif f.required:
                return None
            else:
                out[k] = f.default_value()
        return Arguments(out)

    def merged(self, base: "LazySchema | None", ref: "Callable[[], Any]", name: str) -> "LazySchema":
        """This schema's fields over ``base``'s (a method's arguments over
        the global ones), its class built by ``ref``."""
        return LazySchema(ref, {**(base.fields if base is not None else {}), **self.fields}, name=name)

    def __repr__(self) -> str:
        return f"LazySchema({self.ref!r})"
