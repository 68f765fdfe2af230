"""Pre-flight checks: what a model type verifies before one of its mutating
methods runs ("the target exists", "the credentials work"). A type declares
them with ``@mytype.check(...)``, in the same style as its methods::

    @counter.check(description="the counter file's directory exists")
    def directory_exists(args: Settings, ctx: CheckContext) -> None:
        if not Path(args.path).parent.is_dir():
            raise CheckFailed(f"{Path(args.path).parent} does not exist")

A check runs after the method's arguments are resolved and before the
method, so before anything is written: when one fails, the run stops with
the check's message and nothing (not even an output record) is written. A
check returns None (or True) to pass; it fails by raising ``CheckFailed``
(any other exception fails it too, with the exception's text) or by
returning False or a message. The runner skips every check with
``--skip-checks`` and one of them with ``--skip-check NAME``."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Callable

from swamp.errors import CheckFailed, NotFoundError, SwampError, ValidationError
from swamp.util.names import did_you_mean
from swamp.util.plain import Plain
from swamp.vault.redact import redact_text

if TYPE_CHECKING:
    from swamp.repo.context import Repo

#: the method kinds a check applies to unless it names its methods
READ_KINDS = ("read", "list")
CHECK_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")


class CheckSpec(Plain):
    __slots__ = ("name", "fn", "description", "methods")

    def __init__(self, name: str, fn: Callable[..., Any], description: str,
                 methods: tuple[str, ...] | None = None) -> None:
        self.name, self.fn, self.description = name, fn, description
        #: the methods it guards; None: every mutating method (kind not read/list)
        self.methods = methods

    def applies_to(self, method: str, kind: str) -> bool:
        if self.methods is not None:
            return method in self.methods
        return kind not in READ_KINDS


class CheckContext:
    """What a check may look at: the model, the method about to run, the
    latest content of the model's own data; and a log. It cannot write."""

    def __init__(self, repo: Repo, definition, model_type, method: str, data) -> None:
        self.repo = repo
        self.definition = definition
        self.model_type = model_type
        self.method_name = method
        self._data = data
        self.messages: list[str] = []

    @property
    def model_name(self) -> str:
        return self.definition.name

    def log(self, message: str) -> None:
        self.messages.append(str(message))

    def resolve_secrets(self, value: Any) -> Any:
        """Vault references in ``value`` resolved (for "the credentials work")."""
        from swamp.models import secrets

        return secrets.resolve(self.repo, value)

    def read(self, name: str) -> bytes | None:
        """The latest version of this model's data ``name`` (None: none yet)."""
        try:
            record = self._data.get(self.definition.type, self.definition.id, name)
        except NotFoundError:
            return None
        return self._data.content(record)


def declare(type_name: str, existing: dict[str, CheckSpec], fn, name: str | None, description: str,
            methods) -> CheckSpec:
    """A check as ``ModelType.check`` declares it, its name and signature checked."""
    import inspect

    cname = name or getattr(fn, "__name__", "")
    if not CHECK_NAME_RE.match(cname or ""):
        raise ValidationError(f"{type_name}: check name {cname!r} must match {CHECK_NAME_RE.pattern}")
    if cname in existing:
        raise ValidationError(f"{type_name}: check {cname!r} is declared twice")
    if not callable(fn):
        raise ValidationError(f"{type_name}: check {cname!r} is not a function")
    try:
        inspect.signature(fn).bind(None, None)
    except TypeError:
        raise ValidationError(f"{type_name}: check {cname!r} must take two arguments (args, ctx)",
                              hint=f"def {cname}(args: Settings, ctx: CheckContext) -> None") from None
    except ValueError:
        pass
    if isinstance(methods, str):
        methods = (methods,)
    spec = CheckSpec(cname, fn, description or (fn.__doc__ or "").strip(),
                     tuple(methods) if methods is not None else None)
    return spec


def for_method(model_type, method: str) -> list[CheckSpec]:
    """The checks that guard ``method``, sorted by name."""
    spec = model_type.methods[method]
    checks = getattr(model_type, "checks", {}) or {}
    return [c for _, c in sorted(checks.items()) if c.applies_to(method, spec.kind)]


def describe(model_type, method: str | None = None) -> dict:
    checks = getattr(model_type, "checks", {}) or {}
    out = {}
    for name, c in sorted(checks.items()):
        if method is not None and not c.applies_to(method, model_type.methods[method].kind):
            continue
        guarded = sorted(m for m, spec in model_type.methods.items() if c.applies_to(m, spec.kind))
        out[name] = {"description": c.description, "methods": guarded}
    return out


def check_skips(model_type, method: str, skip: set[str] | frozenset[str]) -> None:
    """``--skip-check NAME`` must name a check of the type: a typo would
    otherwise run the very check it meant to skip, or skip nothing silently."""
    checks = getattr(model_type, "checks", {}) or {}
    for name in sorted(skip):
        if name not in checks:
            raise NotFoundError(
                f"model type {model_type.type!r} has no pre-flight check {name!r}",
                hint=did_you_mean(name, checks)
                or (f"its checks: {', '.join(sorted(checks))}" if checks else "it declares no checks"))


def run_checks(repo: Repo, data, prepared, *, skip_all: bool = False, skip=frozenset()) -> list[dict]:
    """Run the checks guarding the prepared method, in name order; raise
    ``CheckFailed`` at the first that fails. Returns what each one did."""
    model_type, method, definition = prepared.model_type, prepared.method, prepared.definition
    results: list[dict] = []
    for check in for_method(model_type, method):
        if skip_all or check.name in skip:
            results.append({"name": check.name, "status": "skipped"})
            continue
        ctx = CheckContext(repo, definition, model_type, method, data)
        message = None
        try:
            outcome = check.fn(prepared.args, ctx)
        except CheckFailed as e:
            message = e.message
        except SwampError as e:
            message = e.message
        except Exception as e:  # the check's own failure fails it, with what it raised
            message = f"{type(e).__name__}: {e}"
        else:
            if outcome is False:
                message = ctx.messages[-1] if ctx.messages else "the check returned False"
            elif isinstance(outcome, str) and outcome:
                message = outcome
        if message is not None:
            raise CheckFailed(
                redact_text(f"pre-flight check {check.name!r} failed before {definition.name}.{method}: "
                            f"{message}"),
                hint=f"nothing was run or written; fix it and run again, or skip this check with "
                     f"--skip-check {check.name} (every check: --skip-checks)")
        results.append({"name": check.name, "status": "passed"})
    return results
