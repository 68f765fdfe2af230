"""A span for each API request `swamp serve` answers, joined to the caller's
trace when the request carries a W3C ``traceparent`` header (what
``swamp --server`` sends, as any traced HTTP client does).

Without one, each request starts a trace of its own rather than hanging
under the long-lived ``swamp serve`` command span. Like every swamp span,
it carries names, codes and counts, never a path's values, a query or a
body: any of them may hold a secret."""

from __future__ import annotations

from swamp.util import tracing


class _RequestSpan:
    __slots__ = ("_route", "_traceparent", "_token", "_span")

    def __init__(self, route, traceparent: str | None) -> None:
        self._route = route
        self._traceparent = traceparent
        self._token = None
        self._span = None

    def __enter__(self):
        from opentelemetry import context as otel_context
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

        given = self._traceparent if self._traceparent and tracing.valid_traceparent(self._traceparent) else None
        # A bad header is ignored (a new trace), as a bad TRACEPARENT is by the CLI.
        parent = TraceContextTextMapPropagator().extract({"traceparent": given.strip()}) if given \
            else otel_context.Context()
        self._token = otel_context.attach(parent)
        self._span = tracing.span("swamp.serve.request", op=self._route.op, route=self._route.path,
                                  http_method=self._route.method)
        self._span.__enter__()
        return self

    def status(self, code: int, error_code: str | None) -> None:
        """The answer's HTTP status (and swamp's error code): a 4xx or 5xx marks the span failed."""
        self._span.set(status_code=code)
        if code >= 400:
            from opentelemetry.trace import Status, StatusCode

            if error_code:
                self._span.set(error_code=error_code)
            self._span._span.set_status(Status(StatusCode.ERROR, error_code or f"HTTP {code}"))

    def __exit__(self, *exc):
        from opentelemetry import context as otel_context

        try:
            return self._span.__exit__(*exc)
        finally:
            otel_context.detach(self._token)


class _Off:
    __slots__ = ()

    def __enter__(self):
        return self

    def status(self, code: int, error_code: str | None) -> None:
        pass

    def __exit__(self, *exc):
        return False


_OFF = _Off()


def request_span(route, traceparent: str | None):
    """The request's span as a context manager (``status`` records the
    answer); free when tracing is off."""
    if not tracing.enabled():
        return _OFF
    return _RequestSpan(route, traceparent)
