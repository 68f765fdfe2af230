"""Nothing swamp writes is writable by the group or by others, whatever the
umask it was started with.

A permissive umask (000 on many CI runners and container entrypoints,
002 on shared hosts) would otherwise make run records, output records,
data, logs, caches, the audit logs and serve's token files writable by
any local user, who could then change what a peer reads back, or plant
what a later command trusts. Rather than give a mode at each of the many
places that create files and folders (swamp's own writers, SQLite,
ruamel.yaml, pip, the libraries a model type uses), each entry point
(``swamp`` itself, which serve and ``worker start`` run under, and a
step run on a Dask worker) adds group and other write to the process's
umask first: 000 and 002 become 022, 022 and 077 are kept. Commands a
step starts inherit it, so what they create is not writable by others
either (a command that means to share a folder with its group sets its
own umask). Files that must be private (secrets, keys, tokens) are still
created 0600 explicitly."""

from __future__ import annotations

import os

#: the umask bits every swamp process keeps: group write, other write
NOT_WRITABLE_BY_OTHERS = 0o022


def restrict_umask() -> int:
    """Add NOT_WRITABLE_BY_OTHERS to this process's umask; returns the
    umask it had. Process-wide and idempotent (it only adds bits)."""
    before = os.umask(NOT_WRITABLE_BY_OTHERS)  # the only way to read it is to set it: set it back at once
    os.umask(before | NOT_WRITABLE_BY_OTHERS)
    return before
