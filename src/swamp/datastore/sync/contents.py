"""The committed content of a path (its base), wherever it is kept: its
blob, or the record that carries it inline; that commit trimmed by gc
since, a later checkpoint carries it."""

from __future__ import annotations

from . import checkpoint, commitlog
from .blobs import fetch_blob
from .counting import Session
from .errors import CorruptRemoteError
from .layout import Layout
from .state import Base


def committed_content(s: Session, layout: Layout, rel: str, base: Base) -> bytes:
    """The bytes of ``base`` (CorruptRemoteError when no record carries
    them any more: the path changed and the old content was trimmed)."""
    if not base.src:
        return fetch_blob(s, layout, base.sha256)
    kind, _, seq = base.src.partition(":")
    try:
        if kind == "log":
            commit = commitlog.fetch_one(s, layout, int(seq))
            data = next((c.inline for c in commit.changes if c.sha256 == base.sha256 and c.inline is not None),
                        None)
            if data is not None:
                s.add(bytesPulled=len(data))
                return data
    except CorruptRemoteError:
        pass  # trimmed: a checkpoint carries it
    for ck in reversed(checkpoint.seqs(s, layout)):
        try:
            tree, _rejected = checkpoint.fetch(s, layout, ck)
        except CorruptRemoteError:
            continue  # trimmed meanwhile
        entry = tree.get(rel)
        if entry is not None and entry[0] == base.sha256 and entry[2] is not None:
            s.add(bytesPulled=len(entry[2]))
            return entry[2]
    raise CorruptRemoteError(f"the content of {rel} ({base.sha256}) is in no record of {s.name} any more",
                             hint="run 'swamp datastore verify'")
