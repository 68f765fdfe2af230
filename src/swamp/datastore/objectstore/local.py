"""A directory as an object store: correct with several processes writing at
once, also on a directory shared over a network filesystem (NFS).

Layout: key ``a/b`` lives in the directory ``<root>/a/b#/``. Each segment is
percent-escaped and '#' is always escaped, so an object directory never
collides with a prefix directory (keys ``a`` and ``a/b`` can both exist).

That directory holds the key's *generations*: files named by a 20-digit
number, each written once and never changed. The highest one is the current
state: a body, or a tombstone left by a delete. Every write, conditional or
not, ends in one create-only step: ``link(temp file, <dir>/<g+1>)`` where g
is the generation the writer read. link() refuses an existing name,
atomically, on local disks and NFS alike, so of all writers that read g
exactly one creates g+1; the others lose, and a conditional write reports
PreconditionFailed. No lock file is involved, so a writer killed at any
instant blocks nobody (it leaves at most a temp file).

ETags are ``<sha256 prefix>-<random nonce>``: every write gets a new ETag,
even one that rewrites identical bytes. An ETag thus names one write, not a
content, and a compare-and-swap can never succeed against a key that was
changed and changed back in between (no A-B-A).

Limits: hard links are required (NFS and local filesystems have them; some
SMB mounts do not), and on a case-insensitive filesystem keys differing only
in case are the same object.
"""

from __future__ import annotations

import contextlib
import json
import os
import urllib.parse
from pathlib import Path
from typing import Iterator, NamedTuple

from swamp.errors import ObjectNotFound, ObjectStoreError, PreconditionFailed, TransientError
from swamp.util.atomic import fsync_dir
from swamp.util.digest import sha256_hex
from swamp.util.ids import uuid4_hex

from .base import ObjectMeta, ObjectStore, check_key
from .streams import COPY_CHUNK, Download, HashingWriter, finish_dest, open_dest

_FSYNC = os.environ.get("SWAMP_FSYNC", "1") != "0"
_OBJECT_SUFFIX = "#"
_TMP_PREFIX = ".tmp-"
# Superseded generations are removed only once this much older than the
# newest one. A writer that read generation g-1 and then stalled must still
# find g on disk so that its link(g) fails; if g were gone, the name could be
# created a second time. Writers slower than this are caught afterwards by
# _confirm().
KEEP_SUPERSEDED_S = 60.0
# Temp files of writers that died mid-write are swept after this long.
TMP_EXPIRY_S = 3600.0
# Where the ETag starts in a generation's header line ('{"etag": "...').
_ETAG_AT = len('{"etag": "')


class _Conflict(Exception):
    """Another writer created the generation we meant to create."""


class _Mismatch(Exception):
    """The file copied in does not hash to what its caller said."""


class _Version(NamedTuple):
    gen: int
    etag: str
    parent: str | None
    deleted: bool
    size: int
    mtime: float
    body: bytes | None


def _gen_name(gen: int) -> str:
    return f"{gen:020d}"


def _generations(directory: Path) -> list[int]:
    try:
        names = os.listdir(directory)
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(int(n) for n in names if n.isascii() and n.isdigit())


def _read_version(path: Path, gen: int, *, body: bool) -> _Version:
    with open(path, "rb") as f:
        line = f.readline()
        header = json.loads(line)
        st = os.fstat(f.fileno())
        data = f.read() if body else None
    return _Version(gen, header["etag"], header["parent"], header["deleted"],
                    st.st_size - len(line), st.st_mtime, data)


