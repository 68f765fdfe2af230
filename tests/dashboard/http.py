"""A browser-less dashboard session over plain HTTP (urllib): its own
cookie jar, a login with a token, and forms sent with the CSRF token of the
page they were on, as a browser would send them. For the tests that check
a behaviour without chromium, so CI without a browser still checks it."""

from __future__ import annotations

import html
import http.cookiejar
import re
import urllib.error
import urllib.parse
import urllib.request

from tests.serve.server import Serve


class Session:
    def __init__(self, server: Serve) -> None:
        self.server = server
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def get(self, path: str) -> tuple[int, str]:
        return self._open(urllib.request.Request(self.server.url + path))

    def post(self, path: str, fields: dict, *, csrf_from: str | None = None) -> tuple[int, str]:
        """POST a form (following the redirect, as a browser does); its CSRF
        token is taken from the page ``csrf_from`` unless ``fields`` has one."""
        fields = dict(fields)
        if "csrf" not in fields:
            fields["csrf"] = csrf(self.get(csrf_from or "/ui/workflows")[1])
        data = urllib.parse.urlencode(fields).encode()
        req = urllib.request.Request(self.server.url + path, data=data, method="POST",
                                     headers={"Content-Type": "application/x-www-form-urlencoded",
                                              "Origin": self.server.url})
        return self._open(req)

    def login(self, token: str) -> None:
        status, text = self.post("/ui/login", {"token": token}, csrf_from="/ui/login")
        assert status == 200, (status, text[:300])

    def _open(self, req) -> tuple[int, str]:
        try:
            with self.opener.open(req, timeout=60) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()


def csrf(page: str) -> str:
    m = re.search(r'name="csrf" value="([0-9a-f]+)"', page)
    assert m, "no CSRF token on the page"
    return m.group(1)


def text_of(page: str) -> str:
    """The page's text, tags dropped and entities decoded (for asserting on
    what a person reads)."""
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


#: the dashboard tests' grants: ops may run and approve, the viewer token only reads
GRANTS = """
grants:
  - subjects: ["group:ops"]
    actions: [read, run, approve]
    resources: ["workflow:*", "model:*", "data:*"]
  - subjects: ["token:viewer"]
    actions: [read]
    resources: ["workflow:*", "model:*", "data:*"]
"""
