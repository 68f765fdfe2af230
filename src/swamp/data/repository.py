"""Versioned data on a Datastore: allocate, write, read, list, delete.

Versions are immutable and allocated under the owning model's lock: list the
version directories, claim max+1 with an atomic mkdir (a racer that already
claimed it makes us move on). Content is written first, metadata.yaml last,
each atomically; a reader only sees versions whose metadata exists, so a
killed writer never shows a torn version. A write that fails before its
metadata (a full disk, Ctrl-C) clears what it wrote and leaves a tombstone,
as a delete does: no reader saw that version, but another process's push
may have carried its content, so its number is never given out again. A
process killed outright leaves its claim as it was; later writes step over
it and deleting the name clears it."""

from __future__ import annotations

from typing import Iterator

from swamp.data import latest_hint, layout, metadata_cache, metadata_write
from swamp.data.metadata_read import read_metadata
from swamp.datastore.base import Datastore
from swamp.errors import NotFoundError
from swamp.util import clock, yamlio
from swamp.util.documents import DocView


class DataRecord:
    """One version of data: its owner and its metadata. (A plain class, not
    a dataclass: the dataclasses module imports inspect, ~4 ms of a command.)"""

    __slots__ = ("model_type", "model_id", "meta")

    def __init__(self, model_type: str, model_id: str, meta: DocView) -> None:
        self.model_type = model_type
        self.model_id = model_id
        self.meta = meta  # the fields of DataMetadata

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DataRecord):
            return NotImplemented
        return (self.model_type, self.model_id, self.meta) == (other.model_type, other.model_id, other.meta)

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return f"DataRecord(model_type={self.model_type!r}, model_id={self.model_id!r}, meta={self.meta!r})"

    @property
    def path(self) -> str:
        return layout.version_dir(self.model_type, self.model_id, self.meta.name, self.meta.version)


