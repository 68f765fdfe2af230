"""`${{ }}` templates and CEL expressions behind one small API (api.py).
The namespaces of functions (`data.*`, `vault.*`) belong to the packages
that serve them, which register them (namespaces.py). Importing this package
does not load the CEL engine."""

from swamp.errors import ExpressionError
from swamp.expr.api import ExprContext, evaluate, predicate, render, validate
from swamp.expr.namespaces import Function, Namespace, register_namespace
from swamp.expr.template import has_expressions

__all__ = [
    "ExprContext", "ExpressionError", "Function", "Namespace", "evaluate", "has_expressions", "predicate", "register_namespace", "render", "validate",
]
