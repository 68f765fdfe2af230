"""Where everything lives in the remote namespace (SYNC.md "Remote layout").

Only ``log/``, ``checkpoints/`` and ``format.json`` are authoritative; blobs
are content-addressed and leases are coordination, not state.
"""

from __future__ import annotations

import re

from swamp.util.names import check_name

FORMAT_VERSION = 3
#: the first format whose readers take contents inline from commit records
#: (commitlog.py); a remote set up with an older one gets blobs only
INLINE_FORMAT = 2
#: the first format whose commit records name their parent's id (and say
#: so with ``"format"``); a record without it is an older one, read as before
CHAIN_FORMAT = 3
SEQ_DIGITS = 20
_LOG_RE = re.compile(r"^(\d{%d})\.json$" % SEQ_DIGITS)
_CKPT_RE = re.compile(r"^(\d{%d})\.json\.gz$" % SEQ_DIGITS)
SHA_RE = re.compile(r"^[0-9a-f]{64}$")


class Layout:
    def __init__(self, namespace: str = "default") -> None:
        self.namespace = check_name(namespace, "namespace")
        root = f"{namespace}/"
        self.format_key = root + "format.json"
        #: the remote's identity, written once (create-only) when it is set up
        self.identity_key = root + "identity.json"
        self.log_prefix = root + "log/"
        self.checkpoint_prefix = root + "checkpoints/"
        self.blob_prefix = root + "blobs/"
        self.lease_prefix = root + "leases/"
        self.gc_mark_key = root + "gc/mark.json"
        #: written by gc to read the server's clock (its Last-Modified)
        self.gc_clock_key = root + "gc/clock"

    def blob(self, sha256: str) -> str:
        return f"{self.blob_prefix}{sha256[:2]}/{sha256}"

    def blob_sha(self, key: str) -> str | None:
        sha = key.rsplit("/", 1)[-1]
        return sha if key.startswith(self.blob_prefix) and SHA_RE.match(sha) else None

    def log(self, seq: int) -> str:
        return f"{self.log_prefix}{seq:0{SEQ_DIGITS}d}.json"

    def log_seq(self, key: str) -> int | None:
        m = _LOG_RE.match(key[len(self.log_prefix):]) if key.startswith(self.log_prefix) else None
        return int(m.group(1)) if m else None

    def checkpoint(self, seq: int) -> str:
        return f"{self.checkpoint_prefix}{seq:0{SEQ_DIGITS}d}.json.gz"

    def checkpoint_seq(self, key: str) -> int | None:
        m = _CKPT_RE.match(key[len(self.checkpoint_prefix):]) if key.startswith(self.checkpoint_prefix) else None
        return int(m.group(1)) if m else None

    def lease(self, name: str) -> str:
        # One object per lease even when the name has slashes (model/<type>/<id>).
        from urllib.parse import quote  # here: only leases need it (urllib.parse costs a pull ~2 ms)

        return self.lease_prefix + quote(name, safe="")

    def lease_name(self, key: str) -> str:
        from urllib.parse import unquote

        return unquote(key[len(self.lease_prefix):])
