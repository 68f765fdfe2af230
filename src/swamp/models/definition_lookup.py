"""A model's definition found by name, remembered between lookups while
nothing it came from has changed.

swamp serve looks the model up on every data read, and the walk of the
definitions tree (``definition_files.find``) was most of a read's time. The
answer is reused while the found file and every directory of the tree keep
their stamps (util/file_stamps.py): a definition added, removed, renamed
or edited anywhere under models/ (by a CLI process, a pull, a git checkout)
is seen by the next lookup. Only lookups that find a file of that name in
the repository's models/ are remembered; ids, automatic definitions and
misses walk as before."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from swamp.models.definition_files import find
from swamp.util import file_stamps
from swamp.util.documents import DocView
from swamp.util.names import NAME_RE

if TYPE_CHECKING:
    from swamp.repo.context import Repo

#: names remembered at most (a bound, not a tuning knob: one entry per model read)
MAX_ENTRIES = 4096

_entries: dict[tuple[str, str], tuple[list, str, Any, DocView]] = {}


def find_ref(repo: Repo, name_or_id: str) -> DocView:
    """``definition_files.find(repo, name_or_id)[1]``, remembered as above;
    a fresh copy each time (callers may change what they are given)."""
    if not NAME_RE.match(name_or_id):
        return find(repo, name_or_id)[1]
    models_dir = repo.models_dir
    key = (str(models_dir), name_or_id)
    hit = _entries.get(key)
    if hit is not None:
        dirs, path, stamp, doc = hit
        if file_stamps.stamp_of(path) == stamp and file_stamps.unchanged(dirs):
            return DocView(doc)
    taken = file_stamps.now_ns()
    dirs = file_stamps.tree_dirs(models_dir)  # stamped before the walk: a change during it shows next time
    path, doc = find(repo, name_or_id)
    stamp = file_stamps.stamp_of(path)
    by_name = Path(path).stem == name_or_id and Path(path).is_relative_to(models_dir)
    if by_name and file_stamps.settled([stamp, *(s for _, s in dirs)], taken):
        if len(_entries) >= MAX_ENTRIES:  # (each step is one dict operation: safe across threads)
            _entries.clear()
        _entries[key] = (dirs, str(path), stamp, DocView(doc))
    else:
        _entries.pop(key, None)
    return DocView(doc)
