"""The one screen that names what swamp does (the docstring of swamp.app,
issue #27): every module of the application layer is on it, and every use
case it names exists, so the list cannot drift from the code."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import swamp.app

APP = Path(swamp.app.__file__).parent


def _catalog() -> dict[str, list[str]]:
    """module -> the functions the docstring lists for it."""
    doc = swamp.app.__doc__
    block = doc[doc.index("Every use case"):doc.index("tests/unit/test_app_catalog.py")]
    block = re.sub(r"\([^)]*\)", "", block.split("\n", 1)[1])  # notes in parentheses are prose
    out: dict[str, list[str]] = {}
    module = None
    for line in block.splitlines():
        tokens = line.split()
        if re.match(r"^  \S", line):
            tokens = tokens[1:]  # the area column
        for token in tokens:
            if token.endswith(":"):
                module = token[:-1]
                out.setdefault(module, [])
            elif module is not None:
                out[module].append(token)
    return out


def test_every_app_module_is_on_the_catalog():
    catalog = _catalog()
    doc = swamp.app.__doc__
    modules = sorted(p.stem for p in APP.glob("*.py") if p.stem != "__init__")
    missing = [m for m in modules if m not in catalog and f"{m}." not in doc]
    assert not missing, f"add these app/ modules and their use cases to swamp/app/__init__.py: {missing}"


def test_every_use_case_the_catalog_names_exists():
    wrong = []
    for module, names in sorted(_catalog().items()):
        loaded = importlib.import_module(f"swamp.app.{module}")
        wrong += [f"{module}.{n}" for n in names if not callable(getattr(loaded, n, None))]
    assert not wrong, f"swamp/app/__init__.py names use cases that do not exist: {wrong}"


def test_the_catalog_is_read_as_written():
    catalog = _catalog()
    assert catalog["repository"] == ["open_repo", "repo_root"]
    assert "run_method" in catalog["methods"] and "run_step" in catalog["remote_steps"]
    assert "models" not in catalog["repo_setup"]  # an area word is not a use case
