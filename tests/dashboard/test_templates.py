"""Templates rendered alone: a row's fields shown as values (a key named
like a dict method, such as a conflict's ``copy``, must not print a Python
repr), and markup in values escaped."""

from __future__ import annotations

from swamp.serve.dashboard.pages import _environment

BASE = {"title": "t", "csrf": "x", "auth_mode": "none", "who": "anonymous", "logged_in": True}


def test_the_datastore_page_lists_conflict_copies():
    conflict = {"copy": "config/shared.json.conflict-bob-7", "path": "config/shared.json", "peer": "bob",
                "seq": 7, "class": "mergeable", "oursSize": 12, "theirs": True, "theirsSize": 15, "same": False}
    doc = {"status": {"type": "s3", "location": "s3://bucket/<b>prefix</b>"}, "leases": [], "commits": [],
           "conflicts": [conflict]}
    html = _environment().get_template("datastore.html").render(**BASE, nav="datastore", doc=doc,
                                                                status_json="{}")
    assert "config/shared.json.conflict-bob-7 (12 bytes)" in html and "theirs (15 bytes)" in html
    assert "built-in method" not in html
    assert "&lt;b&gt;prefix&lt;/b&gt;" in html and "<b>prefix</b>" not in html
