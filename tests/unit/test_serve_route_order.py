"""serve tries its hot routes first (app.hot_first): for every route's own
paths, and for paths that look like another route's, the route that answers
is the one the order of routes.ROUTES would have chosen."""

from __future__ import annotations

import re

from starlette.routing import Match, Route as StarletteRoute

from swamp.serve.app import hot_first
from swamp.serve.routes import ROUTES


def _answering(routes, method: str, path: str):
    scope = {"type": "http", "method": method, "path": path, "root_path": ""}
    for r in routes:
        match, _ = r.matches(scope)
        if match == Match.FULL:
            return r.name
    return None


def _built(order):
    return [StarletteRoute(r.path, lambda request: None, methods=[r.method], name=r.op) for r in order]


def test_every_request_reaches_the_route_it_reached_before():
    before, after = _built(ROUTES), _built(hot_first(ROUTES))
    assert [r.name for r in after][0] == "getData"
    samples = set()
    for r in ROUTES:
        for value in ("x1", "search", "versions", "runs", "history", "query", "status"):
            samples.add(re.sub(r"\{[^}]+\}", value, r.path))
    for method in sorted({r.method for r in ROUTES}):
        for path in sorted(samples):
            assert _answering(after, method, path) == _answering(before, method, path), (method, path)
