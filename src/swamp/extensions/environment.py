"""Loading what an installed extension provides: the objects its
distribution declares under the entry point group ``swamp.model_types``
(each a model type, or a module whose model types are taken).

The extension's directory goes on ``sys.path`` only here, when one of its
types is needed, and at the end, so swamp's own modules always win."""

from __future__ import annotations

import importlib
import importlib.metadata
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

from swamp.extensions.names import normalize

#: the entry point group an extension declares its model types in
MODEL_TYPES_GROUP = "swamp.model_types"


@dataclass
class Failure:
    file: str
    line: int | None
    message: str


def activate(target: Path) -> None:
    path = str(target)
    if path not in sys.path:
        sys.path.append(path)
        importlib.invalidate_caches()


def distribution(target: Path, name: str):
    for dist in importlib.metadata.distributions(path=[str(target)]):
        if normalize(dist.metadata["Name"] or "") == normalize(name):
            return dist
    return None


def load(target: Path, name: str) -> tuple[list, list[Failure]]:
    """(the objects the extension's entry points point at, the failures),
    each failure with the file and line where it went wrong."""
    dist = distribution(target, name)
    if dist is None:
        return [], [Failure(str(target), None, f"no installed distribution named {name!r}")]
    eps = [ep for ep in dist.entry_points if ep.group == MODEL_TYPES_GROUP]
    if not eps:
        return [], [Failure(str(target), None, f"{name} declares no entry point in the group "
                                               f"{MODEL_TYPES_GROUP!r}")]
    activate(target)
    objects, failures = [], []
    for ep in sorted(eps, key=lambda e: e.name):
        try:
            obj = ep.load()
        except Exception as e:  # a broken extension must not break swamp
            failures.append(failure_of(e, target, f"entry point {ep.name} = {ep.value}"))
            continue
        objects.append(obj)
    return objects, failures


def failure_of(e: BaseException, target: Path, what: str) -> Failure:
    """Where in the extension's own files an exception came from."""
    if isinstance(e, SyntaxError) and e.filename:
        return Failure(e.filename, e.lineno, f"{what}: SyntaxError: {e.msg}")
    file, line = str(target), None
    for frame in traceback.extract_tb(e.__traceback__):
        if frame.filename.startswith(str(target)):
            file, line = frame.filename, frame.lineno
    return Failure(file, line, f"{what}: {type(e).__name__}: {e}")


def source_dir(path: Path) -> Path:
    """Where a checkout's modules are imported from: ``src/`` when it has one."""
    return path / "src" if (path / "src").is_dir() else path


def source_entry_points(path: Path) -> dict[str, str]:
    """The ``swamp.model_types`` entry points a checkout's pyproject.toml declares."""
    import tomllib

    doc = tomllib.loads((path / "pyproject.toml").read_text())
    eps = ((doc.get("project") or {}).get("entry-points") or {}).get(MODEL_TYPES_GROUP) or {}
    return {str(k): str(v) for k, v in eps.items()}


def load_source(path: Path) -> tuple[list, list[Failure]]:
    """Like ``load``, for a local checkout that is not built or installed:
    its entry points read from pyproject.toml, its modules imported from
    its source directory."""
    try:
        eps = source_entry_points(path)
    except (OSError, ValueError) as e:
        return [], [Failure(str(path / "pyproject.toml"), None, f"cannot read it: {e}")]
    if not eps:
        return [], [Failure(str(path / "pyproject.toml"), None,
                            f"declares no entry point in the group {MODEL_TYPES_GROUP!r}")]
    root = source_dir(path)
    activate(root)
    objects, failures = [], []
    for name, value in sorted(eps.items()):
        module, _, attr = value.partition(":")
        try:
            obj = importlib.import_module(module.strip())
            for part in filter(None, attr.strip().split(".")):
                obj = getattr(obj, part)
        except Exception as e:
            failures.append(failure_of(e, root, f"entry point {name} = {value}"))
            continue
        objects.append(obj)
    return objects, failures
