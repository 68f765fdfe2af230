"""`swamp --version` prints swamp.__version__ (no metadata scan at start-up):
it must be the version the package is installed as."""

import importlib.metadata

import swamp
from tests.helpers import cli


def test_version_is_the_installed_version():
    assert swamp.__version__ == importlib.metadata.version("swamp")
    r = cli(None, "--version", json=False)
    assert r.code == 0 and r.stdout.strip() == f"swamp {swamp.__version__}"
