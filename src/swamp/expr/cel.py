"""The adapter to cel-expr-python, and the only module that imports it.

One Env per process, built on first use (and again when a namespace is
registered since): roots declared DYN, each registered namespace declared as
a map receiver (a DYN receiver does not dispatch member functions), the
strings, math, encoders, optional and bindings extensions. Compiled programs
are cached by text.

cel-expr-python 0.1.3 binds function implementations when the Env is
built (per-evaluation bindings are declared in its API but do not resolve),
so the implementations are fixed dispatchers that find the caller's
providers in a ContextVar set for the duration of each evaluation."""

from __future__ import annotations

import base64
import datetime as _dt
import os
import re
import threading
from contextvars import ContextVar
from functools import lru_cache
from typing import Any, Callable, Mapping, NamedTuple

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_encoders, ext_math, ext_optional, ext_strings

from swamp.errors import ExpressionError
from swamp.expr.context import ROOTS, ExprContext
from swamp.expr.namespaces import Function, Namespace, registered

_DYN, _STR, _INT = cel.Type.DYN, cel.Type.STRING, cel.Type.INT
_RECEIVER = cel.Type.Map(_STR, _DYN)
_LIST, _MAP, _ERROR = cel.Type.LIST, cel.Type.MAP, cel.Type.ERROR
# Static result types whose plain_value() is already the final Python value.
_SCALARS = frozenset({"STRING", "INT", "UINT", "BOOL", "DOUBLE", "NULL"})


class _Call:
    """Providers and provider failures of one evaluation."""

    __slots__ = ("providers", "errors")

    def __init__(self, ctx: ExprContext):
        self.providers = ctx.providers
        self.errors: list[BaseException] = []


_current: ContextVar[_Call | None] = ContextVar("swamp_expr_call", default=None)


def _failing(call: _Call | None, exc: BaseException) -> BaseException:
    # CEL turns an exception in a function into an error value carrying only
    # its text; keep the exception so the caller gets it back as the cause.
    if call is not None:
        call.errors.append(exc)
    return exc


# Each namespace is a variable holding this marker, of one map type shared by
# all namespaces (a DYN receiver does not dispatch member functions); a call
# finds its namespace's function by the marker.
_MARKER = "$namespace"  # a key no model (nor anything a namespace variable holds) can be named
_TYPES = {"string": _STR, "int": _INT, "bool": cel.Type.BOOL, "double": cel.Type.DOUBLE,
          "list": _LIST, "map": _MAP, "dyn": _DYN}


def _dispatcher(name: str, params: tuple[str, ...],
                table: Mapping[tuple[str, str, tuple[str, ...]], Function]) -> Callable[..., Any]:
    def impl(receiver: Any, *args: Any) -> Any:
        call = _current.get()
        namespace = receiver.get(_MARKER) if isinstance(receiver, dict) else None
        try:
            fn = table.get((namespace, name, params))
            if fn is None:
                raise ExpressionError(f"{namespace}.{name}() does not exist")
            provider = call.providers.get(namespace) if call else None
            return fn.call(provider, *args)
        except Exception as e:
            raise _failing(call, e)

    return impl


def _declarations(namespaces: tuple[Namespace, ...]) -> list:
    table = {(ns.name, f.name, f.params): f for ns in namespaces for f in ns.functions}
    returns: dict[tuple[str, tuple[str, ...]], set[str]] = {}
    for _ns, name, params in table:
        returns.setdefault((name, params), set()).add(table[(_ns, name, params)].returns)
    overloads: dict[str, list] = {}
    for (name, params), types in sorted(returns.items()):
        rtype = _TYPES[types.pop()] if len(types) == 1 else _DYN
        overloads.setdefault(name, []).append(cel.Overload(
            f"swamp_{name}_{'_'.join(params) or 'none'}", return_type=rtype,
            parameters=[_RECEIVER, *(_TYPES[p] for p in params)], is_member=True,
            impl=_dispatcher(name, params, table)))
    return [cel.FunctionDecl(name, ovs) for name, ovs in overloads.items()]


def _extensions() -> list:
    return [ext_strings.ExtStrings(), ext_math.ExtMath(), ext_encoders.ExtEncoders(),
            ext_optional.ExtOptional(), ext_bindings.ExtBindings()]


