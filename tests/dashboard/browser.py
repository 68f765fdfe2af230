"""Headless Chromium for the dashboard tests: Debian's /usr/bin/chromium
driven by Playwright's Python API (never a browser Playwright downloads).

Without a browser the tests skip, loudly; with CI set they fail instead."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]

#: why browser tests could not run here (reported at the end of the run)
SKIPPED: list[str] = []


def chromium_path() -> str | None:
    for candidate in (os.environ.get("SWAMP_TEST_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def missing_browser() -> str | None:
    """Why no browser test can run, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[test]')"
    if chromium_path() is None:
        return "no chromium at /usr/bin/chromium (bash scripts/system-packages.sh installs it)"
    return None


def need_browser() -> None:
    why = missing_browser()
    if why is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"browser tests cannot run on CI: {why}")
    SKIPPED.append(why)
    pytest.skip(f"BROWSER TESTS SKIPPED: {why}")


class Browsers:
    """Opens browser contexts, each with a fresh profile (its own cookies)."""

    def __init__(self, root: Path) -> None:
        from playwright.sync_api import sync_playwright

        self.root = root
        self._pw = sync_playwright().start()
        self._contexts: list = []

    def context(self, extra_args: tuple[str, ...] = ()):
        profile = self.root / f"profile-{len(self._contexts)}"
        profile.mkdir(parents=True)
        ctx = self._pw.chromium.launch_persistent_context(
            str(profile), executable_path=chromium_path(), headless=True, args=[*FLAGS, *extra_args],
            viewport={"width": 1280, "height": 900})
        ctx.set_default_timeout(20_000)
        self._contexts.append(ctx)
        return ctx

    def close(self) -> None:
        for ctx in self._contexts:
            ctx.close()
        self._pw.stop()
