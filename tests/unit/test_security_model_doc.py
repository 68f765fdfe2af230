"""docs/serve.md's security model says what each party can and cannot do,
each line backed by a named test: every test it names must exist, so a
renamed or deleted test cannot leave a promise standing with nothing
behind it."""

from __future__ import annotations

import ast
import re

from tests.helpers import REPO_ROOT


def _section() -> str:
    text = (REPO_ROOT / "docs/serve.md").read_text()
    start = text.index("## Security model")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def _named_tests() -> list[tuple[str, str | None]]:
    """(file, test) for each `tests/x.py::name`, `::name` (the file named
    last before it) and bare `tests/x.py` the section names."""
    named, last = [], None
    for path, name, more in re.findall(r"`(tests/[\w/]+\.py)(?:::(\w+))?`|`::(\w+)`", _section()):
        last = path or last
        named.append((last, name or more or None))
    return named


def _definitions(path: str) -> set[str]:
    tree = ast.parse((REPO_ROOT / path).read_text())
    return {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def test_the_security_model_names_tests():
    assert len(_named_tests()) >= 30


def test_every_test_the_security_model_names_exists():
    missing = []
    for path, name in _named_tests():
        if not (REPO_ROOT / path).is_file():
            missing.append(path)
        elif name and name not in _definitions(path):
            missing.append(f"{path}::{name}")
    assert not missing, f"docs/serve.md's security model names tests that do not exist: {missing}"
