"""The sync protocol of SYNC.md: a local cache directory shared with a team
through an object store. ``SyncEngine`` is the entry point."""

from .engine import SyncEngine
from .errors import CorruptRemoteError, SyncConflictError
from .pathclass import PathClass, classify, register_mergeable

__all__ = ["SyncEngine", "SyncConflictError", "CorruptRemoteError", "PathClass", "classify", "register_mergeable"]
