"""swamp: reviewable, repeatable automation for people and AI agents.

The names extension writers import (``from swamp import ModelType, Context``)
are loaded lazily so that ``swamp --help`` does not pay for pydantic.
"""

__version__ = "0.1.0"

_LAZY = {
    "ModelType": "swamp.models.api",
    "Context": "swamp.models.context",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'swamp' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


__all__ = ["ModelType", "Context", "__version__"]
