"""Whether an extension's types load, checked in a clean Python process
(``python -I``, its directory on the path, an environment of only what a
Python needs to start): every entry point loads, its schemas are valid, its
methods described. An extension's import-time code runs there, never in
this process. ``extension pull``, ``check`` and ``source add`` ask it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def probe(target: Path, name: str) -> dict:
    """Load an installed extension's types in a clean Python process (its
    directory on the path, nothing else of the repository's) and check
    them: every entry point loads, schemas valid, methods described.
    Returns {"types", "errors": [{"file", "line", "message"}]}."""
    return _run_probe([str(target), name], target)


def probe_source(path: Path) -> dict:
    """The same check of a local checkout's types (``extension source add``)."""
    return _run_probe(["--source", str(path)], path)


def _run_probe(args: list[str], target: Path) -> dict:
    import swamp

    # -I: no PYTHONPATH, no user site, not the current directory; only swamp
    # itself is put back, wherever this swamp was imported from.
    home = str(Path(swamp.__file__).resolve().parent.parent)
    code = f"import sys; sys.path.insert(0, {home!r}); from swamp.app.extension_probe import probe_main; probe_main()"
    proc = subprocess.run([sys.executable, "-I", "-c", code, *args], capture_output=True, text=True,
                          env=_probe_environment())
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        return {"types": [], "errors": [{"file": str(target), "line": None,
                                         "message": "loading it crashed: " + " / ".join(tail)}]}


#: all the probe gets of this process's environment: what a Python needs to
#: start and import, never this process's tokens, keys or webhook secrets
#: (an extension's import-time code runs in the probe, before anyone used it)
PROBE_ENVIRONMENT = ("PATH", "HOME", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ", "SYSTEMROOT")


def _probe_environment() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k in PROBE_ENVIRONMENT}


def _probe_here(target: Path, name: str | None) -> dict:
    """``name`` None: ``target`` is a local checkout, not an install."""
    from dataclasses import asdict

    from swamp.extensions.environment import (MODEL_TYPES_GROUP, REPORT_TYPES_GROUP, VAULT_TYPES_GROUP, load,
                                              load_source)
    from swamp.models.registry import types_of

    def objects_of(group):
        return load(target, name, (group,)) if name is not None else load_source(target, (group,))

    objects, failures = objects_of(MODEL_TYPES_GROUP)
    errors = [asdict(f) for f in failures]
    vault = _probe_vault_types(*objects_of(VAULT_TYPES_GROUP), target)
    reports = _probe_report_types(objects, *objects_of(REPORT_TYPES_GROUP), target)
    errors += vault["errors"] + reports["errors"]
    types = []
    for obj in objects:
        found = types_of(obj)
        if not found:
            errors.append({"file": str(getattr(obj, "__file__", target)), "line": None,
                           "message": f"{obj!r} is neither a ModelType nor a module holding one"[:300]})
        for t in found:
            try:
                t.describe()  # every schema turns into JSON schema
            except Exception as e:
                errors.append({"file": _file_of(t), "line": None,
                               "message": f"type {t.type}: invalid schema: {type(e).__name__}: {e}"})
                continue
            for m in sorted(t.methods.values(), key=lambda m: m.name):
                if not (m.description or "").strip():
                    errors.append({"file": _file_of(t), "line": _line_of(m.fn),
                                   "message": f"type {t.type}: method {m.name} has no description"})
            types.append(t.type)
    unique = list({json.dumps(e, sort_keys=True): e for e in errors}.values())  # each group says "declares nothing"
    return {"types": sorted(set(types)), "vaultTypes": vault["types"], "reportTypes": reports["types"],
            "errors": unique}


def _probe_vault_types(objects: list, failures: list, target: Path) -> dict:
    """Each ``swamp.vault_types`` entry point names a vault type whose
    description and settings describe themselves."""
    from dataclasses import asdict

    from swamp.errors import SwampError
    from swamp.vault.registry import as_vault_type

    errors, types = [asdict(f) for f in failures], []
    for obj in objects:
        where = str(getattr(obj, "__file__", None) or getattr(sys.modules.get(getattr(obj, "__module__", "")),
                                                               "__file__", None) or target)
        what = getattr(obj, "__name__", None) or type(obj).__name__
        try:
            vt = as_vault_type(obj, f"vault type {what}")
            vt.describe()
        except SwampError as e:
            errors.append({"file": where, "line": _class_line(obj), "message": e.message})
            continue
        except Exception as e:
            errors.append({"file": where, "line": _class_line(obj),
                           "message": f"vault type {what}: {type(e).__name__}: {e}"})
            continue
        types.append(vt.name)
    return {"types": sorted(set(types)), "errors": errors}


def _class_line(obj) -> int | None:
    import inspect

    try:
        return inspect.getsourcelines(obj if isinstance(obj, type) else type(obj))[1]
    except (OSError, TypeError):
        return None


def _probe_report_types(model_objects: list, objects: list, failures: list, target: Path) -> dict:
    """The report types: those ``swamp.report_types`` names, and those in a
    model type's module (as the report registry finds them)."""
    from dataclasses import asdict

    from swamp.reports.registry import reports_in

    errors, names = [asdict(f) for f in failures], []
    for obj in objects:
        found = reports_in(obj)
        if not found:
            errors.append({"file": str(getattr(obj, "__file__", target)), "line": None,
                           "message": f"{obj!r} is neither a ReportType nor a module holding one"[:300]})
        names += [r.name for r in found]
    for obj in model_objects:
        names += [r.name for r in reports_in(obj)]
    return {"types": sorted(set(names)), "errors": errors}


def _file_of(t) -> str:
    for m in t.methods.values():
        return m.fn.__code__.co_filename
    return "?"


def _line_of(fn) -> int | None:
    return getattr(getattr(fn, "__code__", None), "co_firstlineno", None)


def probe_main() -> None:
    """The clean process ``probe`` starts."""
    if sys.argv[1] == "--source":
        print(json.dumps(_probe_here(Path(sys.argv[2]), None)))
    else:
        print(json.dumps(_probe_here(Path(sys.argv[1]), sys.argv[2])))
