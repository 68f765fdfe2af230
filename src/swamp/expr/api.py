"""The expression API the rest of swamp uses. The CEL engine behind it is
imported only when something is compiled or evaluated, and can be swapped
without touching callers.

- ``render(value, ctx)``: every `${{ }}` in a nested value. A string that is
  exactly one expression takes the expression's native type; expressions
  embedded in text print as JSON would, strings bare.
- ``evaluate(expression, ctx)``: one bare CEL expression.
- ``validate(value)``: compile-only check, for `validate` commands.
- ``predicate(text, names)``: a compiled filter over records whose fields are
  the variables (`data query`).

Results are plain JSON-like Python values: None, bool, int, float, str,
list, dict. Timestamps become RFC 3339 strings, durations CEL's `"90s"` form,
bytes base64 text."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping

from swamp.errors import ExpressionError
from swamp.expr import template
from swamp.expr.context import ExprContext


def evaluate(expression: str, ctx: ExprContext, *, source: str | None = None,
             field: str | None = None) -> Any:
    from swamp.expr import cel

    try:
        return cel.Session(ctx).evaluate(expression)
    except ExpressionError as e:
        raise e.located(source=source, field=field) from e.__cause__


def render(value: Any, ctx: ExprContext, *, source: str | None = None, field: str | None = None) -> Any:
    """A copy of ``value`` with every template string rendered; ``field`` is
    the path of ``value`` in its document, for error messages."""
    if not template.has_expressions(value):
        return value
    from swamp.expr import cel

    session = cel.Session(ctx)

    def one(expr: template.Expr, _template: str, path: str) -> Any:
        try:
            return session.evaluate(expr.text)
        except ExpressionError as e:
            raise e.located(source=source, field=path or None) from e.__cause__

    try:
        return template.render(value, one, field or "")
    except template.TemplateSyntaxError as e:
        raise _syntax_error(e, source) from None


def validate(value: Any, *, source: str | None = None, field: str | None = None) -> list[ExpressionError]:
    """Compile every expression in ``value`` (a template string or a nested
    value) without evaluating; returns the errors, in document order."""
    from swamp.expr import cel

    errors: list[ExpressionError] = []
    for path, text in template.iter_templates(value, field or ""):
        try:
            segments = template.parse(text)
        except template.TemplateSyntaxError as e:
            e.path = path
            errors.append(_syntax_error(e, source))
            continue
        for seg in segments:
            if isinstance(seg, template.Expr):
                try:
                    cel.compile_program(seg.text)
                except ExpressionError as e:
                    errors.append(e.located(source=source, field=path or None))
    return errors


def predicate(text: str, names: Iterable[str], *, source: str | None = None,
              missing_is_false: bool = False) -> Callable[[Mapping[str, Any]], bool]:
    """Compile a boolean CEL expression over records whose fields ``names``
    are the variables; the result tests one record. ``missing_is_false``:
    a record lacking a key the expression reads does not match."""
    from swamp.expr import cel

    known = tuple(sorted(set(names)))
    try:
        return cel.compile_predicate(text, known, missing_is_false=missing_is_false)
    except ExpressionError as e:
        err = e.located(source=source)
        if "undeclared reference" in err.message:
            err.hint = f"known fields: {', '.join(known)}"  # a predicate sees its record's fields, nothing else
        raise err from e.__cause__


def _syntax_error(e: template.TemplateSyntaxError, source: str | None) -> ExpressionError:
    # Position within the field's string, 1-based, with the usual caret.
    before = e.template[: e.position]
    line = before.count("\n") + 1
    column = e.position - (before.rfind("\n") + 1) + 1
    text_line = e.template.splitlines()[line - 1] if e.template else ""
    snippet = f" | {text_line}\n | {'.' * (column - 1)}^"
    return ExpressionError(str(e), source=source, field=e.path or None, line=line, column=column,
                           snippet=snippet)
