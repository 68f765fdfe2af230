"""An installed extension stays what its pinned wheels unpacked to.

The lockfile pins each wheel's sha256, and install checks it before
unpacking; after that the code sits in ``.swamp/cache/extensions/`` and is
imported from there by every later command. So an install is *sealed* when
it is made: modes set explicitly (folders 0755, files 0644, executables
0755: never writable by the group or others, whatever the umask, since a
permissive umask is common on CI runners and in containers), its modules
compiled to bytecode by us (so Python never writes a ``__pycache__`` later,
under whatever umask that command has, and a planted ``.pyc`` is an unknown
file), and the sha256 of every file recorded in the install's marker.

Before anything is imported from an install it is *checked* against that
record: a changed, missing or added file, or a file or folder writable by
others, refuses the whole extension (``TamperedInstallError``); nothing of
it runs. The fix is to install it again from the pinned wheels, which are
hash-checked again (``swamp extension install --reinstall``).

The record lives in the install's own folder, so it protects against
changes by anyone who cannot write there (which the modes make everyone
but the owner) and against accidental edits; the repository's ``.swamp``
folder must not be writable by others either."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from swamp.errors import TamperedInstallError
from swamp.extensions.index import sha256_of

DIR_MODE = 0o755
FILE_MODE = 0o644
EXEC_MODE = 0o755
#: mode bits that let someone other than the owner change a file or a folder's entries
OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH

#: files checked once per process (path -> the record they matched)
_checked: dict[str, dict] = {}


def seal(folder: Path, marker_name: str) -> dict[str, str]:
    """Compile, set modes and hash everything under ``folder`` (an install
    being made, not yet in place); relative path -> sha256."""
    _compile(folder)
    os.chmod(folder, DIR_MODE)
    files = {}
    for path in _walk(folder):
        if path.is_dir():
            os.chmod(path, DIR_MODE)
            continue
        executable = path.stat().st_mode & 0o111
        os.chmod(path, EXEC_MODE if executable else FILE_MODE)
        rel = path.relative_to(folder).as_posix()
        if rel != marker_name:
            files[rel] = sha256_of(path)
    return dict(sorted(files.items()))


def check(folder: Path, recorded: dict[str, str], marker_name: str, what: str) -> None:
    """Refuse ``folder`` unless it holds exactly the recorded files, unchanged,
    and nothing in it (nor the folder that holds it) is writable by others."""
    key = str(folder)
    if _checked.get(key) == recorded:
        return
    found = problems(folder, recorded, marker_name)
    if found:
        shown = "; ".join(found[:5]) + (f"; and {len(found) - 5} more" if len(found) > 5 else "")
        raise TamperedInstallError(
            f"{what}: the installed files are not the ones its pinned wheels unpacked to ({shown}); "
            "nothing of it was loaded",
            hint=f"someone or something changed {folder} after it was installed: find out who and tell your "
                 "team; then install it again from the pinned wheels, which are hash-checked again: "
                 "'swamp extension install --reinstall' (do not pin anything new because of this)")
    _checked[key] = recorded


def problems(folder: Path, recorded: dict[str, str], marker_name: str) -> list[str]:
    """What differs from the record, as ``<path> was changed`` and the like."""
    problems: list[str] = []
    for path in (folder.parent, folder):
        if _writable_by_others(path):
            problems.append(f"{path} is writable by others")
    seen = set()
    for path in _walk(folder):
        rel = path.relative_to(folder).as_posix()
        if _writable_by_others(path):
            problems.append(f"{rel} is writable by others")
        if path.is_dir() or rel == marker_name or _another_interpreters(path):
            continue
        seen.add(rel)
        want = recorded.get(rel)
        if want is None:
            problems.append(f"{rel} was added")
        elif sha256_of(path) != want:
            problems.append(f"{rel} was changed")
    problems += [f"{rel} was removed" for rel in sorted(set(recorded) - seen)]
    return problems


def forget(folder: Path) -> None:
    _checked.pop(str(folder), None)


def _compile(folder: Path) -> None:
    import compileall
    import warnings

    # quiet=2: a module that does not compile (a dependency's Python-2-only
    # test file, say) fails only if something imports it, as without bytecode;
    # nor do a dependency's SyntaxWarnings land in the command's output
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compileall.compile_dir(str(folder), quiet=2, workers=1)


def _another_interpreters(path: Path) -> bool:
    """A ``.pyc`` another Python version wrote (another tag): this one never
    reads it."""
    tag = sys.implementation.cache_tag
    return path.parent.name == "__pycache__" and path.suffix == ".pyc" and f".{tag}." not in path.name


def _writable_by_others(path: Path) -> bool:
    try:
        return bool(os.lstat(path).st_mode & OTHERS_WRITE)
    except OSError:
        return False


def _walk(folder: Path):
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        base = Path(dirpath)
        for d in dirnames:
            yield base / d
        for f in sorted(filenames):
            yield base / f
