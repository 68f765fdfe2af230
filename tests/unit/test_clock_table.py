"""docs/sync.md's clock table names, for each time the protocol compares,
the tests that show whose clock it uses (issue 24): every test it names
exists, so the table cannot quietly point at nothing."""

from __future__ import annotations

import re

from tests.helpers import REPO_ROOT


def _named_tests() -> list[tuple[str, str]]:
    page = (REPO_ROOT / "docs" / "sync.md").read_text()
    section = page.split("\n## Clocks\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and "tests/" in line]
    named = []
    for row in rows:
        where = None
        for token in re.findall(r"`([^`]+)`", row.split("|")[-2]):
            if token.startswith("tests/"):
                where, _, name = token.partition("::")
                if name:
                    named.append((where, name))
            elif token.startswith("test_") and where:
                named.append((where, token))
    return named


def test_every_test_the_clock_table_names_exists():
    named = _named_tests()
    assert len(named) >= 10
    missing = [f"{where}::{name}" for where, name in named
               if not (REPO_ROOT / where).is_file()
               or f"def {name}(" not in (REPO_ROOT / where).read_text()]
    assert not missing, missing
