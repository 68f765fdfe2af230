"""The object store's errors, importable from here (and from ``base.py``) as
before: they are defined, with every other error, in ``swamp/errors.py``."""

from swamp.errors import (BackendRefused, ObjectNotFound, ObjectStoreError, PreconditionFailed,  # noqa: F401
                          SourceChanged, TransientError)
