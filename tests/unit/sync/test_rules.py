"""Each path's sync class: the owners' declarations, assembled in one place,
and the one local-only rule."""

from __future__ import annotations

import subprocess
import sys

import pytest

from swamp.datastore.sync.localonly import is_local_only
from swamp.datastore.sync.rules import PathClass, PathRules
from swamp.repo.datastores import path_rules

RULES = path_rules()


@pytest.mark.parametrize("rel,cls", [
    ("data/acme-counter/m1/count/3/raw", PathClass.IMMUTABLE),
    ("data/acme/counter/m1/count/3/metadata.yaml", PathClass.IMMUTABLE),
    ("data/acme-counter/m1/count/3/tombstone", PathClass.IMMUTABLE),
    ("outputs/acme-counter/inc/abc-2026.yaml", PathClass.IMMUTABLE),
    ("workflow-runs/wf/workflow-run-1.yaml", PathClass.IMMUTABLE),
    ("cache/catalog.db", PathClass.LOCAL_ONLY),
    ("cache/latest/data/t/m/n", PathClass.LOCAL_ONLY),
    ("secrets/local/x.enc", PathClass.LOCAL_ONLY),
    (".sync/state.db", PathClass.LOCAL_ONLY),
    (".locks/model%2Facme%2Fx.lock", PathClass.LOCAL_ONLY),
    ("data/acme-counter/m1/count/3/.tmp-4711.abc", PathClass.LOCAL_ONLY),
    ("files/a.txt.conflict-laptop-12", PathClass.LOCAL_ONLY),
    ("data/acme-counter/m1/count/3/raw.conflict-laptop-12", PathClass.LOCAL_ONLY),
    ("extensions/lockfile.json", PathClass.MERGEABLE),
    ("extensions/history/20261201T213450643Z-58fd6bc5.json", PathClass.IMMUTABLE),
    ("config/shared.json", PathClass.MERGEABLE),
    ("config/shared.yaml", PathClass.MERGEABLE),
    ("definitions-evaluated/m.yaml", PathClass.OTHER),
    ("data/acme-counter/m1/count", PathClass.OTHER),
    ("data/acme-counter/m1/count/3", PathClass.OTHER),
    # nothing under data/ is a local-only exception any more
    ("data/_catalog.db", PathClass.OTHER),
    ("bundles/x.js", PathClass.OTHER),
])
def test_classify(rel, cls):
    assert RULES.classify(rel) is cls


def test_mergeable_formats_and_more_documents():
    assert RULES.mergeable_format("config/shared.yaml") == "yaml"
    assert RULES.mergeable_format("config/teams/alpha.yaml") is None
    more = RULES.with_mergeable("config/teams/*.yaml")
    assert more.mergeable_format("config/teams/alpha.yaml") == "yaml"
    assert more.classify("config/teams/alpha.yaml") is PathClass.MERGEABLE
    assert more.classify("config/teams/x/alpha.yaml") is PathClass.OTHER  # '*' is one segment


def test_lazy_paths_are_version_contents():
    assert RULES.is_lazy("data/t/m/n/2/raw") and not RULES.is_lazy("data/t/m/n/2/metadata.yaml")
    assert not RULES.is_lazy("files/raw")


def test_no_declarations_leave_only_the_local_only_rule():
    rules = PathRules()
    assert rules.classify("outputs/x.yaml") is PathClass.OTHER
    assert rules.classify("cache/x") is PathClass.LOCAL_ONLY


def test_declarations_are_checked():
    with pytest.raises(ValueError):
        PathRules.of({"mergeable": {"a.toml": "toml"}})
    with pytest.raises(ValueError):
        PathRules.of({"immutabel": ["x/**"]})


def test_local_only_is_one_rule():
    assert is_local_only(".sync/lock") and is_local_only("cache/catalog.db-wal")
    assert not is_local_only("data/t/m/n/1/raw") and not is_local_only("cached/x")


def test_declarations_are_light():
    """Assembling the rules loads none of the owners' heavy modules (start-up
    time of every command)."""
    code = ("import sys; from swamp.repo.datastores import path_rules; path_rules(); "
            "heavy = [m for m in ('swamp.data.repository', 'swamp.models.runner', 'swamp.workflows.engine', "
            "'swamp.datastore.sync.engine', 'yaml', 'pydantic') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
