import os

# Tests run many small writes; fsync only matters for power loss, not for the
# process kills the tests inject.
os.environ.setdefault("SWAMP_FSYNC", "0")
os.environ.setdefault("SWAMP_LOCK_TIMEOUT_MS", "20000")

pytest_plugins = ["tests.fixtures.servers", "tests.fixtures.pypi"]


def pytest_collection_modifyitems(config, items):
    """Files with a slow test run first. `--dist loadfile` hands whole files
    to the test processes in this order as each gets free, so a long file
    handed out last keeps one process busy after the others have ended;
    among the rest the order stays as collected."""
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)