_env_lock = threading.Lock()
_envs: dict[tuple[str, ...] | None, Any] = {}
# The registered namespaces the main Env was built with.
_built: tuple[int, tuple[Namespace, ...]] = (-1, ())


def _env(names: tuple[str, ...] | None = None) -> Any:
    """The main Env (``names`` None), or a plain one whose variables are
    ``names`` (record predicates). The main Env is rebuilt when a namespace
    was registered since it was built."""
    global _built
    if names is None and registered()[0] != _built[0]:
        with _env_lock:
            current = registered()
            if current[0] != _built[0]:
                variables = {**{r: _DYN for r in ROOTS}, **{ns.name: _RECEIVER for ns in current[1]}}
                _envs[None] = cel.NewEnv(variables=variables, extensions=_extensions(),
                                         functions=_declarations(current[1]))
                _built = current
                compile_program.cache_clear()
    env = _envs.get(names)
    if env is None:
        with _env_lock:
            env = _envs.get(names)
            if env is None:
                env = _envs[names] = cel.NewEnv(variables={n: _DYN for n in names}, extensions=_extensions())
    return env


class Program(NamedTuple):
    expr: Any  # cel.Expression
    text: str
    scalar: bool  # the checked result type is a primitive
    # Optionals can hide inside dyn values; converting those with
    # plain_value() crashes the library, so such results are walked.
    careful: bool
    # Copying os.environ costs more than an evaluation: only when named.
    uses_env: bool


_STRING_LITERAL = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_HYPHENATED_MODEL = re.compile(r"(?<![\w.])model\.([a-z0-9][a-z0-9_]*(?:-[a-z0-9_]+)+)")


