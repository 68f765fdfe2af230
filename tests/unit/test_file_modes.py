"""util/file_modes.restrict_umask: group and other write are always in the
umask of a swamp process; whatever else the user's umask holds is kept."""

from __future__ import annotations

import os

import pytest

from swamp.util.file_modes import restrict_umask


@pytest.mark.parametrize("start, kept", [(0o000, 0o022), (0o002, 0o022), (0o022, 0o022), (0o027, 0o027),
                                          (0o077, 0o077)])
def test_the_umask_keeps_group_and_other_write_out(start, kept):
    old = os.umask(start)
    try:
        assert restrict_umask() == start
        assert os.umask(0o022) == kept
    finally:
        os.umask(old)