class DataRepository:
    def __init__(self, ds: Datastore) -> None:
        self.ds = ds

    # ------------------------------------------------------------ versions
    def _version_dirs(self, model_type: str, model_id: str, name: str) -> list[int]:
        """All claimed version numbers (complete or not), ascending."""
        return sorted(int(n) for n in self.ds.listdir(layout.name_dir(model_type, model_id, name)) if n.isdigit())

    def versions(self, model_type: str, model_id: str, name: str) -> list[int]:
        """Complete versions, ascending."""
        base = layout.name_dir(model_type, model_id, name)
        return [v for v in self._version_dirs(model_type, model_id, name)
                if self.ds.exists(f"{base}/{v}/{layout.METADATA}")]

    def latest_version(self, model_type: str, model_id: str, name: str) -> int | None:
        """The highest complete version (None when there is none)."""
        base = layout.name_dir(model_type, model_id, name)
        try:
            mtime_ns = self.ds.local_path(base).stat().st_mtime_ns
        except (FileNotFoundError, NotADirectoryError):
            return None
        top = latest_hint.read(self.ds, base, mtime_ns)
        if top is not None and self.ds.exists(f"{base}/{top}/{layout.METADATA}"):
            return top
        claimed = self._version_dirs(model_type, model_id, name)
        if claimed:
            latest_hint.write(self.ds, base, mtime_ns, claimed[-1])
        for v in reversed(claimed):
            if self.ds.exists(f"{base}/{v}/{layout.METADATA}"):
                return v
        return None

    def allocate(self, model_type: str, model_id: str, name: str) -> int:
        """Claim the next version number. Call with the model's lock held."""
        claimed = self._version_dirs(model_type, model_id, name)
        v = (claimed[-1] if claimed else 0) + 1
        while True:
            try:
                self.ds.mkdir(layout.version_dir(model_type, model_id, name, v), exist_ok=False)
                return v
            except FileExistsError:
                v += 1

    def raw_target(self, model_type: str, model_id: str, name: str, version: int) -> str:
        """Where a streamed version's content is written (a staged run's
        repository puts it elsewhere: models/staged_versions.py)."""
        return f"{layout.version_dir(model_type, model_id, name, version)}/{layout.RAW}"

    # -------------------------------------------------------------- writes
    def write(self, model_type: str, model_id: str, meta_fields: dict, content: bytes) -> DataRecord:
        """Allocate a version and write it (content, then metadata)."""
        name = meta_fields["name"]
        version = self.allocate(model_type, model_id, name)
        vdir = layout.version_dir(model_type, model_id, name, version)
        from swamp.util.digest import sha256_hex  # small content: no OpenSSL to load (2 ms)

        try:
            self.ds.write_bytes(f"{vdir}/{layout.RAW}", content)
            return self._finish(model_type, model_id, vdir, meta_fields, version, len(content),
                                sha256_hex(content))
        except BaseException:  # a full disk, Ctrl-C: leave no half-written version behind
            self.abandon(model_type, model_id, name, version)
            raise

    def abandon(self, model_type: str, model_id: str, name: str, version: int) -> None:
        """Clear a version whose writing failed before it became complete
        (no metadata yet, so no reader ever saw it). Its number stays taken,
        marked by a tombstone as a deleted version's is: a push from another
        process on this checkout may already have carried its content, and a
        number once published is never given out again. Best effort: the
        failure that brought us here is what the caller reports."""
        vdir = layout.version_dir(model_type, model_id, name, version)
        try:
            if self.ds.exists(f"{vdir}/{layout.METADATA}"):
                return
            self.ds.write_bytes(f"{vdir}/{layout.TOMBSTONE}", clock.isoformat().encode())
            self._clear_but_tombstone(vdir)
        except Exception:
            pass

    def finish_stream(self, model_type: str, model_id: str, meta_fields: dict, version: int,
                      size: int, sha256: str) -> DataRecord:
        """Complete a version whose raw file was streamed in place."""
        vdir = layout.version_dir(model_type, model_id, meta_fields["name"], version)
        return self._finish(model_type, model_id, vdir, meta_fields, version, size, sha256)

    def _finish(self, model_type, model_id, vdir, meta_fields, version, size, sha256) -> DataRecord:
        doc = metadata_write.build({**meta_fields, "version": version, "size": size, "sha256": sha256})
        self.ds.write_bytes(f"{vdir}/{layout.METADATA}", yamlio.dumps(metadata_write.without_none(doc)).encode())
        return DataRecord(model_type, model_id, DocView(doc))

    # --------------------------------------------------------------- reads
    def metadata(self, model_type: str, model_id: str, name: str, version: int) -> DocView:
        vdir = layout.version_dir(model_type, model_id, name, version)
        rel = f"{vdir}/{layout.METADATA}"
        try:
            return metadata_cache.read(self.ds, rel, lambda text: read_metadata(yamlio.loads(text, rel), rel))
        except NotFoundError:
            raise NotFoundError(f"data {name!r} has no version {version}") from None

    def get(self, model_type: str, model_id: str, name: str, version: int | None = None) -> DataRecord:
        """One version (the highest when none is given). A renamed name with
        no versions of its own forwards to the name it was renamed to (the
        numbers were kept)."""
        name = self.resolve_name(model_type, model_id, name)
        if version is None:
            version = self.latest_version(model_type, model_id, name)
            if version is None:
                raise NotFoundError(f"no data named {name!r}")
        return DataRecord(model_type, model_id, self.metadata(model_type, model_id, name, version))

    MAX_FORWARDS = 5

    def forwarded_to(self, model_type: str, model_id: str, name: str) -> str | None:
        rel = f"{layout.name_dir(model_type, model_id, name)}/{layout.FORWARD}"
        if not self.ds.exists(rel):  # the common case costs one local stat
            return None
        try:
            return self.ds.read_bytes(rel).decode().strip() or None
        except NotFoundError:
            return None

    def resolve_name(self, model_type: str, model_id: str, name: str) -> str:
        """``name``, or where its renames lead while it has no versions of
        its own (at most MAX_FORWARDS hops)."""
        for _ in range(self.MAX_FORWARDS):
            target = self.forwarded_to(model_type, model_id, name)
            if target is None or self.latest_version(model_type, model_id, name) is not None:
                return name
            name = target
        return name

    def rename(self, model_type: str, model_id: str, old: str, new: str) -> list[int]:
        """Move every version of ``old`` to ``new``, numbers kept; ``old``
        then forwards to ``new``. Copies first, deletes last: a rename cut
        short leaves ``old`` whole. Call with the model's lock held."""
        versions = self.versions(model_type, model_id, old)
        for v in versions:
            src = layout.version_dir(model_type, model_id, old, v)
            dst = layout.version_dir(model_type, model_id, new, v)
            self.ds.mkdir(dst, exist_ok=True)
            self.ds.write_bytes(f"{dst}/{layout.RAW}", self.ds.read_bytes(f"{src}/{layout.RAW}"))
            meta = yamlio.loads(self.ds.read_bytes(f"{src}/{layout.METADATA}").decode(), src)
            meta["name"] = new
            self.ds.write_bytes(f"{dst}/{layout.METADATA}", yamlio.dumps(meta).encode())
        self.ds.write_bytes(f"{layout.name_dir(model_type, model_id, old)}/{layout.FORWARD}", new.encode())
        self.delete(model_type, model_id, old)
        return versions

    def content(self, record: DataRecord) -> bytes:
        return self.ds.read_bytes(f"{record.path}/{layout.RAW}")

    def names(self, model_type: str, model_id: str) -> list[str]:
        return [n for n in self.ds.listdir(layout.model_dir(model_type, model_id)) if not n.startswith(".")]

    def records(self, model_type: str, model_id: str, name: str) -> Iterator[DataRecord]:
        name = self.resolve_name(model_type, model_id, name)
        for v in self.versions(model_type, model_id, name):
            yield DataRecord(model_type, model_id, self.metadata(model_type, model_id, name, v))

    # ------------------------------------------------------------- deletes
    def delete(self, model_type: str, model_id: str, name: str, version: int | None = None) -> list[int]:
        """Delete one version, or every version of a name. Returns what went.

        The highest version number is never given out again: when it is
        deleted, a tombstone stays in its directory, so the next write gets
        a new number (on every peer) instead of reusing one that readers may
        have seen with other content."""
        claimed = self._version_dirs(model_type, model_id, name)
        complete = self.versions(model_type, model_id, name)
        if version is not None and version not in complete:
            raise NotFoundError(f"data {name!r} has no version {version}")
        doomed = complete if version is None else [version]
        top = claimed[-1] if claimed else None
        # Deleting a whole name also clears what writers or deletes killed
        # half-way left in versions that never became (or stopped being)
        # complete: nothing else could ever remove it. The model's lock is
        # held, so no writer is at work on them.
        leftovers = [v for v in claimed if v not in complete] if version is None else []
        for v in doomed + leftovers:
            vdir = layout.version_dir(model_type, model_id, name, v)
            if v == top:
                tombstone = f"{vdir}/{layout.TOMBSTONE}"
                if not self.ds.exists(tombstone):
                    self.ds.write_bytes(tombstone, clock.isoformat().encode())
                self._clear_but_tombstone(vdir)
            else:
                self.ds.delete(vdir)
        return doomed

    def _clear_but_tombstone(self, vdir: str) -> None:
        """Metadata first (the version stops being visible), then its
        content, by name as well as listed: a lazy cache may not hold them."""
        rest = sorted(set(self.ds.listdir(vdir)) - {layout.METADATA, layout.RAW, layout.TOMBSTONE})
        for entry in [layout.METADATA, layout.RAW, *rest]:
            self.ds.delete(f"{vdir}/{entry}")

    def delete_model(self, model_type: str, model_id: str) -> None:
        """Delete every version of every name. As in ``delete``, the highest
        claimed number of each name keeps a tombstone, so a definition that
        comes back (same id, from another checkout) never reuses a number."""
        for name in self.names(model_type, model_id):
            claimed = self._version_dirs(model_type, model_id, name)
            ndir = layout.name_dir(model_type, model_id, name)
            top = str(claimed[-1]) if claimed else None
            for entry in self.ds.listdir(ndir):
                if entry != top:
                    self.ds.delete(f"{ndir}/{entry}")
            if top is not None:
                vdir = f"{ndir}/{top}"
                self.ds.write_bytes(f"{vdir}/{layout.TOMBSTONE}", clock.isoformat().encode())
                self._clear_but_tombstone(vdir)
