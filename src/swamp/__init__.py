"""swamp: reviewable, repeatable automation for people and AI agents.

The names extension writers import (``from swamp import ModelType, Context``)
are loaded lazily so that ``swamp --help`` does not pay for pydantic.
"""

__version__ = "0.1.0"

_LAZY = {
    "ModelType": "swamp.models.api",
    "Context": "swamp.models.context",
    "CheckFailed": "swamp.errors",
    "CheckContext": "swamp.models.checks",
    "ReportType": "swamp.reports.api",
    "Report": "swamp.reports.api",
    "ReportContext": "swamp.reports.api",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'swamp' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


__all__ = ["ModelType", "Context", "CheckFailed", "CheckContext", "ReportType", "Report", "ReportContext",
           "__version__"]
