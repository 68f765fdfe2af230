"""Versions a method writes while it runs without its model's lease.

A workflow's forEach items on one model run at once; holding the model's
lease for a whole method run would queue them. So such a run writes its
data here instead: a version is *staged* (its content in memory, or a
streamed file under the local-only ``cache/staged-versions/``) with a
provisional number below zero, and ``publish``, called under the model's
lease after a pull (app/workflows._Host.publishing), allocates the real
numbers exactly as a run holding the lease throughout would, and moves the
contents in (docs/sync.md "Concurrent runs of one model"). Nothing staged
is ever synced, and a run whose staging is dropped takes no number.

The method reads its own staged writes back as its latest; the versions it
did not write are the published ones, as any reader sees them."""

from __future__ import annotations

import os
import shutil
import threading

from swamp.data import layout
from swamp.data.repository import DataRecord, DataRepository
from swamp.errors import NotFoundError
from swamp.util.documents import DocView
from swamp.util.ids import new_id

#: local-only (never synced: datastore/sync/localonly.py), one directory per method run
STAGING_ROOT = "cache/staged-versions"


class _Staged:
    """One version waiting for its number."""

    __slots__ = ("model_type", "model_id", "name", "provisional", "meta", "content", "size", "sha256")

    def __init__(self, model_type: str, model_id: str, name: str, provisional: int) -> None:
        self.model_type, self.model_id, self.name, self.provisional = model_type, model_id, name, provisional
        self.meta: dict | None = None  # set once complete
        self.content: bytes | None = None  # None: streamed to its staged file
        self.size = 0
        self.sha256 = ""

    def key(self) -> tuple[str, str, str]:
        return self.model_type, self.model_id, self.name