def _brackets(text: str) -> str:
    """``model.my-model.x`` read as upstream does, ``model["my-model"].x``
    (a model name may hold hyphens; subtracting from a model's map means
    nothing). String literals are left alone."""
    if "model." not in text or "-" not in text:
        return text
    out, pos = [], 0
    for m in _STRING_LITERAL.finditer(text):
        out.append(_HYPHENATED_MODEL.sub(r'model["\1"]', text[pos:m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(_HYPHENATED_MODEL.sub(r'model["\1"]', text[pos:]))
    return "".join(out)


def _null_safe(text: str) -> str:
    """``x.?a.?b.orValue(d)`` gives ``d`` when ``x`` is null too, as upstream
    users expect of `data.latest(m, 'missing').?attributes...` (CEL itself
    has no optional selection on null): the operand before the first
    ``.?`` of a chain becomes ``optional.ofNonZeroValue(x)``."""
    if ".?" not in text:
        return text
    literals = [(m.start(), m.end()) for m in _STRING_LITERAL.finditer(text)]

    def in_literal(i: int) -> bool:
        return any(a <= i < b for a, b in literals)

    out = text
    pos = len(text)
    # Right to left, so earlier offsets stay valid as text is inserted.
    starts = [m.start() for m in re.finditer(r"\.\?", text) if not in_literal(m.start())]
    wraps = []
    for at in starts:
        start = _operand_start(text, at)
        if start is None or ".?" in text[start:at]:
            continue  # not the first of its chain: the first one's wrap covers it
        if text[start:at].startswith("optional."):
            continue
        wraps.append((start, at))
    for start, at in sorted(wraps, reverse=True):
        if at > pos:
            continue
        out = out[:start] + "optional.ofNonZeroValue(" + out[start:at] + ")" + out[at:]
        pos = start
    return out


def _operand_start(text: str, end: int) -> int | None:
    """Where the postfix expression ending at ``end`` starts: identifiers
    joined by dots, calls and indexes (``data.latest('m', 'n')``)."""
    i = end
    while i > 0:
        c = text[i - 1]
        if c in ")]":
            depth, opener = 0, "(" if c == ")" else "["
            j = i - 1
            while j >= 0:
                if text[j] == c:
                    depth += 1
                elif text[j] == opener:
                    depth -= 1
                    if depth == 0:
                        break
                j -= 1
            if j < 0:
                return None
            i = j
            continue
        if c.isalnum() or c == "_":
            while i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_"):
                i -= 1
            if i > 0 and text[i - 1] == ".":
                i -= 1
                continue
            if i > 1 and text[i - 2:i] == ".?":
                i -= 2
                continue
            return i
        return i if i < end else None
    return i if i < end else None


@lru_cache(maxsize=4096)
def compile_program(text: str, names: tuple[str, ...] | None = None) -> Program:
    try:
        expr = _env(names).compile(_null_safe(_brackets(text)) if names is None else _null_safe(text))
    except RuntimeError as e:
        raise _compile_error(str(e), text) from None
    rtype = expr.return_type().name()
    if "optional_type" in rtype:
        raise ExpressionError("the result is an optional value", expression=text,
                              hint="unwrap it with .orValue(default) or .value()")
    careful = "?" in text or "optional" in text
    return Program(expr, text, rtype in _SCALARS, careful, _ENV_NAME.search(text) is not None)


_ENV_NAME = re.compile(r"\benv\b")


class Session:
    """Evaluations sharing one context. Variables are converted for CEL once
    per session, on first use, so a session sees the values they had then."""

    __slots__ = ("ctx", "_activation", "_with_env", "_env")

    def __init__(self, ctx: ExprContext):
        self.ctx = ctx
        self._activation = None
        self._with_env = False
        self._env = None

    def evaluate(self, text: str) -> Any:
        env = _env()
        program = compile_program(text)
        if self._activation is None or self._env is not env or (program.uses_env and not self._with_env):
            data: dict[str, Any] = {}
            if program.uses_env:
                if "env" not in self.ctx.variables:
                    data["env"] = dict(os.environ)
                self._with_env = True
            data.update(self.ctx.variables)
            for ns in _built[1]:
                # A namespace may also be a root variable (`model.NAME` beside
                # `model.method(...)`): its map carries the marker too.
                value = data.get(ns.name)
                data[ns.name] = {**value, _MARKER: ns.name} if isinstance(value, dict) else {_MARKER: ns.name}
            self._activation = env.Activation(data)
            self._env = env
        call = _Call(self.ctx)
        token = _current.set(call)
        try:
            result = program.expr.eval(self._activation)
        except RuntimeError as e:
            raise ExpressionError(_clean(str(e)), expression=text, hint=_hint(text)) from None
        finally:
            _current.reset(token)
        return _result(result, program, call)


#: how the CEL engine says a map has no such key (a record without the field)
_MISSING_KEY = re.compile(r"key not found in map|no such key", re.IGNORECASE)


def compile_predicate(text: str, names: tuple[str, ...], *,
                      missing_is_false: bool = False) -> Callable[[Mapping[str, Any]], bool]:
    """With ``missing_is_false``, a record lacking a field the predicate
    reads (``tags.env`` where a record has no ``env`` tag) does not match,
    instead of failing every record's test."""
    program = compile_program(text, names)
    if program.expr.return_type().name() not in ("BOOL", "DYN"):
        raise ExpressionError("a predicate must be true or false", expression=text)

    def test(record: Mapping[str, Any]) -> bool:
        try:
            result = program.expr.eval(data={n: record.get(n) for n in names})
        except RuntimeError as e:
            if missing_is_false and _MISSING_KEY.search(str(e)):
                return False
            raise ExpressionError(_clean(str(e)), expression=text) from None
        if missing_is_false and result.type() == _ERROR and _MISSING_KEY.search(str(result.value())):
            return False
        value = _result(result, program, None)
        if not isinstance(value, bool):
            raise ExpressionError(f"a predicate must be true or false, not {value!r}", expression=text)
        return value

    return test


def _result(value: Any, program: Program, call: _Call | None) -> Any:
    if value.type() == _ERROR:
        raise _eval_error(value, program.text, call)
    if program.scalar:
        return value.plain_value()
    if program.careful:
        return _walk(value, program.text)
    return _jsonable(value.plain_value())


def _walk(value: Any, text: str) -> Any:
    t = value.type()
    if t == _LIST:
        return [_walk(v, text) for v in value.value()]
    if t == _MAP:
        return {_jsonable(k): _walk(v, text) for k, v in value.value().items()}
    if t == _ERROR:
        raise _eval_error(value, text, None)
    return _jsonable(value.plain_value())


def _eval_error(value: Any, text: str, call: _Call | None) -> ExpressionError:
    try:
        message = value.value()
    except TypeError:
        # An optional reached the result through a dyn value.
        return ExpressionError("the result holds an optional value", expression=text,
                               hint="unwrap it with .orValue(default) or .value()")
    detail = _clean(str(message))
    for exc in call.errors if call else ():
        if str(exc) and str(exc) in detail:
            hint = getattr(exc, "hint", None)
            if isinstance(exc, ExpressionError):
                detail = exc.detail
            else:
                detail = getattr(exc, "message", None) or str(exc)
            err = ExpressionError(detail, expression=text, hint=hint)
            if getattr(exc, "code", None) == "forbidden":  # a namespace refused the caller: a 403, not a bad expression
                err.code = "forbidden"
            err.__cause__ = exc
            return err
    return ExpressionError(detail, expression=text, hint=_hint(text))


def _jsonable(value: Any) -> Any:
    """The value with what JSON cannot hold (timestamps, durations, bytes,
    types) turned into text; the very same object when nothing needs it."""
    return _convert(value) if _needs_conversion(value) else value


def _needs_conversion(value: Any) -> bool:
    if isinstance(value, (str, bool, int, float)) or value is None:
        return False
    if isinstance(value, dict):
        return any(_needs_conversion(k) or _needs_conversion(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_needs_conversion(v) for v in value)
    return True


def _convert(value: Any) -> Any:
    if isinstance(value, dict):
        return {_convert(k): _convert(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_convert(v) for v in value]
    if isinstance(value, _dt.datetime):
        return _timestamp_text(value)
    if isinstance(value, _dt.timedelta):
        return _duration_text(value)
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, cel.Type):
        return value.name().lower()
    return value


def _timestamp_text(ts: _dt.datetime) -> str:
    if ts.tzinfo is not None:
        ts = ts.astimezone(_dt.timezone.utc).replace(tzinfo=None)
    text = ts.isoformat(timespec="microseconds" if ts.microsecond else "seconds")
    if ts.microsecond:
        text = text.rstrip("0")
    return text + "Z"


def _duration_text(d: _dt.timedelta) -> str:
    # CEL's own string(duration): seconds with a fraction only when needed.
    seconds = d.total_seconds()
    return f"{seconds:.9f}".rstrip("0").rstrip(".") + "s"


_STATUS = re.compile(r"^[A-Z_]+: ")
_STATUS_TAIL = re.compile(r"\s*\[[A-Z_]+\]\s*$")
_POSITION = re.compile(r"ERROR: <input>:(\d+):(\d+): ")


def _clean(message: str) -> str:
    message = _STATUS_TAIL.sub("", _STATUS.sub("", message.strip()))
    message = message.replace(" (in container '')", "")
    m = re.match(r'No value with name "([^"]+)" found in Activation', message)
    if m:
        return f"{m.group(1)!r} is not available here"
    return message


def _compile_error(message: str, text: str) -> ExpressionError:
    message = _clean(message)
    # [before, line, column, body, line, column, body, ...]: one triple per error.
    parts = _POSITION.split(message)
    if len(parts) < 4:
        return ExpressionError(message, expression=text, hint=_hint(text, message))
    line, column, body = int(parts[1]), int(parts[2]), parts[3]
    detail, _, snippet = body.partition("\n")
    others = (len(parts) - 1) // 3 - 1
    if others:
        detail += f" (and {others} more error{'s' if others > 1 else ''})"
    return ExpressionError(detail.strip(), expression=text, line=line, column=column,
                           snippet=snippet.rstrip() or None, hint=_hint(text, detail))


_HYPHEN_NAME = re.compile(r"\b(model|steps|inputs|self)\.([A-Za-z_]\w*-[\w-]+)")
_FUNCTION_NAME = re.compile(r"(?:undeclared reference to|no matching overload for) '(\w+)'")


def _hint(text: str, detail: str = "") -> str | None:
    m = _HYPHEN_NAME.search(text)
    if m:
        return f"a name with hyphens needs brackets: {m.group(1)}[\"{m.group(2)}\"]"
    namespaces = registered()[1]
    m = _FUNCTION_NAME.search(detail)
    if m:
        usage = [f.usage for ns in namespaces for f in ns.functions if f.name == m.group(1) and f.usage]
        if usage:
            return f"usage: {' or '.join(dict.fromkeys(usage))}"
    if "undeclared reference" in detail:
        names = " and ".join(ns.name for ns in namespaces)
        return f"expressions can use {', '.join(ROOTS)}" + (f" and the functions of {names}" if names else "")
    return None
