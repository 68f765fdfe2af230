"""ExpressionError: what went wrong, in which file and field, in which
expression, and where in it."""

from __future__ import annotations

from swamp.errors import SwampError


class ExpressionError(SwampError):
    """``detail`` is the engine's reason; ``snippet`` the expression with a
    caret under ``line``:``column`` (both 1-based, within the expression)
    when the position is known."""

    code = "expression"

    def __init__(
        self,
        detail: str,
        *,
        expression: str | None = None,
        source: str | None = None,
        field: str | None = None,
        line: int | None = None,
        column: int | None = None,
        snippet: str | None = None,
        hint: str | None = None,
    ):
        self.detail = detail
        self.expression = expression
        self.source = source
        self.field = field
        self.line = line
        self.column = column
        self.snippet = snippet
        super().__init__(self._compose(), hint=hint)

    def located(self, *, source: str | None = None, field: str | None = None,
                expression: str | None = None) -> "ExpressionError":
        """The same error with the location filled in where it was missing
        (and its code: ``forbidden`` when a namespace refused the caller)."""
        err = ExpressionError(
            self.detail,
            expression=self.expression or expression,
            source=self.source or source,
            field=self.field or field,
            line=self.line,
            column=self.column,
            snippet=self.snippet,
            hint=self.hint,
        )
        err.code = self.code
        return err

    def _compose(self) -> str:
        where = ": ".join(p for p in (self.source, self.field) if p)
        text = f"{where}: " if where else ""
        if self.expression is not None:
            text += f"${{{{ {self.expression} }}}}: "
        if self.line is not None and self.column is not None:
            text += f"{self.line}:{self.column}: "
        text += self.detail
        if self.snippet:
            text += "\n" + self.snippet
        return text
