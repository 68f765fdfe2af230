from __future__ import annotations

import pytest

from tests.dashboard.browser import SKIPPED, Browsers, need_browser


@pytest.fixture(scope="module")
def browsers(tmp_path_factory):
    need_browser()
    b = Browsers(tmp_path_factory.mktemp("chromium"))
    yield b
    b.close()


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory):
    """Where the main pages' screenshots go (the run's tmp output)."""
    path = tmp_path_factory.mktemp("dashboard-screenshots")
    yield path
    print(f"\ndashboard screenshots: {path}")


def pytest_terminal_summary(terminalreporter):
    if SKIPPED:
        terminalreporter.write_sep("!", "BROWSER TESTS WERE SKIPPED", red=True, bold=True)
        for why in sorted(set(SKIPPED)):
            terminalreporter.write_line(f"  {why}", red=True)
