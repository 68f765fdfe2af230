"""The sync engine's own errors, importable from here as before: they are
defined, with every other error, in ``swamp/errors.py``."""

from swamp.errors import CorruptRemoteError, SyncConflictError  # noqa: F401
