"""A temp file is made beside its target even when another process removes
the (emptied) directory between the mkdir and the create: two `model method
run` at once on one checkout failed with a traceback this way (the run
markers' directory is removed by the run that ends)."""

from __future__ import annotations

import os

from swamp.util.atomic import atomic_write, temp_beside


def test_the_directory_is_made_again_when_it_vanished(tmp_path):
    target = tmp_path / "cache" / "running" / "m.json"
    calls = []

    def makedirs(directory):
        calls.append(directory)
        if len(calls) > 1:  # the first mkdir "happened", then a peer removed the directory
            directory.mkdir(parents=True, exist_ok=True)

    fd, name = temp_beside(target, makedirs)
    os.close(fd)
    assert len(calls) == 2 and os.path.dirname(name) == str(target.parent)


def test_atomic_write_still_writes(tmp_path):
    target = tmp_path / "a" / "b.txt"
    atomic_write(target, b"x")
    assert target.read_bytes() == b"x" and os.listdir(target.parent) == ["b.txt"]
