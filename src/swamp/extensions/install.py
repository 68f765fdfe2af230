"""Installing an extension into the repository, isolated.

Each pinned extension gets its own directory under the repository's local
state, ``.swamp/cache/extensions/<name>-<version>/``, holding the unpacked
wheels of the extension and of its dependencies (never the user's Python
environment). Nothing puts it on ``sys.path`` until a type from it is
needed, and then at the end, so swamp's own packages always win and two
extensions' dependencies cannot break swamp.

``cache/`` is local-only: an install is never synced; the lockfile is what
peers share, and every peer installs from it, checking every wheel's sha256
against the pin before unpacking it. A directory is complete once its marker
(``.swamp-install.json``, the pinned hashes) is in it, and it only appears
under its final name by a rename, so an install killed half-way is simply
done again."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import uuid
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from swamp.errors import ExtensionError, HashMismatchError, IndexError_
from swamp.extensions import install_integrity as integrity
from swamp.extensions.index import Index, sha256_of
from swamp.extensions.lockfile import Entry

if TYPE_CHECKING:
    from swamp.repo.context import Repo

MARKER = ".swamp-install.json"
#: wheels downloaded at once by one install
PARALLEL = 8


def root(repo: Repo) -> Path:
    return repo.local_dir / "cache" / "extensions"


def target(repo: Repo, name: str, entry: Entry) -> Path:
    return root(repo) / f"{name}-{entry.version}"


def _marker_doc(name: str, entry: Entry) -> dict:
    return {"name": name, "version": entry.version, "sha256": sorted(w.sha256 for w in entry.wheels)}


def _read_marker(repo: Repo, name: str, entry: Entry) -> dict | None:
    """The install's marker when it is an install of exactly these pins, made
    by a swamp that seals installs (an older one recorded no files: such an
    install is simply made again)."""
    try:
        doc = json.loads((target(repo, name, entry) / MARKER).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("files"), dict):
        return None
    return doc if {k: doc.get(k) for k in ("name", "version", "sha256")} == _marker_doc(name, entry) else None


def is_installed(repo: Repo, name: str, entry: Entry) -> bool:
    return _read_marker(repo, name, entry) is not None


def verify(repo: Repo, name: str, entry: Entry) -> None:
    """Refuse an install whose files changed since it was made (see
    ``install_integrity``); call before importing anything from it."""
    doc = _read_marker(repo, name, entry)
    if doc is None:
        raise ExtensionError(f"{name} {entry.version} is not installed here",
                             hint="swamp extension install")
    integrity.check(target(repo, name, entry), doc["files"], MARKER, f"extension {name} {entry.version}")


def changed_files(repo: Repo, name: str, entry: Entry) -> list[str]:
    """What differs in an install from what was installed ([] when it is
    intact or not installed)."""
    doc = _read_marker(repo, name, entry)
    return integrity.problems(target(repo, name, entry), doc["files"], MARKER) if doc else []


def ensure(repo: Repo, name: str, entry: Entry) -> Path:
    """The extension's directory, installed first if it is not (the pinned
    wheels, downloaded from the pinned index, hash-checked), and checked
    unchanged since."""
    if not is_installed(repo, name, entry):
        with _scratch(repo) as stage:
            files = download_pinned(entry, stage)
            install_files(repo, name, entry, files)
    verify(repo, name, entry)
    return target(repo, name, entry)


def download_pinned(entry: Entry, stage: Path) -> dict[str, Path]:
    """Download exactly the pinned wheels into ``stage``; a wheel whose bytes
    are not the pinned sha256 is refused."""
    index = Index(entry.index)
    projects = sorted({w.project for w in entry.wheels})

    def listing(project):
        return project, {f.filename: f for f in index.files(project)}

    with ThreadPoolExecutor(min(PARALLEL, len(projects) or 1)) as pool:
        listed = dict(pool.map(listing, projects))

    def fetch(w):
        f = listed[w.project].get(w.filename)
        if f is None:
            raise IndexError_(f"{w.filename} (pinned) is no longer on the index {index.url}",
                              hint="pin a version the index has: 'swamp extension pull NAME==VERSION'")
        dest = stage / w.filename
        digest = index.download(f, dest)
        _check_hash(w.filename, w.sha256, digest, index.url)
        return w.filename, dest

    with ThreadPoolExecutor(min(PARALLEL, len(entry.wheels) or 1)) as pool:
        return dict(pool.map(fetch, entry.wheels))


def _check_hash(filename: str, pinned: str, actual: str, where: str) -> None:
    if pinned != actual:
        raise HashMismatchError(
            f"{filename} from {where} has sha256 {actual}, but the lockfile pins {pinned}; not installed",
            hint=f"nothing was installed or run. The file on {where} is not the one the team pinned: "
                 "do not pin it again; tell your team and whoever runs the index (a changed release "
                 "ships under a new version number)")


def install_files(repo: Repo, name: str, entry: Entry, files: dict[str, Path]) -> Path:
    """Unpack the pinned wheels (``files``: filename -> local path) into the
    extension's directory, after checking every hash against the pin."""
    for w in entry.wheels:
        path = files.get(w.filename)
        if path is None:
            raise ExtensionError(f"{w.filename} (pinned) was not downloaded")
        _check_hash(w.filename, w.sha256, sha256_of(path), str(path.parent))
    for w in entry.wheels:
        if not compatible(w.filename):
            raise ExtensionError(f"{w.filename} (pinned for {name} {entry.version}) is built for another "
                                 "platform or Python than this machine's",
                                 hint="pin a version with a pure-Python wheel, or one built for every platform "
                                      "the team uses ('swamp extension pull NAME==VERSION' on this machine)")
    final = target(repo, name, entry)
    make_root(repo)
    tmp = root(repo) / f".partial-{name}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        tmp.mkdir()
        for w in sorted(entry.wheels, key=lambda w: w.filename):
            unpack(files[w.filename], tmp)
        recorded = integrity.seal(tmp, MARKER)
        (tmp / MARKER).write_text(json.dumps({**_marker_doc(name, entry), "files": recorded}, sort_keys=True))
        os.chmod(tmp / MARKER, integrity.FILE_MODE)
        integrity.forget(final)
        _move_into_place(tmp, final, name, entry, repo)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final


