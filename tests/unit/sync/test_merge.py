"""Per-key three-way merge of JSON/YAML maps."""

from __future__ import annotations

import json

import pytest

from swamp.datastore.sync.merge import MergeConflict, NotMergeable, merge_document, merge_maps


def _m(base, ours, theirs):
    out = json.loads(json.dumps(ours))
    conflicts = merge_maps(base, out, theirs)
    return out, conflicts


@pytest.mark.parametrize("base,ours,theirs,want", [
    ({}, {"a": 1}, {"b": 2}, {"a": 1, "b": 2}),
    ({"a": 1}, {"a": 1}, {"a": 2}, {"a": 2}),
    ({"a": 1}, {"a": 3}, {"a": 1}, {"a": 3}),
    ({"a": 1, "b": 1}, {"b": 1}, {"a": 1, "b": 2}, {"b": 2}),          # we deleted a, they changed b
    ({"a": 1}, {"a": 1}, {}, {}),                                       # they deleted a
    ({"x": {"p": 1}}, {"x": {"p": 1, "q": 2}}, {"x": {"p": 1, "r": 3}}, {"x": {"p": 1, "q": 2, "r": 3}}),
    ({}, {"x": [1, 2]}, {"x": [1, 2]}, {"x": [1, 2]}),
])
def test_clean_merges(base, ours, theirs, want):
    assert _m(base, ours, theirs) == (want, [])


@pytest.mark.parametrize("base,ours,theirs,keys", [
    ({"a": 1}, {"a": 2}, {"a": 3}, ["a"]),
    ({}, {"a": 1}, {"a": 2}, ["a"]),
    ({"a": 1}, {}, {"a": 2}, ["a"]),                                     # delete against change
    ({"x": {"p": 1}}, {"x": {"p": 2}}, {"x": {"p": 3}}, ["x.p"]),
    ({"a": True}, {"a": 1}, {"a": False}, ["a"]),                        # True is not 1
    ({"x": 1}, {"x": {"p": 1}}, {"x": [1]}, ["x"]),
])
def test_conflicts_name_the_key(base, ours, theirs, keys):
    assert _m(base, ours, theirs)[1] == keys


def test_merge_document_returns_exact_side_bytes_when_unchanged():
    base = b'{"a": 1}'
    ours = b'{\n  "a": 1,   "b": 2}'
    assert merge_document("json", base, ours, b'{"a": 1}') == ours
    theirs = b'{"a":1,"b":2}'
    assert merge_document("json", base, ours, theirs) == theirs


def test_merge_document_errors():
    with pytest.raises(MergeConflict):
        merge_document("json", b'{"a": 1}', b'{"a": 2}', b'{"a": 3}')
    with pytest.raises(NotMergeable):
        merge_document("json", None, b"[1]", b"{}")
    with pytest.raises(NotMergeable):
        merge_document("yaml", None, b"a: [", b"{}")
