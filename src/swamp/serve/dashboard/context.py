"""What a dashboard page handler gets (``Ctx``) and returns (``Page``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request

from swamp.errors import HttpError

#: rows on a page of runs or of the audit log
PAGE_SIZE = 50
FINISHED = ("succeeded", "failed", "cancelled", "interrupted")


@dataclass
class Ctx:
    """One page request, as its handler (in a worker thread) sees it."""

    dash: Any  # pages.Dashboard
    request: Request
    subjects: list[str]
    path: dict[str, str]
    query: dict[str, str]
    form: dict[str, str] = field(default_factory=dict)

    @property
    def repo(self):
        return self.dash.state.repo

    def allowed(self, action: str, resource: str) -> bool:
        return self.dash.state.allowed(self.subjects, action, resource)

    def require(self, action: str, resource: str) -> None:
        self.dash.state.authorize(self.subjects, action, resource)

    def int_query(self, key: str, default: int | None = None) -> int | None:
        text = self.query.get(key)
        if text in (None, ""):
            return default
        try:
            return int(text)
        except ValueError:
            raise HttpError("validation", f"{key} must be a number, not {text!r}") from None


@dataclass
class Page:
    template: str
    values: dict
