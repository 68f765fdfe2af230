"""The sync protocol of SYNC.md: a local cache directory shared with a team
through an object store. ``SyncEngine`` is the entry point.

The names below load on first use, so that importing a light module of this
package (``counts``) does not load the engine and its object-store client."""

import importlib

_EXPORTS = {
    "SyncEngine": "engine",
    "PathClass": "rules",
    "PathRules": "rules",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