class StagedVersions(DataRepository):
    """A DataRepository whose writes and deletes wait for ``publish``."""

    def __init__(self, ds) -> None:
        super().__init__(ds)
        # named by this process and a fresh id (never a caller's text): a process killed
        # mid-run leaves its directory, which a later run's ``discard`` sweeps
        self._dir = f"{STAGING_ROOT}/{os.getpid()}-{new_id()}"
        #: in the order the method made them: ("write", _Staged) or ("delete", (type, id, name))
        self._ops: list[tuple[str, object]] = []
        self._count = 0
        self._lock = threading.Lock()  # a method may write from threads of its own

    # ------------------------------------------------------------ staging
    def _new(self, model_type: str, model_id: str, name: str) -> _Staged:
        layout.name_dir(model_type, model_id, name)  # the same checks a real version's path makes
        with self._lock:
            self._count += 1
            staged = _Staged(model_type, model_id, name, -self._count)
            self._ops.append(("write", staged))
        return staged

    def _find(self, version: int) -> _Staged | None:
        with self._lock:
            return next((s for op, s in self._ops if op == "write" and s.provisional == version), None)

    def _staged_file(self, staged: _Staged) -> str:
        return f"{self._dir}/{-staged.provisional}"

    @property
    def pending(self) -> bool:
        """Whether anything waits to be published."""
        with self._lock:
            return bool(self._ops)

    def allocate(self, model_type: str, model_id: str, name: str) -> int:
        return self._new(model_type, model_id, name).provisional

    def raw_target(self, model_type: str, model_id: str, name: str, version: int) -> str:
        staged = self._find(version)
        return self._staged_file(staged) if staged is not None else super().raw_target(model_type, model_id,
                                                                                        name, version)

    def write(self, model_type: str, model_id: str, meta_fields: dict, content: bytes) -> DataRecord:
        from swamp.util.digest import sha256_hex

        staged = self._new(model_type, model_id, meta_fields["name"])
        staged.content = bytes(content)
        return self._complete(staged, meta_fields, len(content), sha256_hex(content))

    def finish_stream(self, model_type: str, model_id: str, meta_fields: dict, version: int,
                      size: int, sha256: str) -> DataRecord:
        staged = self._find(version)
        if staged is None:
            return super().finish_stream(model_type, model_id, meta_fields, version, size, sha256)
        return self._complete(staged, meta_fields, size, sha256)

    def _complete(self, staged: _Staged, meta_fields: dict, size: int, sha256: str) -> DataRecord:
        staged.size, staged.sha256 = size, sha256
        staged.meta = dict(meta_fields)
        return DataRecord(staged.model_type, staged.model_id, self._view(staged))

    def _view(self, staged: _Staged) -> DocView:
        from swamp.data import metadata_write

        return DocView(metadata_write.build({**staged.meta, "version": staged.provisional, "size": staged.size,
                                             "sha256": staged.sha256}))

    def abandon(self, model_type: str, model_id: str, name: str, version: int) -> None:
        staged = self._find(version)
        if staged is None:
            return super().abandon(model_type, model_id, name, version)
        with self._lock:
            self._ops = [(op, s) for op, s in self._ops if s is not staged]
        try:
            self.ds.delete(self._staged_file(staged))
        except Exception:  # noqa: BLE001 - best effort, as a real abandon is
            pass

    def delete(self, model_type: str, model_id: str, name: str, version: int | None = None) -> list[int]:
        """A delete of published versions waits for the lease too (its
        tombstone is a new file in a version directory); the versions this
        run staged under that name go at once."""
        if version is not None and version < 0:
            staged = self._find(version)
            if staged is None:
                raise NotFoundError(f"data {name!r} has no version {version}")
            self.abandon(model_type, model_id, name, version)
            return [version]
        layout.name_dir(model_type, model_id, name)
        with self._lock:
            self._ops = [(op, s) for op, s in self._ops
                         if not (op == "write" and s.key() == (model_type, model_id, name))]
            self._ops.append(("delete", (model_type, model_id, name, version)))
        return []

    # -------------------------------------------------------------- reads
    def get(self, model_type: str, model_id: str, name: str, version: int | None = None) -> DataRecord:
        if version is not None and version < 0:
            staged = self._find(version)
            if staged is None or staged.meta is None:
                raise NotFoundError(f"data {name!r} has no version {version}")
            return DataRecord(model_type, model_id, self._view(staged))
        if version is None:
            with self._lock:
                ops = list(self._ops)
            for op, s in reversed(ops):  # this run's newest write of the name, unless it deleted it since
                if op == "write" and s.key() == (model_type, model_id, name) and s.meta is not None:
                    return DataRecord(model_type, model_id, self._view(s))
                if op == "delete" and s[:3] == (model_type, model_id, name) and s[3] is None:
                    raise NotFoundError(f"data {name!r} has no versions")
        return super().get(model_type, model_id, name, version)

    def content(self, record: DataRecord) -> bytes:
        version = record.meta.version
        staged = self._find(version) if isinstance(version, int) and version < 0 else None
        if staged is None:
            return super().content(record)
        if staged.content is not None:
            return staged.content
        return self.ds.read_bytes(self._staged_file(staged))

    # ---------------------------------------------------------- publishing
    def publish(self) -> dict[int, int]:
        """Call under the model's lease, after the pull that followed taking
        it: allocate each staged version's number and move it in (content,
        then metadata, as a direct write does), and apply the deletes, in
        the order the method made them. Returns {provisional: number}."""
        numbers: dict[int, int] = {}
        with self._lock:
            ops, self._ops = list(self._ops), []
        for op, s in ops:
            if op == "delete":
                model_type, model_id, name, version = s
                try:
                    DataRepository.delete(self, model_type, model_id, name, version)
                except NotFoundError:
                    pass  # nothing published under that name (yet): nothing to delete
                continue
            if s.meta is None:
                continue  # a stream never closed: never a version
            numbers[s.provisional] = self._move_in(s)
        return numbers

    def _move_in(self, s: _Staged) -> int:
        version = DataRepository.allocate(self, s.model_type, s.model_id, s.name)
        vdir = layout.version_dir(s.model_type, s.model_id, s.name, version)
        try:
            if s.content is not None:
                self.ds.write_bytes(f"{vdir}/{layout.RAW}", s.content)
            else:
                with open(self.ds.local_path(self._staged_file(s)), "rb") as src, \
                        self.ds.open_write(f"{vdir}/{layout.RAW}") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
            self._finish(s.model_type, s.model_id, vdir, s.meta, version, s.size, s.sha256)
        except BaseException:  # leave no half-written version behind: its number stays taken
            DataRepository.abandon(self, s.model_type, s.model_id, s.name, version)
            raise
        return version

    def discard(self) -> None:
        """Drop what is staged (and the staging directory): nothing of it
        is ever published. The directories of processes that are gone go
        too."""
        with self._lock:
            self._ops = []
        doomed = [self._dir] + [f"{STAGING_ROOT}/{n}" for n in self.ds.listdir(STAGING_ROOT) if _gone(n)]
        for rel in doomed:
            try:
                self.ds.delete(rel)
            except Exception:  # noqa: BLE001 - a leftover under cache/ is never synced nor read
                pass


def _gone(name: str) -> bool:
    """Whether the process a staging directory is named by has exited."""
    pid = name.split("-", 1)[0]
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError):
        return False
    return False
