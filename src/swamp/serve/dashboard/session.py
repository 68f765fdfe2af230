"""Who is looking at a page, and whether a form really came from one.

With ``--auth-mode token`` the login page takes a token and keeps it in an
HttpOnly, SameSite=Strict cookie scoped to ``/ui``: never in a URL, never
readable by a script, never logged (the server keeps no access log, and
the audit log records the token's name only). Every state-changing form
carries a CSRF token, an HMAC of the session under a key that lives only
in this process, so a page on another site cannot forge one."""

from __future__ import annotations

import hashlib
import hmac
import secrets

from swamp.errors import HttpError

COOKIE = "swamp_session"
#: the session value of every caller when the server has no tokens
ANONYMOUS = "anonymous"


class Sessions:
    def __init__(self, state) -> None:
        self.state = state
        self._key = secrets.token_bytes(32)  # a restart invalidates every CSRF token, not the logins

    @property
    def tokens_needed(self) -> bool:
        return self.state.settings.auth_mode == "token"

    def session_value(self, request) -> str | None:
        if not self.tokens_needed:
            return ANONYMOUS
        return request.cookies.get(COOKIE) or None

    def subjects(self, request) -> list[str] | None:
        """The caller's subjects, or None when nobody valid is logged in."""
        if not self.tokens_needed:
            return ["anonymous"]
        value = self.session_value(request)
        if not value:
            return None
        return self.state.check_token(value)

    def csrf(self, request) -> str:
        value = self.session_value(request) or ANONYMOUS
        return hmac.new(self._key, b"csrf:" + value.encode(), hashlib.sha256).hexdigest()

    def check_csrf(self, request, presented: str | None) -> None:
        origin = request.headers.get("origin")
        if origin and origin != "null" and origin != f"{request.url.scheme}://{request.url.netloc}":
            raise HttpError("forbidden", "this form was sent from another site", hint="use the dashboard's own page")
        if not presented or not hmac.compare_digest(presented, self.csrf(request)):
            raise HttpError("forbidden", "the form's CSRF token is missing or wrong",
                            hint="reload the page and send the form again")


def set_cookie(response, value: str, *, secure: bool) -> None:
    response.set_cookie(COOKIE, value, httponly=True, samesite="strict", secure=secure, path="/ui")


def clear_cookie(response, *, secure: bool) -> None:
    response.delete_cookie(COOKIE, path="/ui", httponly=True, samesite="strict", secure=secure)
