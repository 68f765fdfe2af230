"""Conflict copies (``swamp datastore conflicts``): list the copies a pull
kept aside (``<path>.conflict-<peer>-<seq>-<id>``: ours, when a peer's
change to the same path won; ``<id>`` begins the id of their commit, so a
name never repeats, even after a remote was emptied and its seqs started
again; copies named without it, ``<path>.conflict-<peer>-<seq>``, come from
an older swamp), put one back in place of theirs as a new change, or drop
one.

A copy is local-only: it is never published, so it stays until someone
deals with it here (or deletes the file). Restoring publishes ours as a new
change on top of theirs, in one changing session; dropping only removes the
local copy."""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING

from swamp.app.lifecycle import changing
from swamp.datastore.sync.counts import SyncCounts
from swamp.datastore.sync.localonly import CONFLICT_COPY_RE, LOCAL_ONLY_DIRS
from swamp.errors import ConflictError, NotFoundError, UnpublishedError, ValidationError
from swamp.repo.datastores import path_rules

if TYPE_CHECKING:
    from swamp.repo.context import Repo

_COPY_RE = CONFLICT_COPY_RE  # the one rule (localonly.py)
_HINT = "list them with 'swamp datastore conflicts'"


def list_conflicts(repo: Repo) -> list[dict]:
    """Every conflict copy in the datastore, with what it conflicts with:
    ``{"copy", "path", "peer", "seq", "commit", "class", "oursSize", "theirs", "theirsSize", "same"}``
    (``commit``: the first digits of their commit's id, None for a copy an
    older swamp named; ``theirs``: whether the path holds a file now;
    ``same``: whether it holds exactly our copy's bytes)."""
    rules = path_rules()
    root = repo.datastore.root
    out = []
    for copy in _copies(root):
        m = _COPY_RE.match(copy)
        path = m["path"]
        ours = root / copy
        theirs = root / path
        has_theirs = theirs.is_file()
        out.append({
            "copy": copy, "path": path, "peer": m["peer"], "seq": int(m["seq"]), "commit": m["id"],
            "class": rules.classify(path).value, "oursSize": ours.stat().st_size,
            "theirs": has_theirs, "theirsSize": theirs.stat().st_size if has_theirs else None,
            "same": has_theirs and _same(ours, theirs),
        })
    return sorted(out, key=lambda e: (e["path"], e["seq"], e["copy"]))


def restore(repo: Repo, path: str) -> dict:
    """Put our copy in place of theirs, as a new change that is published
    at once; the copy is gone afterwards. Refused for an immutable path (a
    published version is never rewritten)."""
    entry = _find(repo, path)
    if entry["class"] == "immutable":
        raise ValidationError(
            f"{entry['path']} is immutable (a published version, output or run record): "
            "it is never rewritten, so the copy cannot be restored over it",
            hint=f"keep what you need from {entry['copy']}, then "
                 f"'swamp datastore conflicts drop {entry['copy']}'")
    ds = repo.datastore
    counts = SyncCounts()
    value = {"path": entry["path"], "restored": entry["copy"], "published": True}
    try:
        with changing(repo, f"datastore conflicts restore {entry['path']}", into=counts):
            source = ds.local_path(entry["copy"])
            if not source.is_file():
                raise NotFoundError(f"the conflict copy {entry['copy']} is gone", hint=_HINT)
            with open(source, "rb") as src, ds.open_write(entry["path"]) as dst:
                shutil.copyfileobj(src, dst, 1 << 20)  # a copy may be large: never whole in memory
            source.unlink()
    except UnpublishedError as e:
        raise e.with_value({**value, "published": False, "sync": counts.to_json()})
    return {**value, "sync": counts.to_json()}


def drop(repo: Repo, path: str) -> dict:
    """Delete our copy (it was never published: nothing else changes)."""
    entry = _find(repo, path)
    try:
        repo.datastore.local_path(entry["copy"]).unlink()
    except FileNotFoundError:
        raise NotFoundError(f"the conflict copy {entry['copy']} is gone", hint=_HINT) from None
    return {"path": entry["path"], "dropped": entry["copy"]}


def _find(repo: Repo, path: str) -> dict:
    """The copy ``path`` names: the copy itself, or the path it conflicts
    with when that has exactly one copy."""
    rel = path.strip().removeprefix("./")
    entries = list_conflicts(repo)
    for e in entries:
        if e["copy"] == rel:
            return e
    matching = [e for e in entries if e["path"] == rel]
    if len(matching) == 1:
        return matching[0]
    if matching:
        names = ", ".join(e["copy"] for e in matching)
        raise ConflictError(f"{rel} has {len(matching)} conflict copies: {names}",
                            hint="name the copy to act on")
    if _COPY_RE.match(rel) is None and (repo.datastore.root / rel).exists():
        raise NotFoundError(f"{rel} has no conflict copy", hint=_HINT)
    raise NotFoundError(f"no conflict copy named {rel!r}", hint=_HINT)


def _copies(root) -> list[str]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        if dirpath == str(root):
            dirnames[:] = [d for d in dirnames if d not in LOCAL_ONLY_DIRS]
        rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
        for name in filenames:
            if _COPY_RE.match(name):
                out.append(name if rel_dir == "." else f"{rel_dir}/{name}")
    return out


def _same(a, b) -> bool:
    if a.stat().st_size != b.stat().st_size:
        return False
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            x, y = fa.read(1 << 20), fb.read(1 << 20)
            if x != y:
                return False
            if not x:
                return True
