"""Resolving an extension with its dependencies into wheels, outside any
lease: pip's resolver downloads the wheels into a staging directory, from
the one index given, ignoring the user's pip configuration (a pin must not
depend on an extra index someone's machine happens to have)."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from swamp.errors import ExtensionError, IndexError_
from swamp.extensions.index import Index, parse_wheel_name, path_of, sha256_of
from swamp.extensions.install import compatible
from swamp.extensions.lockfile import Wheel
from swamp.extensions.names import normalize
from swamp.extensions.versions import latest


@dataclass
class Staged:
    name: str
    version: str
    index: str
    wheels: list[Wheel]
    files: dict[str, Path]


def pick_version(index: Index, name: str, version: str | None) -> str:
    files = [f for f in index.files(name) if not f.yanked or version is not None]
    versions = sorted({f.version for f in files})
    if not versions:
        raise IndexError_(f"the index {index.url} has no wheel of {name!r}",
                          hint=f"look for it with 'swamp extension search {name}', or pass another --index")
    if version is None:
        return latest(versions)
    if version not in versions:
        raise IndexError_(f"the index {index.url} has no wheel of {name} {version}",
                          hint="versions there: " + ", ".join(versions[-10:]))
    return version


def stage(index: Index, name: str, version: str | None, dest: Path) -> Staged:
    """Download NAME==VERSION (the newest when None) and its dependencies
    into ``dest`` as wheels; every wheel hashed."""
    name = normalize(name)
    version = pick_version(index, name, version)
    alone = _without_dependencies(index, name, version, dest)
    if alone is not None:
        return alone
    if index.url.startswith("file:"):
        where = ["--no-index", "--find-links", str(path_of(index.url))]
    else:
        where = ["--index-url", index.url]
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
           "--only-binary", ":all:", "--dest", str(dest), *where, f"{name}=={version}"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    except OSError as e:
        raise ExtensionError(f"could not run pip: {e}", hint="install pip into swamp's environment") from None
    if proc.returncode != 0:
        tail = [ln for ln in (proc.stderr or proc.stdout).splitlines() if ln.strip()][-4:]
        if "No module named pip" in proc.stderr:
            raise ExtensionError("resolving an extension's dependencies needs pip in swamp's environment",
                                 hint=f"{sys.executable} -m ensurepip")
        raise IndexError_(f"could not resolve {name}=={version} from {index.url}: " + " / ".join(tail),
                          hint="every dependency must be on the same index, as a wheel")
    wheels, files = [], {}
    for path in sorted(dest.iterdir()):
        parsed = parse_wheel_name(path.name)
        if parsed is None:
            raise ExtensionError(f"{path.name}: only wheels can be installed (no sdist builds)")
        wheels.append(Wheel(project=parsed[0], version=parsed[1], filename=path.name, sha256=sha256_of(path)))
        files[path.name] = path
    if not any(w.project == name for w in wheels):
        raise ExtensionError(f"pip resolved {name}=={version} but downloaded no wheel of it")
    return Staged(name, version, index.url, wheels, files)


def _without_dependencies(index: Index, name: str, version: str, dest: Path) -> Staged | None:
    """Most extensions depend on nothing but swamp: download the one wheel
    that fits this interpreter and, when its metadata requires nothing,
    that is the whole resolution (no pip process). None: let pip resolve."""
    files = [f for f in index.files(name) if f.version == version and compatible(f.filename)]
    if not files:
        return None
    f = sorted(files, key=lambda f: (not f.filename.endswith("-none-any.whl"), f.filename))[0]
    path = dest / f.filename
    digest = index.download(f, path)
    if _requires(path):
        path.unlink()
        return None
    wheel = Wheel(project=name, version=version, filename=f.filename, sha256=digest)
    return Staged(name, version, index.url, [wheel], {f.filename: path})


def _requires(wheel: Path) -> list[str]:
    """The wheel's Requires-Dist lines that apply whatever the extras (a
    requirement under an ``extra ==`` marker is only wanted with that extra)."""
    import zipfile
    from email.parser import HeaderParser

    try:
        with zipfile.ZipFile(wheel) as z:
            meta = next((n for n in z.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")),
                        None)
            if meta is None:
                return ["?"]  # no metadata: let pip look
            headers = HeaderParser().parsestr(z.read(meta).decode("utf-8", "replace"))
    except (zipfile.BadZipFile, OSError):
        return ["?"]
    return [r for r in headers.get_all("Requires-Dist") or [] if "extra ==" not in r.replace("extra==", "extra ==")]
