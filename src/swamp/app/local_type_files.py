"""`swamp doctor extensions`: the local model-type files
(``extensions/models/*.py``) that do not load. A command that needs none of
their types works on regardless, and `model type search` only warns, so
without this check a file with a syntax error or a version that is not
CalVer goes unnoticed until a run needs its type."""

from __future__ import annotations


def local_type_problems(repo) -> tuple[list[str], list[tuple[str, str, str]]]:
    """(the local types that load, sorted; [(check name, message, hint)] for
    each file that does not, sorted by file)."""
    from pathlib import Path

    from swamp.models.registry import Registry

    registry = Registry(repo.extensions_dir)
    registry._load_locals()
    loaded = sorted(t for t, source in registry._sources.items() if source != "builtin")
    problems = []
    for error in sorted(registry.errors, key=lambda e: (e.file, e.line or 0)):
        name = Path(error.file).name
        where = f"extensions/models/{name}" + (f":{error.line}" if error.line else "")
        problems.append((f"extensions.local.{name}", f"{where}: {error.message}",
                         "fix the file: its types are missing from 'swamp model type search' and every "
                         "command that needs one fails"))
    return loaded, problems
