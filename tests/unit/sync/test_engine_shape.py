"""The sync engine's shape (docs/sync.md "Where the code is"): collaborators
handed the engine state, not mixins reaching into each other. Read from the
source (ast), so a regression names the file and the line."""

from __future__ import annotations

import ast
from pathlib import Path

SYNC = Path(__file__).resolve().parents[3] / "src" / "swamp" / "datastore" / "sync"

MAX_FILE_LINES = 600
MAX_CLASS_LINES = 300
MAX_FUNCTION_LINES = 80


def _parsed() -> list[tuple[Path, ast.Module, int]]:
    out = []
    for path in sorted(SYNC.glob("*.py")):
        text = path.read_text()
        out.append((path, ast.parse(text, str(path)), len(text.splitlines())))
    return out


def _length(node: ast.AST) -> int:
    return node.end_lineno - node.lineno + 1  # type: ignore[attr-defined]


def test_no_file_class_or_function_of_the_sync_engine_is_too_long_to_read():
    too_long = []
    for path, tree, lines in _parsed():
        if lines > MAX_FILE_LINES:
            too_long.append(f"{path.name}: {lines} lines")
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and _length(node) > MAX_CLASS_LINES:
                too_long.append(f"{path.name}:{node.lineno}: class {node.name}, {_length(node)} lines")
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _length(node) > MAX_FUNCTION_LINES:
                too_long.append(f"{path.name}:{node.lineno}: {node.name}(), {_length(node)} lines")
    assert too_long == []


def test_the_engine_is_built_of_collaborators_not_mixins():
    tree = ast.parse((SYNC / "engine.py").read_text())
    (engine,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "SyncEngine"]
    assert engine.bases == []


def test_collaborators_reach_each_other_only_through_public_names():
    """``self.<collaborator>._private`` (or ``self.ctx._private``) would be
    the mixins' coupling back under another name."""
    reaching = []
    for path, tree, _lines in _parsed():
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                    and isinstance(node.value, ast.Attribute) and isinstance(node.value.value, ast.Name)
                    and node.value.value.id == "self"):
                reaching.append(f"{path.name}:{node.lineno}: self.{node.value.attr}.{node.attr}")
    assert reaching == []
