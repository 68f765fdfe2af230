"""`${{ }}` templates and CEL expressions behind one small API (api.py).
Importing this package does not load the CEL engine."""

from swamp.expr.api import (
    NAMESPACES,
    ROOTS,
    DataProvider,
    ExprContext,
    VaultProvider,
    evaluate,
    predicate,
    render,
    validate,
)
from swamp.expr.errors import ExpressionError
from swamp.expr.template import find_expressions, has_expressions

__all__ = [
    "NAMESPACES", "ROOTS", "DataProvider", "ExprContext", "ExpressionError", "VaultProvider",
    "evaluate", "find_expressions", "has_expressions", "predicate", "render", "validate",
]
