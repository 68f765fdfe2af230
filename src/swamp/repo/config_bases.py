"""Which committed version each config document's local file was made
from, under managed config (docs/managed-config.md "Changing managed
documents").

A file edited in place (an editor on ``.swamp/models/...``) cannot say
which version its buffer was opened on: a pull may have replaced the file
under an open editor, which then saves its old buffer over the new
version. So this checkout keeps, per document, its *base*: the version it
first pulled, or last published, or last had put back after a refused
edit (``.swamp/cache/config-bases/<rel>.sha256``, and the bytes beside it
as ``<rel>.bytes``; never synced). A pull does not move it: it is what
the checkout's own edits may start from.

``record_pulled`` gives a base to every document that has none, before
every pull of the datastore (``watch``: the datastore calls it), so a
document pulled once and replaced by a later pull is checked against the
version it was first pulled as.
``edit_is_stale`` then judges an in-place edit the way a three-way merge
does: it must hold every line peers changed since the base as they left it
(and, where the base's bytes are unknown, peers must not have changed it
since)."""

from __future__ import annotations

import contextlib
import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from swamp.errors import SwampError
from swamp.util.atomic import atomic_write

if TYPE_CHECKING:
    from swamp.repo.context import Repo

#: the folders of the config tier that hold documents (managed_config.KINDS)
_FOLDERS = ("models", "workflows", "vaults")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _dir(repo: Repo) -> Path:
    return repo.local_dir / "cache" / "config-bases"


def recorded(repo: Repo, rel: str) -> tuple[str | None, bytes | None]:
    """(sha256, bytes) of ``rel``'s base; bytes None when unknown (a record
    from before they were kept, or unreadable), both None without one."""
    where = _dir(repo)
    try:
        sha = (where / f"{rel}.sha256").read_text().strip() or None
    except OSError:
        return None, None
    try:
        data = (where / f"{rel}.bytes").read_bytes()
    except OSError:
        data = None
    return sha, (data if data is not None and sha is not None and _sha(data) == sha else None)


def remember(repo: Repo, rel: str, data: bytes | None, sha: str | None = None) -> None:
    """``rel``'s base is now ``data`` (or, bytes unknown, the version
    ``sha``); neither: no base. A hint for later checks, never worth
    failing a command over."""
    where = _dir(repo)
    sha = _sha(data) if data is not None else sha
    with contextlib.suppress(OSError):
        if sha is None:
            (where / f"{rel}.sha256").unlink(missing_ok=True)
            (where / f"{rel}.bytes").unlink(missing_ok=True)
            return
        (where / f"{rel}.sha256").parent.mkdir(parents=True, exist_ok=True)
        if data is not None:
            atomic_write(where / f"{rel}.bytes", data)
        else:
            (where / f"{rel}.bytes").unlink(missing_ok=True)
        atomic_write(where / f"{rel}.sha256", sha.encode())


def _recorded_paths(repo: Repo) -> set[str]:
    where = _dir(repo)
    out = set()
    for folder in _FOLDERS:
        for path in (where / folder).rglob("*.sha256"):
            out.add(path.relative_to(where).as_posix()[: -len(".sha256")])
    return out


def watch(repo: Repo, ds) -> None:
    """Make the shared datastore ``ds`` of ``repo`` record bases before
    each pull (managed config only; repo/datastores.py opens it so)."""
    ds.before_pull = lambda: record_pulled(repo)


def record_pulled(repo: Repo) -> None:
    """Before a pull: each committed document without a base gets the
    version its local file was pulled as (its bytes too when the file still
    holds them). Costs a listing of the records; a file is read only the
    first time its document is seen."""
    engine = getattr(repo.datastore, "engine", None)
    if engine is None or not repo.managed_config:
        return
    have = _recorded_paths(repo)
    new = [rel for folder in _FOLDERS for rel in engine.state.base_paths_under(folder) if rel not in have]
    if not new:
        return
    root = repo.datastore.root
    for rel, base in sorted(engine.state.bases(new).items()):
        try:
            data = (root / rel).read_bytes()
        except OSError:
            data = None
        remember(repo, rel, data if data is not None and _sha(data) == base.sha256 else None, base.sha256)


def _matches(a: list[bytes], b: list[bytes]) -> dict[int, int]:
    """Line i of ``a`` -> the line of ``b`` it is matched with (increasing)."""
    import difflib  # here: only an in-place edit a peer's change may predate needs it

    return {m.a + k: m.b + k for m in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()
            for k in range(m.size)}


def undoes_or_touches_peers_change(base: bytes, current: bytes, edit: bytes) -> bool:
    """A three-way merge's verdict (diff3): cut the three texts into the
    stretches where ``base``, ``current`` and ``edit`` agree and those in
    between; in between, ``current`` differs from ``base`` where peers
    changed it. True when the edit does not hold such a stretch as peers
    left it: it undoes their change (an editor's buffer made on ``base``
    and saved over ``current`` always does) or changes the same or
    adjoining lines. An edit made on ``current`` elsewhere is False."""
    b, c, e = base.splitlines(keepends=True), current.splitlines(keepends=True), edit.splitlines(keepends=True)
    to_c, to_e = _matches(b, c), _matches(b, e)
    anchors = [i for i in range(len(b)) if i in to_c and i in to_e]
    ib = ic = ie = 0
    for i in anchors + [len(b)]:
        jc, je = (to_c[i], to_e[i]) if i < len(b) else (len(c), len(e))
        if jc < ic or je < ie:
            continue  # crossed matches: not an anchor in order
        b_part, c_part, e_part = b[ib:i], c[ic:jc], e[ie:je]
        if c_part != b_part and e_part != c_part:
            return True
        ib, ic, ie = i + 1, jc + 1, je + 1
    return False


def edit_is_stale(repo: Repo, rel: str, edit: bytes, committed: str | None) -> bool:
    """Whether an in-place edit of ``rel`` may have been made on an older
    version than ``committed`` (the sha256 this checkout's pull left as
    committed). Without a base (a document this checkout never held
    before) there is nothing older to have edited."""
    if committed is None or _sha(edit) == committed:
        return False
    base_sha, base = recorded(repo, rel)
    if base_sha is None or base_sha == committed:
        return False
    if base is None:
        return True  # a peer changed it since our base, whose lines we do not know

    try:
        current = repo.datastore.engine.committed_content(rel)
    except SwampError:  # the bucket cannot say: assume the worst
        return True
    return current is None or _sha(current) != committed or undoes_or_touches_peers_change(base, current, edit)
