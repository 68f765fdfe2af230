"""config_bases: an in-place edit of a managed config document is judged
as a three-way merge would (issue 24 N4): an editor's buffer made on an
older version and saved over a peer's is always caught; an edit made on
the peer's version that leaves its lines alone is not."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from swamp.repo.config_bases import undoes_or_touches_peers_change as stale

BASE = b"type: command/shell\nid: 1\nname: hello\nversion: 1\nglobalArguments:\n  run: echo v1\n"


def _replace(text: bytes, old: bytes, new: bytes) -> bytes:
    assert old in text
    return text.replace(old, new)


def test_a_buffer_made_on_the_base_undoes_the_peers_change():
    peer = _replace(BASE, b"echo v1", b"echo v2-from-A")
    buffer = _replace(BASE, b"id: 1\n", b"id: 1\ndescription: mine\n")
    assert stale(BASE, peer, buffer)
    assert stale(BASE, peer, BASE)  # nothing but the old version


def test_an_edit_made_on_the_peers_version_away_from_its_lines_is_not_stale():
    peer = _replace(BASE, b"echo v1", b"echo v2-from-A")
    assert not stale(BASE, peer, _replace(peer, b"id: 1\n", b"id: 1\ndescription: mine\n"))
    assert not stale(BASE, peer, peer)


def test_an_edit_of_the_lines_the_peer_changed_or_next_to_them_is_a_conflict():
    peer = _replace(BASE, b"echo v1", b"echo v2-from-A")
    assert stale(BASE, peer, _replace(peer, b"echo v2-from-A", b"echo v3"))
    assert stale(BASE, peer, peer + b"description: right after the peer's line\n")


def test_a_peer_that_deleted_a_repeated_line_is_not_undone_unseen():
    base = b"a\nx\nx\nb\nc\n"
    peer = b"a\nx\nb\nc\n"
    assert stale(base, peer, b"a\nx\nx\nb\nc\nd\n")
    assert not stale(base, peer, b"a\nx\nb\nc\nd\ne\n"[:0] + b"z\na\nx\nb\nc\n")


_LINES = st.lists(st.sampled_from([b"a\n", b"b\n", b"c\n", b"x\n", b"run: 1\n", b"run: 2\n"]), max_size=12)


@settings(max_examples=300, deadline=None)
@given(base=_LINES, seed=st.integers(0, 2**32))
def test_any_buffer_made_on_the_base_saved_over_a_peers_version_is_stale(base, seed):
    """Whatever the peer changed (at least one line of its own) and
    whatever the editor did to its old buffer, repeated lines included: a
    buffer made on the base never passes over the peer's version."""
    rnd = random.Random(seed)

    def mutate(lines: list[bytes], own: bytes | None) -> list[bytes]:
        out = list(lines)
        for _ in range(rnd.randint(0, 3)):
            at = rnd.randint(0, len(out))
            op = rnd.choice("rid") if out else "i"
            if op == "i":
                out.insert(at, rnd.choice([b"p\n", b"x\n", b"a\n", b"run: 3\n"]))
            elif op == "r":
                out[min(at, len(out) - 1)] = rnd.choice([b"p\n", b"run: 9\n"])
            else:
                del out[min(at, len(out) - 1)]
        if own is not None:  # the peer's change always holds a line only it wrote
            out.insert(rnd.randint(0, len(out)), own)
        return out

    peer, buffer = mutate(base, b"peer's line\n"), mutate(base, None)
    assert stale(b"".join(base), b"".join(peer), b"".join(buffer))
