"""`${{ }}` templates and CEL expressions behind one small API (api.py).
The namespaces of functions (`data.*`, `vault.*`) belong to the packages
that serve them, which register them (namespaces.py). Importing this package
does not load the CEL engine."""

from swamp.expr.api import ROOTS, ExprContext, evaluate, predicate, render, validate
from swamp.expr.errors import ExpressionError
from swamp.expr.namespaces import Function, Namespace, register_namespace
from swamp.expr.template import find_expressions, has_expressions

__all__ = [
    "ROOTS", "ExprContext", "ExpressionError", "Function", "Namespace", "evaluate", "find_expressions",
    "has_expressions", "predicate", "register_namespace", "render", "validate",
]
