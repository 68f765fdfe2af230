"""A data read (`data get`, serve's GET /api/v1/data/MODEL/NAME) finds its
model through the lookup that is remembered while models/ is unchanged
(models/definition_lookup.py): walking the definitions tree on every read
was two thirds of a serve read's time (py-spy), halving serve's reads per
second. A definition removed (or changed, or added) is seen by the next read."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from swamp.app import data as data_use_cases
from swamp.app.repository import open_repo
from swamp.errors import NotFoundError
from swamp.models import definition_files
from tests.helpers import init_repo, ok

SETTLED_S = 5  # older than file_stamps.RACY_NS: a stamp the lookup may trust


def _age(root: Path) -> None:
    """Every file and directory under models/ stamped in the past."""
    past = time.time() - SETTLED_S
    for d, _dirs, files in os.walk(root):
        for name in files:
            os.utime(os.path.join(d, name), (past, past))
        os.utime(d, (past, past))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = init_repo(tmp_path / "repo")
    ok(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hi")
    ok(repo, "model", "method", "run", "hello", "execute")
    _age(repo / "models")
    return repo


@pytest.fixture
def walks(monkeypatch) -> list[int]:
    counted: list[int] = []
    real = definition_files.iter_definition_files

    def counting(repo):
        counted.append(1)
        return real(repo)

    monkeypatch.setattr(definition_files, "iter_definition_files", counting)
    return counted


def test_reads_after_the_first_do_not_walk_the_definitions(repo, walks):
    r = open_repo(repo)
    first = data_use_cases.get(r, "hello", "result", None)
    walked = len(walks)
    assert walked >= 1
    for _ in range(5):
        assert data_use_cases.get(r, "hello", "result", None)["version"] == first["version"]
    assert len(walks) == walked  # five reads, no walk


def test_a_removed_definition_is_seen_by_the_next_read(repo, walks):
    r = open_repo(repo)
    data_use_cases.get(r, "hello", "result", None)
    next((repo / "models").rglob("hello.yaml")).unlink()
    with pytest.raises(NotFoundError, match="no model named 'hello'"):
        data_use_cases.get(r, "hello", "result", None)
