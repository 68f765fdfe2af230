"""One place declares each path's conflict class."""

from __future__ import annotations

import pytest

from swamp.datastore.sync.pathclass import PathClass, classify, is_lazy, mergeable_format, register_mergeable


@pytest.mark.parametrize("rel,cls", [
    ("data/acme-counter/m1/count/3/raw", PathClass.IMMUTABLE),
    ("data/acme/counter/m1/count/3/metadata.yaml", PathClass.IMMUTABLE),
    ("outputs/acme-counter/inc/abc-2026.yaml", PathClass.IMMUTABLE),
    ("workflow-runs/wf/workflow-run-1.yaml", PathClass.IMMUTABLE),
    ("data/acme-counter/m1/count/latest", PathClass.LOCAL_ONLY),
    ("data/_catalog.db", PathClass.LOCAL_ONLY),
    ("secrets/local/x.enc", PathClass.LOCAL_ONLY),
    (".sync/state.db", PathClass.LOCAL_ONLY),
    ("files/a.txt.conflict-laptop-12", PathClass.LOCAL_ONLY),
    ("extensions/lockfile.json", PathClass.MERGEABLE),
    ("config/shared.yaml", PathClass.MERGEABLE),
    ("definitions-evaluated/m.yaml", PathClass.OTHER),
    ("data/acme-counter/m1/count", PathClass.OTHER),
])
def test_classify(rel, cls):
    assert classify(rel) is cls


def test_register_more_mergeable_documents():
    assert mergeable_format("config/teams/alpha.yaml") is None
    register_mergeable("config/teams/*.yaml")
    assert mergeable_format("config/teams/alpha.yaml") == "yaml"
    assert classify("config/teams/alpha.yaml") is PathClass.MERGEABLE


def test_lazy_paths_are_version_contents():
    assert is_lazy("data/t/m/n/2/raw") and not is_lazy("data/t/m/n/2/metadata.yaml")
