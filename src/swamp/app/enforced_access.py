"""What a running server enforces: the grants and tokens it checks every
request against, and the datastore's access documents under them, each
read again when what it came from changed (a stat or two per request, no
session on the request path: serve/access_state.py's watch pulls a shared
datastore now and then). ``swamp access reload`` loads them the same way
to check them as a server would."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from swamp.access import grants as grant_rules
from swamp.access import tokens as token_rules
from swamp.app import access
from swamp.errors import SwampError
from swamp.util import file_stamps

if TYPE_CHECKING:
    from swamp.repo.context import Repo


class SharedDoc:
    """One access document's map, read again when its file changed. On the
    request path: two stats of paths worked out once."""

    def __init__(self, repo: Repo, kind: str) -> None:
        self.repo = repo
        self.kind = kind
        self._stamp: tuple | None = ("never",)
        self._entries: dict = {}
        self._file: str | None = None  # the datastore opens lazily: its paths on first use
        self._dir = ""

    def current(self) -> dict:
        if self._file is None:
            path = access.document_file(self.repo, self.kind)
            self._file, self._dir = str(path), str(path.parent)
        try:
            st = os.stat(self._file)
        except (FileNotFoundError, NotADirectoryError):
            stamp = None
        else:
            stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
            # every time: a mode changed later does not change the stamp
            if st.st_mode & stat.S_IWOTH or os.stat(self._dir).st_mode & stat.S_IWOTH:
                access.check_private(Path(self._file))
        if stamp != self._stamp:
            # A stamp of None (no file yet) may still hydrate a lazily pulled document.
            self._entries = access.read_cached(self.repo, self.kind)
            self._stamp = stamp
        return self._entries

    def forget(self) -> None:
        """Read it again at the next ``current`` (``access reload``)."""
        self._stamp = ("never",)


class GrantSet:
    """The grants, read again when a file under grants/ or the datastore's
    grants or groups change. A broken file refuses everything (and says
    why) rather than allowing by accident.

    Checked on every request, so without a walk: the directory's listing is
    kept while the directory's stamp holds, and each file listed is stat'ed
    (util/file_stamps.py). Stamps too fresh to trust mean the files are
    read again on the next request too."""

    def __init__(self, repo: Repo) -> None:
        self.repo = repo
        self._dir = grant_rules.grants_dir(repo)
        self._stamp = None
        self._listing: tuple | None = None  # (the directory's stamp, its grant files)
        self._file_grants: list[grant_rules.Grant] = []
        self._error: SwampError | None = None
        self._files_read: list[str] = []
        self._shared_grants = SharedDoc(repo, "grants")
        self._shared_groups = SharedDoc(repo, "groups")
        self._parsed: tuple[dict, list[grant_rules.Grant]] | None = None

    def _files(self, dir_stamp, taken: int) -> list[Path]:
        if self._listing is not None and self._listing[0] == dir_stamp:
            return self._listing[1]
        files = sorted(list(self._dir.glob("*.yaml")) + list(self._dir.glob("*.yml")))
        # a name added in the same timestamp tick as the listing would leave the stamp as it is
        self._listing = (dir_stamp, files) if file_stamps.settled([dir_stamp], taken) else None
        return files

    def _stampnow(self, taken: int) -> tuple:
        dir_stamp = file_stamps.stamp_of(self._dir)
        if dir_stamp is None:
            return ()
        return (dir_stamp, *((str(p), file_stamps.stamp_of(p)) for p in self._files(dir_stamp, taken)))

    def current(self) -> list[grant_rules.Grant]:
        taken = file_stamps.now_ns()
        stamp = self._stampnow(taken)
        if stamp != self._stamp:
            try:
                self._file_grants, self._error = grant_rules.load_files(self.repo), None
            except SwampError as e:
                self._file_grants, self._error = [], grant_rules.broken(e)
            stamps = [stamp[0], *(s for _, s in stamp[1:])] if stamp else []
            self._stamp = stamp if file_stamps.settled(stamps, taken) else None  # too fresh: read again next time
            self._files_read = [f for f, _ in stamp[1:]]
        if self._error is not None:
            raise self._error
        try:
            entries = self._shared_grants.current()
            if self._parsed is None or self._parsed[0] is not entries:
                self._parsed = (entries, grant_rules.parse_entries(entries))
        except SwampError as e:
            self._parsed = None
            raise grant_rules.broken(e) from None
        return self._file_grants + self._parsed[1]

    def groups(self) -> dict:
        try:
            return self._shared_groups.current()
        except SwampError as e:
            raise grant_rules.broken(e, "groups") from None

    def allowed(self, subjects: list[str], action: str, resource: str) -> bool:
        grants = self.current()
        who = grant_rules.with_groups(subjects, self.groups())
        return grant_rules.decide(grants, who, action, resource)[0]

    def reload(self) -> dict:
        """Read the files and the datastore's grants again now, changed or
        not (``swamp access reload``): ``{"grants", "files", "groups"}``,
        or the broken file's error."""
        from swamp.app.lifecycle import refresh

        refresh(self.repo)  # nothing to do on a directory datastore
        self._stamp = self._listing = None
        self._shared_grants.forget()
        self._shared_groups.forget()
        found = self.current()
        files = sorted(os.path.relpath(f, self.repo.root) for f in self._files_read)
        if self._shared_grants.current():
            files.append(grant_rules.DATASTORE_SOURCE)
        return {"grants": len(found), "files": files, "groups": len(self.groups())}


class TokenStore:
    """Checks bearer tokens, re-reading the file when it changed (a mint,
    rotate or revoke by ``swamp access`` takes effect on the next request)."""

    def __init__(self, repo: Repo) -> None:
        self.repo = repo
        # the same file for the process's life: built once, stat'ed per request
        self._path = token_rules.store_path(repo)
        self._stamp: tuple | None = None
        self._tokens: dict = {}
        self._shared = SharedDoc(repo, "tokens") if access.shared(repo) else None

    def _fresh(self) -> dict:
        try:
            st = os.stat(self._path)
            stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        except FileNotFoundError:
            stamp = None
        if stamp != self._stamp:
            self._tokens = token_rules.load_file(self.repo)
            self._stamp = stamp
        if self._shared is None:
            return self._tokens
        try:
            shared = self._shared.current()
        except SwampError as e:
            raise grant_rules.broken(e, "tokens") from None
        return {**self._tokens, **shared}

    def reload(self) -> dict:
        """Read the file and the datastore's tokens again now (``swamp
        access reload``): ``{"tokens", "revoked"}``."""
        self._stamp = ("reload",)
        if self._shared is not None:
            from swamp.app.lifecycle import refresh

            refresh(self.repo)
            self._shared.forget()
        found = self._fresh()
        return {"tokens": sum(not e.get("revoked") for e in found.values()),
                "revoked": sum(bool(e.get("revoked")) for e in found.values())}

    def check(self, presented: str) -> tuple[str, list[str]] | None:
        """(token name, subjects) for a valid token, else None."""
        return token_rules.verify(self._fresh(), presented)