def make_root(repo: Repo) -> Path:
    """The folder of every install, not writable by others (whatever the
    umask it was first made under), nor is the cache folder that holds it."""
    base = root(repo)
    base.mkdir(parents=True, exist_ok=True)
    for d in (base.parent, base):
        mode = d.stat().st_mode
        if mode & integrity.OTHERS_WRITE:
            os.chmod(d, mode & 0o7777 & ~integrity.OTHERS_WRITE)
    return base


def _move_into_place(tmp: Path, final: Path, name: str, entry: Entry, repo: Repo) -> None:
    if final.exists():
        if is_installed(repo, name, entry):
            return  # another process installed the same pins meanwhile
        old = final.with_name(f".old-{final.name}-{uuid.uuid4().hex[:8]}")
        try:
            os.rename(final, old)
        except FileNotFoundError:
            old = None
        try:
            os.rename(tmp, final)
        finally:
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
        return
    try:
        os.rename(tmp, final)
    except OSError:
        if not is_installed(repo, name, entry):
            raise


def compatible(filename: str) -> bool:
    """Whether this interpreter can use a wheel, by its file name's tags
    (always true when no tag library is at hand: the import then says)."""
    try:
        from packaging.tags import sys_tags
        from packaging.utils import parse_wheel_filename
    except ImportError:
        try:
            from pip._vendor.packaging.tags import sys_tags
            from pip._vendor.packaging.utils import parse_wheel_filename
        except ImportError:
            return True
    try:
        tags = parse_wheel_filename(filename)[3]
    except Exception:
        return True
    global _HERE
    if _HERE is None:
        _HERE = frozenset(sys_tags())
    return bool(tags & _HERE)


_HERE: frozenset | None = None


def unpack(wheel: Path, dest: Path) -> None:
    """Unpack a wheel as an installer would for a target directory: its
    files, and the ``purelib``/``platlib`` parts of its ``.data``; scripts,
    headers and data files are not needed to import it."""
    try:
        zf = zipfile.ZipFile(wheel)
    except zipfile.BadZipFile:
        raise ExtensionError(f"{wheel.name} is not a valid wheel (not a zip file)") from None
    with zf:
        for info in zf.infolist():
            rel = info.filename
            if info.is_dir():
                continue
            parts = rel.split("/")
            if rel.startswith("/") or ".." in parts or "\\" in rel:
                raise ExtensionError(f"{wheel.name}: refusing a file outside the wheel ({rel!r})")
            if parts[0].endswith(".data"):
                if len(parts) < 3 or parts[1] not in ("purelib", "platlib"):
                    continue
                parts = parts[2:]
            out = dest.joinpath(*parts)
            out.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, open(out, "wb") as dst:
                shutil.copyfileobj(src, dst)
            mode = (info.external_attr >> 16) & 0o777
            # set, not left to the umask: installed code is never writable by others
            os.chmod(out, integrity.EXEC_MODE if mode & 0o111 else integrity.FILE_MODE)


class _scratch:
    """A staging directory under the repository's local state, removed after."""

    def __init__(self, repo: Repo) -> None:
        self.repo = repo

    def __enter__(self) -> Path:
        make_root(self.repo)
        self.path = Path(tempfile.mkdtemp(prefix=".stage-", dir=root(self.repo)))
        return self.path

    def __exit__(self, *exc) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def scratch(repo: Repo) -> _scratch:
    return _scratch(repo)


def remove(repo: Repo, name: str, *, keep: str | None = None) -> list[str]:
    """Remove every installed version of an extension (but the directory
    ``keep``); the names removed."""
    removed = []
    base = root(repo)
    if base.is_dir():
        for d in base.iterdir():
            if d.is_dir() and not d.name.startswith(".") and d.name.rsplit("-", 1)[0] == name and d.name != keep:
                shutil.rmtree(d, ignore_errors=True)
                removed.append(d.name)
    return sorted(removed)


def prune(repo: Repo, pinned: dict[str, Entry]) -> list[str]:
    """Remove installed directories the lockfile no longer pins."""
    keep = {target(repo, n, e).name for n, e in pinned.items()}
    removed = []
    base = root(repo)
    if base.is_dir():
        for d in base.iterdir():
            if d.is_dir() and not d.name.startswith(".") and d.name not in keep:
                shutil.rmtree(d, ignore_errors=True)
                removed.append(d.name)
    return sorted(removed)
