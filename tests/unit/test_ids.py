"""swamp.util.ids makes ids exactly as the uuid module would, and names the
host as socket does, without importing either."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import uuid

from hypothesis import given
from hypothesis import strategies as st

from swamp.util import ids

SRC = os.path.join(os.path.dirname(__file__), "..", "..", "src")


@given(st.binary(min_size=16, max_size=16))
def test_an_id_is_uuid4_of_the_same_random_bytes(random):
    expected = uuid.UUID(bytes=random, version=4)
    assert ids.new_id(random) == str(expected)
    assert ids.uuid4_hex(random) == expected.hex


def test_ids_are_random_version_4_uuids():
    made = {ids.new_id() for _ in range(200)}
    assert len(made) == 200
    for i in made:
        assert uuid.UUID(i).version == 4 and str(uuid.UUID(i)) == i


def test_the_hostname_is_sockets():
    assert ids.hostname() == socket.gethostname()


def test_neither_uuid_nor_socket_is_imported():
    code = ("import sys\nfrom swamp.util import ids\nids.new_id(); ids.uuid4_hex(); ids.holder()\n"
            "print(sorted(m for m in ('uuid', 'socket') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": os.path.abspath(SRC)},
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
