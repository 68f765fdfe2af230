"""Without a browser the browser tests skip, saying so, except on CI
(CI set), where they fail: a missing browser must never pass unseen."""

from __future__ import annotations

import pytest

from tests.dashboard import browser


def test_no_browser_skips_loudly_here_and_fails_on_ci(monkeypatch):
    monkeypatch.setattr(browser, "chromium_path", lambda: None)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="BROWSER TESTS SKIPPED"):
        browser.need_browser()
    assert browser.SKIPPED
    browser.SKIPPED.clear()  # this was a rehearsal: nothing to report at the end
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="cannot run on CI"):
        browser.need_browser()
