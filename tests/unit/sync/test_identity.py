"""A remote that is behind, emptied, or another one (issue 9 item 6): the
local sync state knows the remote's identity and the highest seq it saw
there; anything else is refused before anything is applied or published,
and attaching again (what `datastore setup` does) republishes what the
remote lacks."""

from __future__ import annotations

import pytest

from swamp.datastore.sync import identity
from swamp.errors import RemoteChangedError

from .conftest import files, write


def _keys(store, namespace="default"):
    return sorted(k for k in store._objects if k.startswith(namespace + "/"))


def _shared(make_peer):
    a = make_peer("a", inline_max=0)  # blobs, so "uploaded before" is visible
    a.init_remote()
    identity.attach(a.state, a.store, a.layout)
    write(a, "files/x", b"x content")
    a.push()
    write(a, "files/y", b"y content")
    a.push()
    return a


def test_another_namespace_is_refused_and_nothing_is_published(make_peer, store, tmp_path):
    a = _shared(make_peer)
    a.close()
    # .swamp.yaml's namespace edited: the same cache, another namespace
    moved = make_peer("a", namespace="other", inline_max=0)
    write(moved, "files/z", b"made after the edit")
    with pytest.raises(RemoteChangedError) as err:
        moved.push()
    assert "swamp datastore setup" in err.value.hint
    with pytest.raises(RemoteChangedError):
        moved.pull()
    assert _keys(store, "other") == []


def test_an_emptied_remote_is_refused(make_peer, store):
    a = _shared(make_peer)
    for key in list(store._objects):
        store.delete(key)
    write(a, "files/z", b"new")
    with pytest.raises(RemoteChangedError) as err:
        a.sync()
    assert "ends at commit 0" in err.value.message and "seen commit 2" in err.value.message
    assert _keys(store) == []


def test_a_remote_written_again_up_to_the_same_seq_is_refused(make_peer, store):
    """Emptied and set up again by someone who committed as many times:
    the log reaches our head, but the record there is not ours."""
    a = _shared(make_peer)
    for key in list(store._objects):
        store.delete(key)
    other = make_peer("other")
    for i in range(2):
        write(other, f"files/o{i}", b"theirs")
        other.push()
    with pytest.raises(RemoteChangedError) as err:
        a.pull()
    assert "is not the one this cache applied" in err.value.message
    assert "files/o0" not in files(a)


def test_a_remote_gone_back_is_refused(make_peer, store):
    a = _shared(make_peer)
    store.delete("default/log/00000000000000000002.json")  # restored from an older copy
    with pytest.raises(RemoteChangedError):
        a.pull()


def test_attaching_again_republishes_what_the_remote_lacks(make_peer, store):
    a = _shared(make_peer)
    for key in list(store._objects):
        store.delete(key)
    a.init_remote()
    assert identity.attach(a.state, a.store, a.layout) is True  # the old state is forgotten
    a.pull()
    pushed = a.push(full_walk=True)
    assert pushed.filesPushed == 2 and pushed.bytesPushed == len(b"x content") + len(b"y content")
    fresh = make_peer("fresh")
    fresh.pull()
    assert files(fresh) == {"files/x": b"x content", "files/y": b"y content"}
    assert a.verify()["ok"]
    write(a, "files/z", b"later")
    a.sync()
    fresh.sync()
    assert files(fresh)["files/z"] == b"later"


def test_the_same_remote_attached_again_keeps_its_state(make_peer, store):
    a = _shared(make_peer)
    assert identity.attach(a.state, a.store, a.layout) is False
    assert a.pull().requests == 1 and a.state.head == 2
