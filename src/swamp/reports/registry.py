"""The report type registry: the builtin reports, local ones (any
``ReportType`` defined in ``extensions/reports/*.py`` or next to model types
in ``extensions/models/*.py``), and those of extensions (a ``ReportType``
in a module an extension's ``swamp.model_types`` entry point names, or
named by it directly). A broken file is reported, never fatal: it breaks
only the commands that need a report from it."""

from __future__ import annotations

import importlib
import sys
import types
from pathlib import Path
from typing import TYPE_CHECKING

from swamp.errors import NotFoundError, SwampError
from swamp.reports.api import ReportType
from swamp.util.names import did_you_mean

if TYPE_CHECKING:
    from swamp.repo.context import Repo

BUILTIN_MODULES = ("swamp.reports.builtin",)


def reports_in(obj) -> list[ReportType]:
    """The report types an extension's entry point leads to: a ReportType,
    a module holding some, or a model type's own module (the module its
    methods are defined in)."""
    if isinstance(obj, ReportType):
        return [obj]
    if isinstance(obj, types.ModuleType):
        return [v for v in vars(obj).values() if isinstance(v, ReportType)]
    found: list[ReportType] = []
    for name in sorted({getattr(m.fn, "__module__", None) or "" for m in getattr(obj, "methods", {}).values()}):
        module = sys.modules.get(name)
        if module is not None:
            found += [r for r in reports_in(module) if r not in found]
    return found


class ReportRegistry:
    def __init__(self, repo: Repo) -> None:
        self.repo = repo
        self._types: dict[str, ReportType] = {}
        self._sources: dict[str, str] = {}
        self.errors: list[str] = []
        self._loaded_local = False
        self._loaded_extensions = False
        for module in BUILTIN_MODULES:
            for r in reports_in(importlib.import_module(module)):
                self._add(r, "builtin")

    def _add(self, r: ReportType, source: str) -> None:
        if r.name in self._types:
            if self._sources[r.name] != source and self._types[r.name] is not r:
                self.errors.append(f"{source}: report {r.name!r} is already defined by {self._sources[r.name]}")
            return
        self._types[r.name] = r
        self._sources[r.name] = source

    def _local_dirs(self) -> list[Path]:
        if self.repo is None:
            return []
        return [self.repo.root / "extensions" / "reports", self.repo.extensions_dir]

    def _load_local(self) -> None:
        if self._loaded_local:
            return
        self._loaded_local = True
        from swamp.models.registry import _import_file, _load_error

        for folder in self._local_dirs():
            if not folder.is_dir():
                continue
            for path in sorted(folder.glob("*.py")):
                if path.name.startswith("_"):
                    continue
                module = _loaded_module(path)
                if module is None:
                    try:
                        module = _import_file(path)
                    except Exception as e:  # a broken file must not break swamp
                        self.errors.append(str(_load_error(path, e)))
                        continue
                for r in reports_in(module):
                    self._add(r, str(path.relative_to(self.repo.root)))

    def _load_extensions(self) -> None:
        if self._loaded_extensions or self.repo is None:
            return
        self._loaded_extensions = True
        try:
            from swamp.extensions.runtime import load_pinned, load_source, pinned, sources

            local = sources(self.repo)
            for name, src in sorted(local.items()):
                objects, failures = load_source(src.get("path", ""))
                self.errors += [f"{f.file}: {f.message}" for f in failures]
                for obj in objects:
                    for r in reports_in(obj):
                        self._add(r, f"source {src.get('path')}")
            for name, entry in sorted(pinned(self.repo).items()):
                if name in local:
                    continue
                objects, failures = load_pinned(self.repo, name, entry)
                self.errors += [f"{f.file}: {f.message}" for f in failures]
                for obj in objects:
                    for r in reports_in(obj):
                        self._add(r, f"extension {name} {entry.version}")
        except SwampError as e:
            self.errors.append(e.message)

    def all(self) -> list[ReportType]:
        self._load_local()
        self._load_extensions()
        return [self._types[k] for k in sorted(self._types)]

    def get(self, name: str) -> ReportType:
        if name not in self._types:
            self._load_local()
        if name not in self._types:
            self._load_extensions()
        if name in self._types:
            return self._types[name]
        hint = did_you_mean(name, self._types) or ("list report types with 'swamp report search'; "
                                                   f"available: {', '.join(sorted(self._types))}")
        if self.errors:
            hint += "; some extension files failed to load: " + "; ".join(self.errors)
        raise NotFoundError(f"unknown report {name!r}", hint=hint)

    def source(self, name: str) -> str:
        return self._sources.get(name, "?")


def _loaded_module(path: Path):
    """The module of a local extension file the model type registry already
    imported in this process (so it is not run twice)."""
    stem = f"swamp_ext_{path.stem}_{abs(hash(str(path))) & 0xFFFFFF:x}"
    return sys.modules.get(stem)
