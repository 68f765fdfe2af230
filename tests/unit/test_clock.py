"""util/clock.isoformat, made without the datetime module, is exactly
what datetime gives, to the millisecond, for any time a run may carry."""

from __future__ import annotations

import datetime
import os
import subprocess
import sys

from hypothesis import example, given
from hypothesis import strategies as st

from swamp.util import clock

SRC = os.path.join(os.path.dirname(__file__), "..", "..", "src")


def by_datetime(ts: float) -> str:
    t = datetime.datetime.fromtimestamp(ts, tz=datetime.timezone.utc)
    return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@given(st.one_of(st.floats(min_value=0, max_value=253402300799.0), st.integers(0, 4 * 10**9).map(float),
                 st.integers(0, 4 * 10**15).map(lambda us: us / 1e6),
                 st.tuples(st.integers(0, 4 * 10**9), st.sampled_from([0.0005, 0.9995, 0.9999995, 0.4999995,
                                                                       0.0000005, 0.0000015, 0.999999]))
                 .map(sum)))
@example(1764552514.585)
@example(0.0)
@example(1764552514.9999996)
def test_isoformat_is_datetimes(ts):
    assert clock.isoformat(ts) == by_datetime(ts)


def test_isoformat_of_now_uses_the_clock():
    clock.set_clock(lambda: 1764552514.5859)
    try:
        assert clock.isoformat() == "2025-12-01T01:28:34.585Z"
    finally:
        clock.set_clock(None)
    assert clock.parse_iso("2025-12-01T01:28:34.585Z").timestamp() == 1764552514.585


def test_no_datetime_is_imported():
    code = "import sys\nfrom swamp.util import clock\nclock.isoformat()\nprint('datetime' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": os.path.abspath(SRC)},
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