class LocalDirObjectStore(ObjectStore):
    def __init__(self, root: Path | str) -> None:
        self.root = Path(root).resolve()
        self.root.mkdir(parents=True, exist_ok=True)
        self.name = f"file://{self.root}/"

    # ------------------------------------------------------------ mapping
    def _dir(self, key: str) -> Path:
        segs = [urllib.parse.quote(s, safe="") for s in check_key(key).split("/")]
        return self.root.joinpath(*segs[:-1], segs[-1] + _OBJECT_SUFFIX)

    def _current(self, directory: Path, *, body: bool) -> _Version | None:
        # The newest file can be superseded and collected between listdir()
        # and open(); then simply look again.
        for _ in range(100):
            gens = _generations(directory)
            if not gens:
                return None
            try:
                return _read_version(directory / _gen_name(gens[-1]), gens[-1], body=body)
            except FileNotFoundError:
                continue
        raise TransientError(f"{self.name}: {directory} keeps changing under the reader")

    # ------------------------------------------------------------- writes
    def _write(self, directory: Path, cur: _Version | None, data: bytes | Path, *, deleted: bool = False,
               sha256: str | None = None) -> str:
        """Create generation cur+1 holding ``data``: bytes, or the contents
        of a file, copied in pieces (and, given its ``sha256``, refused
        before it becomes visible if the copy does not hash to it)."""
        gen = (cur.gen if cur else 0) + 1
        nonce = uuid4_hex()[:16]
        # A file's hash is known only once it is copied: its header is written
        # with a placeholder of the same width, patched in place afterwards.
        digest = sha256_hex(data)[:16] if isinstance(data, bytes) else "0" * 16
        etag = f"{digest}-{nonce}"
        header = json.dumps({"etag": etag, "parent": cur.etag if cur else None, "deleted": deleted})
        tmp = directory / f"{_TMP_PREFIX}{uuid4_hex()}"
        target = directory / _gen_name(gen)
        try:  # the directory exists but for an object's first write: no mkdir before each write
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileNotFoundError:
            directory.mkdir(parents=True, exist_ok=True)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(header.encode() + b"\n")
                if isinstance(data, bytes):
                    f.write(data)
                else:
                    full = self._copy_in(data, f)
                    if sha256 is not None and full != sha256:
                        raise _Mismatch
                    digest = full[:16]
                    etag = f"{digest}-{nonce}"
                    f.flush()
                    os.pwrite(f.fileno(), digest.encode(), _ETAG_AT)
                f.flush()
                if _FSYNC:
                    os.fsync(f.fileno())
            try:
                os.link(tmp, target)
            except FileExistsError:
                # On NFS a link() whose reply was lost is retransmitted and
                # answers EEXIST although it worked: then our inode has 2 links.
                if os.stat(tmp).st_nlink < 2:
                    raise _Conflict from None
            except OSError as e:
                raise ObjectStoreError(
                    f"{self.name}: cannot hard-link in {directory} ({e.strerror}); "
                    "the local object store needs a filesystem with hard links") from e
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        fsync_dir(directory)
        self._confirm(directory, gen, etag)
        self._collect(directory, gen)
        return etag

    @staticmethod
    def _copy_in(source: Path, f) -> str:
        import hashlib

        h = hashlib.sha256()
        with open(source, "rb") as src:
            while chunk := src.read(COPY_CHUNK):
                h.update(chunk)
                f.write(chunk)
        return h.hexdigest()

    def _confirm(self, directory: Path, gen: int, etag: str) -> None:
        """Make sure the generation we just linked really became current.

        It did not when we stalled for longer than KEEP_SUPERSEDED_S between
        reading and linking: the name had been used and collected, and newer
        generations already existed. A newer generation whose parent is our
        ETag proves that a later writer read ours, so ours took effect."""
        if not any(g > gen for g in _generations(directory)):
            return
        try:
            successor = _read_version(directory / _gen_name(gen + 1), gen + 1, body=False)
        except FileNotFoundError:
            raise TransientError(
                f"{self.name}: outcome of a write to {directory.name} is unknown "
                "(the writer stalled and newer generations were collected)") from None
        if successor.parent == etag:
            return
        with contextlib.suppress(FileNotFoundError):
            os.unlink(directory / _gen_name(gen))
        raise _Conflict

    def _collect(self, directory: Path, newest: int) -> None:
        """Remove superseded generations and dead writers' temp files. The
        newest generation is never removed, tombstones included, so a key's
        generation number never goes down."""
        try:
            now = os.stat(directory / _gen_name(newest)).st_ctime  # the server's clock, like the others
            entries = list(os.scandir(directory))
        except FileNotFoundError:
            return
        for e in entries:
            with contextlib.suppress(FileNotFoundError):
                if e.name.isascii() and e.name.isdigit():
                    if int(e.name) < newest and now - e.stat().st_ctime > KEEP_SUPERSEDED_S:
                        os.unlink(e.path)
                elif e.name.startswith(_TMP_PREFIX) and now - e.stat().st_mtime > TMP_EXPIRY_S:
                    os.unlink(e.path)

    # ------------------------------------------------------------ the API
    def get(self, key: str) -> tuple[bytes, str]:
        cur = self._current(self._dir(key), body=True)
        if cur is None or cur.deleted:
            raise ObjectNotFound(f"{self.name}{key} not found")
        assert cur.body is not None
        return cur.body, cur.etag

    def put(self, key: str, data: bytes, *, if_none_match: bool = False,
            if_match: str | None = None) -> str:
        return self._put(key, bytes(data), if_none_match=if_none_match, if_match=if_match)

    def put_file(self, key: str, path: Path, *, if_none_match: bool = False, sha256: str | None = None) -> str:
        # The same create-only link() as put: exact on this backend.
        return self._put(key, Path(path), if_none_match=if_none_match, if_match=None, sha256=sha256)

    def get_file(self, key: str, dest: Path, *, size_hint: int | None = None, fsync: bool = False) -> Download:
        directory = self._dir(key)
        for _ in range(100):
            gens = _generations(directory)
            if not gens:
                break
            try:
                src = open(directory / _gen_name(gens[-1]), "rb")
            except FileNotFoundError:
                continue  # superseded and collected since the listing: look again
            with src:
                header = json.loads(src.readline())
                if header["deleted"]:
                    break
                with open_dest(dest) as out:
                    writer = HashingWriter(out)
                    while chunk := src.read(COPY_CHUNK):
                        writer.write(chunk)
                    finish_dest(out, fsync)
                return writer.result(header["etag"])
        else:
            raise TransientError(f"{self.name}: {directory} keeps changing under the reader")
        raise ObjectNotFound(f"{self.name}{key} not found")

    def _put(self, key: str, data: bytes | Path, *, if_none_match: bool, if_match: str | None,
             sha256: str | None = None) -> str:
        directory = self._dir(key)
        conditional = if_none_match or if_match is not None
        while True:
            cur = self._current(directory, body=False)
            live = cur is not None and not cur.deleted
            if if_none_match and live:
                raise PreconditionFailed(f"{self.name}{key} already exists")
            if if_match is not None and (not live or cur.etag != if_match):
                raise PreconditionFailed(f"{self.name}{key} changed or missing (etag mismatch)")
            try:
                return self._write(directory, cur, data, sha256=sha256)
            except _Mismatch:
                raise self._source_changed(key, data) from None
            except _Conflict:
                if conditional:
                    raise PreconditionFailed(f"{self.name}{key} was written concurrently") from None
                # unconditional: another writer went first; write on top of it

    def head(self, key: str) -> ObjectMeta | None:
        cur = self._current(self._dir(key), body=False)
        if cur is None or cur.deleted:
            return None
        return ObjectMeta(key, cur.size, cur.etag, cur.mtime)

    def list(self, prefix: str = "", start_after: str | None = None) -> Iterator[ObjectMeta]:
        keys = sorted(k for k in self._walk(self.root, "", prefix)
                      if k.startswith(prefix) and (start_after is None or k > start_after))
        for key in keys:
            meta = self.head(key)
            if meta is not None:
                yield meta

    def _walk(self, directory: Path, key_prefix: str, prefix: str) -> Iterator[str]:
        try:
            entries = list(os.scandir(directory))
        except (FileNotFoundError, NotADirectoryError):
            return
        for e in entries:
            if not e.is_dir(follow_symlinks=False):
                continue
            if e.name.endswith(_OBJECT_SUFFIX):
                yield key_prefix + urllib.parse.unquote(e.name[:-1])
                continue
            sub = key_prefix + urllib.parse.unquote(e.name) + "/"
            if sub.startswith(prefix) or prefix.startswith(sub):  # skip subtrees the prefix excludes
                yield from self._walk(Path(e.path), sub, prefix)

    def delete(self, key: str, *, if_match: str | None = None) -> None:
        directory = self._dir(key)
        while True:
            cur = self._current(directory, body=False)
            live = cur is not None and not cur.deleted
            if if_match is not None and (not live or cur.etag != if_match):
                raise PreconditionFailed(f"{self.name}{key} changed or missing (etag mismatch)")
            if not live:
                return
            try:
                # A tombstone, not an unlink: the generation number must keep
                # growing or a stalled writer could resurrect the key.
                self._write(directory, cur, b"", deleted=True)
                return
            except _Conflict:
                if if_match is not None:
                    raise PreconditionFailed(f"{self.name}{key} was written concurrently") from None
