"""Loading what an installed extension provides: the objects its
distribution declares under swamp's entry point groups: ``swamp.model_types``
(each a model type, or a module whose model types are taken),
``swamp.report_types`` (a report type, or a module holding some) and
``swamp.vault_types`` (a vault type, a class building one, or a module with
a ``VAULT_TYPE``). An extension declares at least one of them.

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
#: ... its report types (report types in a model type's module count too)
REPORT_TYPES_GROUP = "swamp.report_types"
#: ... its vault types (the same group swamp's own environment is searched in)
VAULT_TYPES_GROUP = "swamp.vault_types"
#: ... a folder of its workflows (extensions/workflows.py): YAML read as data, never imported
WORKFLOWS_GROUP = "swamp.workflows"
#: every group an extension may declare (one that declares none is no extension)
GROUPS = (MODEL_TYPES_GROUP, REPORT_TYPES_GROUP, VAULT_TYPES_GROUP, WORKFLOWS_GROUP)
#: what a model or report type lookup loads (vault types load only when a vault needs them)
TYPE_GROUPS = (MODEL_TYPES_GROUP, REPORT_TYPES_GROUP)


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


def _no_entry_points(name: str) -> str:
    return f"{name} declares no entry point in the groups " + ", ".join(repr(g) for g in GROUPS)


def load(target: Path, name: str, groups: tuple[str, ...] = TYPE_GROUPS) -> tuple[list, list[Failure]]:
    """(the objects the extension's entry points in ``groups`` point at, the
    failures), each failure with the file and line where it went wrong. An
    extension with nothing in these groups (a vault type only, say) loads
    nothing and fails nothing; one with nothing in any group is a failure."""
    dist = distribution(target, name)
    if dist is None:
        return [], [Failure(str(target), None, f"no installed distribution named {name!r}")]
    declared = [ep for ep in dist.entry_points if ep.group in GROUPS]
    if not declared:
        return [], [Failure(str(target), None, _no_entry_points(name))]
    eps = [ep for ep in declared if ep.group in groups]
    if not eps:
        return [], []
    activate(target)
    objects, failures = [], []
    for ep in sorted(eps, key=lambda e: (e.group, e.name)):
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


def source_entry_points(path: Path, groups: tuple[str, ...] = GROUPS) -> dict[str, str]:
    """The entry points (of ``groups``) a checkout's pyproject.toml declares,
    as ``group:name`` -> value."""
    import tomllib

    doc = tomllib.loads((path / "pyproject.toml").read_text())
    declared = (doc.get("project") or {}).get("entry-points") or {}
    return {f"{g}:{k}": str(v) for g in groups for k, v in (declared.get(g) or {}).items()}


def load_source(path: Path, groups: tuple[str, ...] = TYPE_GROUPS) -> tuple[list, list[Failure]]:
    """Like ``load``, for a local checkout that is not built or installed:
    its entry points read from pyproject.toml, its modules imported from
    its source directory."""
    try:
        if not source_entry_points(path):
            return [], [Failure(str(path / "pyproject.toml"), None,
                                "declares no entry point in the groups " + ", ".join(repr(g) for g in GROUPS))]
        eps = source_entry_points(path, groups)
    except (OSError, ValueError) as e:
        return [], [Failure(str(path / "pyproject.toml"), None, f"cannot read it: {e}")]
    if not eps:
        return [], []
    root = source_dir(path)
    activate(root)
    objects, failures = [], []
    for key, value in sorted(eps.items()):
        name = key.split(":", 1)[1]
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
