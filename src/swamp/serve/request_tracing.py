"""A span for each API request `swamp serve` answers, joined to the caller's
trace when the request carries a W3C ``traceparent`` header (what
``swamp --server`` sends, as any traced HTTP client does).

Without one, each request starts a trace of its own rather than hanging
under the long-lived ``swamp serve`` command span. Like every swamp span,
it carries names, codes and counts, never a path's values, a query or a
body: any of them may hold a secret."""

from __future__ import annotations

from contextlib import contextmanager

from swamp.util import tracing


@contextmanager
def request_span(route, traceparent: str | None):
    """The request's span (free when tracing is off); ``answered`` on what
    it yields records the answer's HTTP status."""
    with tracing.as_parent(traceparent), tracing.span(
            "swamp.serve.request", op=route.op, route=route.path, http_method=route.method) as span:
        yield _Answer(span)


class _Answer:
    __slots__ = ("_span",)

    def __init__(self, span) -> None:
        self._span = span

    def status(self, code: int, error_code: str | None) -> None:
        """The answer's HTTP status (and swamp's error code): a 4xx or 5xx marks the span failed."""
        self._span.set(status_code=code)
        if code >= 400:
            if error_code:
                self._span.set(error_code=error_code)
            self._span.fail(error_code or f"HTTP {code}")
