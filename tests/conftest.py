import os

# Tests run many small writes; fsync only matters for power loss, not for the
# process kills the tests inject.
os.environ.setdefault("SWAMP_FSYNC", "0")
os.environ.setdefault("SWAMP_LOCK_TIMEOUT_MS", "20000")

pytest_plugins = ["tests.fixtures.servers", "tests.fixtures.pypi"]
