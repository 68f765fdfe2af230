"""The model type registry: builtin types, local types loaded from
``extensions/models/*.py``, and the types of pinned extensions (found in the
lockfile without importing anything; an extension is put on the path, and
installed first if this machine lacks it, only when one of its types is
needed). A broken local file or extension is reported with its file and
line, and breaks only the commands that need a type from it."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from swamp.errors import NotFoundError, SwampError, TypeLoadError
from swamp.models.api import ModelType
from swamp.util.names import did_you_mean
from swamp.util.plain import Plain

if TYPE_CHECKING:
    from swamp.repo.context import Repo

BUILTINS = {
    "command/shell": "swamp.models.builtin.shell",
}
BUILTIN_TYPES = tuple(BUILTINS)


class LoadError(Plain):
    __slots__ = ("file", "line", "message")

    def __init__(self, file: str, line: int | None, message: str) -> None:
        self.file, self.line, self.message = file, line, message

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.message}"


class Registry:
    def __init__(self, extensions_dir: Path | None = None, repo: Repo | None = None) -> None:
        self.extensions_dir = extensions_dir
        self.repo = repo  # whose lockfile pins extensions (None: no extensions)
        self._types: dict[str, ModelType] = {}
        self._sources: dict[str, str] = {}
        self._duplicates: dict[str, list[str]] = {}  # type -> every file that defines it
        self.errors: list[LoadError] = []
        self._refusals: dict[str, SwampError] = {}  # extension -> why it could not be installed
        self._loaded_builtins = False
        self._loaded_locals = False
        self._loaded_sources = False

    def _load_builtins(self) -> None:
        if self._loaded_builtins:
            return
        self._loaded_builtins = True
        for name, module in BUILTINS.items():
            for t in _types_in(importlib.import_module(module)):
                self._add(t, "builtin")

    def _load_locals(self) -> None:
        if self._loaded_locals:
            return
        self._loaded_locals = True
        if self.extensions_dir is None or not self.extensions_dir.is_dir():
            return
        for path in sorted(self.extensions_dir.glob("*.py")):
            if path.name.startswith("_"):
                continue
            try:
                module = _import_file(path)
            except Exception as e:  # a broken extension must not break swamp
                self.errors.append(_load_error(path, e))
                continue
            for t in _types_in(module):
                if t.type in self._duplicates:
                    self._duplicates[t.type].append(str(path))
                elif self._sources.get(t.type) == "builtin":
                    self.errors.append(LoadError(str(path), None, f"type {t.type!r} is a builtin type; "
                                                                  "choose another name"))
                elif t.type in self._types:
                    # Neither wins: which one a command got would depend on file names.
                    self._duplicates[t.type] = [self._sources.pop(t.type), str(path)]
                    del self._types[t.type]
                else:
                    self._add(t, str(path))
        for name, files in sorted(self._duplicates.items()):
            self.errors.append(LoadError(files[-1], None,
                                         f"type {name!r} is defined in more than one file: {', '.join(files)}"))

    def _add(self, t: ModelType, source: str) -> None:
        self._types[t.type] = t
        self._sources[t.type] = source

    def _load_extension(self, name: str, entry) -> None:
        from swamp.extensions.runtime import load_pinned

        try:
            objects, failures = load_pinned(self.repo, name, entry)
        except SwampError as e:
            where = f"extension {name} {entry.version}"
            self.errors.append(LoadError(where, None, e.message.removeprefix(f"{where}: ")))
            self._refusals[name] = e
            return
        self.errors += [LoadError(f.file, f.line, f.message) for f in failures]
        for obj in objects:
            for t in types_of(obj):
                if t.type not in self._types:
                    self._add(t, f"extension {name} {entry.version}")

    def _load_sources(self) -> None:
        """Local checkouts (``extension source add``): all of them, fresh from
        their files, ahead of any pinned extension."""
        if self._loaded_sources or self.repo is None:
            return
        self._loaded_sources = True
        from swamp.extensions.runtime import load_source, sources

        for name, src in sorted(sources(self.repo).items()):
            objects, failures = load_source(src.get("path", ""))
            self.errors += [LoadError(f.file, f.line, f.message) for f in failures]
            for obj in objects:
                for t in types_of(obj):
                    if t.type not in self._types:
                        self._add(t, f"source {src.get('path')}")

    def _from_extensions(self, type_name: str) -> ModelType | None:
        if self.repo is None:
            return None
        from swamp.extensions.errors import failure_hint
        from swamp.extensions.runtime import provider, sources

        if sources(self.repo):
            self._load_sources()
            if type_name in self._types:
                return self._types[type_name]

        found = provider(self.repo, type_name)
        if found is None or found[0] in sources(self.repo):
            return None  # nobody pinned it, or a local checkout stands in for its extension
        name, entry = found
        before = len(self.errors)
        self._load_extension(name, entry)
        if type_name in self._types:
            return self._types[type_name]
        raise TypeLoadError(f"model type {type_name!r} comes from extension {name} {entry.version}, which "
                            "failed to load: " + "; ".join(str(e) for e in self.errors[before:]),
                            hint=failure_hint(self._refusals.get(name)) + "; types of other extensions still work")

    def all(self) -> list[ModelType]:
        self._load_builtins()
        self._load_locals()
        if self.repo is not None:
            from swamp.extensions.runtime import pinned, sources

            self._load_sources()
            for name, entry in sorted(pinned(self.repo).items()):
                if name in sources(self.repo):
                    continue  # its local checkout stands in for it
                self._load_extension(name, entry)
        return [self._types[k] for k in sorted(self._types)]

    def get(self, type_name: str) -> ModelType:
        self._load_builtins()
        if type_name in self._types:
            return self._types[type_name]
        self._load_locals()
        if type_name in self._types:
            return self._types[type_name]
        if type_name not in self._duplicates:
            found = self._from_extensions(type_name)
            if found is not None:
                return found
        if type_name in self._duplicates:
            raise TypeLoadError(f"model type {type_name!r} is defined in more than one file: "
                                + ", ".join(self._duplicates[type_name]),
                                hint="keep one definition of the type (rename or delete the others)")
        if self.errors:
            raise TypeLoadError(
                f"model type {type_name!r} is not available; extension files failed to load: "
                + "; ".join(str(e) for e in self.errors),
            )
        raise NotFoundError(f"unknown model type {type_name!r}",
                            hint=did_you_mean(type_name, self._types)
                            or "list types with 'swamp model type search'; an extension may provide it: "
                               f"'swamp extension search {type_name.split('/')[0]}', then "
                               "'swamp extension pull NAME'" + self._sync_hint())

    def _sync_hint(self) -> str:
        from swamp.extensions.lockfile import is_shared

        if self.repo is None or not is_shared(self.repo):
            return ""
        return " (if a teammate pinned it, run 'swamp datastore sync' first)"

    def source(self, type_name: str) -> str:
        return self._sources.get(type_name, "?")


def types_of(obj) -> list[ModelType]:
    """The model types an extension's entry point names: a ModelType, or a
    module holding some."""
    import types

    if isinstance(obj, ModelType):
        return [obj]
    return _types_in(obj) if isinstance(obj, types.ModuleType) else []


def local_type_names(repo: Repo) -> dict[str, str]:
    """Local type name -> the file in extensions/models that defines it."""
    reg = Registry(repo.extensions_dir)
    reg._load_locals()
    return {t: Path(src).name for t, src in reg._sources.items() if src != "builtin"}


def _types_in(module) -> list[ModelType]:
    return [v for v in vars(module).values() if isinstance(v, ModelType)]


def _import_file(path: Path):
    import importlib.util

    mod_name = f"swamp_ext_{path.stem}_{abs(hash(str(path))) & 0xFFFFFF:x}"
    spec = importlib.util.spec_from_file_location(mod_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(mod_name, None)
        raise
    return module


def _load_error(path: Path, e: BaseException) -> LoadError:
    import traceback

    line = getattr(e, "lineno", None) if isinstance(e, SyntaxError) else None
    if line is None:
        for frame in reversed(traceback.extract_tb(e.__traceback__)):
            if Path(frame.filename) == path:
                line = frame.lineno
                break
    msg = e.msg if isinstance(e, SyntaxError) else f"{type(e).__name__}: {e}"
    return LoadError(str(path), line, msg)


def registry_for(repo: Repo) -> Registry:
    return Registry(repo.extensions_dir if repo is not None else None, repo)
