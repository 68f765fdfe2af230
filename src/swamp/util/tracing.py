"""Tracing with OpenTelemetry, off unless the standard ``OTEL_*`` variables
turn it on. Until then nothing of OpenTelemetry is imported and each hook
below costs a dictionary lookup.

On when ``OTEL_TRACES_EXPORTER`` names an exporter (``otlp``, ``console``)
or an OTLP endpoint is set (``OTEL_EXPORTER_OTLP_ENDPOINT``,
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``); off again with
``OTEL_SDK_DISABLED=true`` or ``OTEL_TRACES_EXPORTER=none``. The exporter,
the sampler, the batch processor and the resource read their own
``OTEL_*`` variables. It needs the ``tracing`` extra
(``pip install 'swamp[tracing]'``); without it a command warns once and runs
untraced. Tracing never fails a command.

The hooks:

- ``run_command`` around the whole command (the CLI's entry point): one
  span named by the command's path (``swamp model method run``), a child of
  ``TRACEPARENT`` (or ``--traceparent``) when the caller sends one;
- ``span(name, **attrs)``: a child of the current span, as a context
  manager; ``traced(name, attrs)`` the same as a decorator;
- ``carry(fn)``: ``fn`` run in another thread keeps the current context:
  the current span as its parent, and the run's other context variables
  (whose vault access the run has: vault/access.py) — the workflow
  engine's job and step threads;
- ``child_env()``: the ``TRACEPARENT`` a child process gets, so the tracing
  of a ``command/shell`` step joins the same trace.

Attributes are prefixed ``swamp.``; they never carry argument values or
error messages (a secret could be in them), only names, counts and codes.
"""

from __future__ import annotations

import os
import sys

#: None: not decided yet; False: off; else the SDK tracer
_tracer = None
#: the provider to flush at the end of the command (None when a test installed its own)
_provider = None
#: the --traceparent given on the command line, if any (checked by the CLI)
_traceparent: str | None = None

_VALUE_OPTIONS = ("--repo-dir", "--server", "--token", "--traceparent")
#: a ``status`` attribute that marks the span as failed
_FAILED = ("failed", "cancelled", "interrupted", "timed_out")


class _Noop:
    """What ``span`` yields when tracing is off: accepts everything, does nothing."""

    __slots__ = ()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def set(self, **attrs) -> None:
        pass

    def fail(self, description: str) -> None:
        pass

    def counts(self, counts):
        return counts


_NOOP = _Noop()


def wanted(environ=os.environ) -> bool:
    """Whether the ``OTEL_*`` variables ask for traces."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporters = environ.get("OTEL_TRACES_EXPORTER")
    if exporters is not None:
        return exporters.strip().lower() not in ("", "none")
    return bool(environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"))


def _get():
    global _tracer
    if _tracer is None:
        _tracer = False
        if wanted():
            try:
                _setup()
            except Exception as e:  # tracing never fails a command
                _warn(f"tracing is off: {type(e).__name__}: {e}")
    return _tracer


def enabled() -> bool:
    return bool(_get())


def _warn(message: str) -> None:
    sys.stderr.write(f"warning: {message}\n")


def _system_ids():
    """Span and trace ids from the system's randomness. OpenTelemetry's
    default draws them from the random module's shared generator, which a
    model's own code may have seeded for a repeatable sequence: every span
    of a step would then change that sequence under it (util/jitter.py says
    the same of swamp's waits)."""
    from opentelemetry.sdk.trace.id_generator import IdGenerator

    class SystemRandomIds(IdGenerator):
        def generate_span_id(self) -> int:
            return _nonzero(8)

        def generate_trace_id(self) -> int:
            return _nonzero(16)

        def is_trace_id_random(self) -> bool:
            return True

    return SystemRandomIds()


def _nonzero(size: int) -> int:
    while True:  # an all-zero id is invalid in W3C trace context
        value = int.from_bytes(os.urandom(size), "big")
        if value:
            return value


def _setup() -> None:
    """Build the provider and its exporters from the ``OTEL_*`` variables."""
    global _provider
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
    except ImportError:
        _warn("tracing is off: OpenTelemetry is not installed (pip install 'swamp[tracing]')")
        return
    attrs = {} if os.environ.get("OTEL_SERVICE_NAME") else {"service.name": "swamp"}
    provider = TracerProvider(resource=Resource.create(attrs), shutdown_on_exit=False, id_generator=_system_ids())
    names = [n.strip().lower() for n in os.environ.get("OTEL_TRACES_EXPORTER", "otlp").split(",") if n.strip()]
    added = 0
    for name in names:
        if name == "none":
            continue
        if name == "console":
            from opentelemetry.sdk.trace.export import ConsoleSpanExporter

            # stderr: stdout is the command's output (one JSON document with --json)
            provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=sys.stderr)))
        elif name == "otlp":
            provider.add_span_processor(BatchSpanProcessor(_watched(_otlp_exporter())))
        else:
            _warn(f"OTEL_TRACES_EXPORTER: unknown exporter {name!r} skipped (swamp knows otlp, console, none)")
            continue
        added += 1
    if added:
        import logging

        # The exporter logs each retry; one warning of ours at the end says it instead (flush).
        logging.getLogger("opentelemetry").setLevel(logging.CRITICAL)
        _install(provider)
        _provider = provider


#: exporters whose last export failed (the collector down or refusing)
_failed_exports: list[str] = []


def _watched(exporter):
    """``exporter``, remembering whether an export failed."""
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    class Watched(SpanExporter):
        def export(self, spans):
            try:
                result = exporter.export(spans)
            except Exception as e:
                _failed_exports.append(f"{type(e).__name__}: {e}")
                return SpanExportResult.FAILURE
            if result != SpanExportResult.SUCCESS:
                _failed_exports.append(getattr(exporter, "_endpoint", None) or type(exporter).__name__)
            return result

        def shutdown(self):
            return exporter.shutdown()

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            return exporter.force_flush(timeout_millis)

    return Watched()


def _otlp_exporter():
    protocol = (os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
                or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL") or "http/protobuf").strip().lower()
    if protocol == "grpc":
        try:
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
        except ImportError:
            raise RuntimeError("OTLP over gRPC needs opentelemetry-exporter-otlp-proto-grpc installed; "
                               "or set OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf") from None
        return OTLPSpanExporter()
    if protocol != "http/protobuf":
        raise RuntimeError(f"OTEL_EXPORTER_OTLP_PROTOCOL {protocol!r} is not supported (http/protobuf, grpc)")
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter()


def _install(provider) -> None:
    global _tracer
    _tracer = provider.get_tracer("swamp")


def use(provider) -> None:
    """Trace to ``provider`` (tests: an in-memory exporter's), whatever the
    environment says; ``use(None)`` goes back to reading it."""
    global _tracer, _provider, _traceparent
    _tracer = None
    _provider = None
    _traceparent = None
    if provider is not None:
        _install(provider)


# ------------------------------------------------------------- traceparent
def valid_traceparent(value: str) -> bool:
    """A W3C ``traceparent``: version-traceid-spanid-flags in lower-case hex,
    the ids not all zeros."""
    parts = value.strip().split("-")
    if len(parts) < 4 or [len(p) for p in parts[:4]] != [2, 32, 16, 2]:
        return False
    if any(c not in "0123456789abcdef" for c in "".join(parts)) or parts[0] == "ff":
        return False
    return parts[1] != "0" * 32 and parts[2] != "0" * 16 and (parts[0] != "00" or len(parts) == 4)


def _given_traceparent(args: list[str]) -> str | None:
    for i, a in enumerate(args):
        if a == "--traceparent" and i + 1 < len(args):
            return args[i + 1]
        if a.startswith("--traceparent="):
            return a.split("=", 1)[1]
    return None


def _parent_context():
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    carrier = {}
    if _traceparent:
        carrier["traceparent"] = _traceparent
    elif os.environ.get("TRACEPARENT"):
        carrier["traceparent"] = os.environ["TRACEPARENT"]
        if os.environ.get("TRACESTATE"):
            carrier["tracestate"] = os.environ["TRACESTATE"]
    return TraceContextTextMapPropagator().extract(carrier) if carrier else None


class _Attached:
    """The context of a W3C ``traceparent`` made current: what follows is
    its child (a step run on a worker, whose dispatcher sent its span).
    With none, an empty context: what follows starts a trace of its own."""

    __slots__ = ("_value", "_token")

    def __init__(self, value: str | None) -> None:
        self._value = value
        self._token = None

    def __enter__(self):
        from opentelemetry import context as otel_context
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

        ctx = TraceContextTextMapPropagator().extract({"traceparent": self._value}) if self._value \
            else otel_context.Context()
        self._token = otel_context.attach(ctx)
        return self

    def __exit__(self, *exc):
        from opentelemetry import context as otel_context

        otel_context.detach(self._token)
        return False


def attached(traceparent: str | None):
    """``traceparent`` (from ``child_env``, sent along with work to another
    process) as the parent of the spans inside; nothing when tracing is off
    or there is none."""
    if not traceparent or not valid_traceparent(traceparent) or not (
            _tracer if _tracer is not None else _get()):
        return _NOOP
    return _Attached(traceparent)


def as_parent(traceparent: str | None):
    """What a request that came from elsewhere runs under: its W3C
    ``traceparent`` as the parent of the spans inside, or, with none (or one
    that is not a traceparent), a trace of its own, never the current span.
    Nothing when tracing is off."""
    if not (_tracer if _tracer is not None else _get()):
        return _NOOP
    return _Attached(traceparent.strip() if traceparent and valid_traceparent(traceparent) else None)


def child_env() -> dict[str, str]:
    """What a child process's environment gets so its tracing joins this
    trace: ``TRACEPARENT`` of the current span; when tracing is off, the
    ``--traceparent`` given (one in the environment passes on by itself)."""
    if not _get():
        return {"TRACEPARENT": _traceparent} if _traceparent else {}
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    carrier: dict[str, str] = {}
    TraceContextTextMapPropagator().inject(carrier)
    out = {"TRACEPARENT": carrier["traceparent"]} if "traceparent" in carrier else {}
    if "tracestate" in carrier:
        out["TRACESTATE"] = carrier["tracestate"]
    return out


# ------------------------------------------------------------------- spans
class _Span:
    """The live span ``span`` yields: ``set`` more attributes, ``counts`` a
    sync's SyncCounts as attributes (returning them)."""

    __slots__ = ("_span", "_cm")

    def __init__(self, cm) -> None:
        self._cm = cm
        self._span = None

    def __enter__(self):
        self._span = self._cm.__enter__()
        return self

    def __exit__(self, kind, exc, tb):
        if exc is not None:
            _failed(self._span, exc)
        return self._cm.__exit__(kind, exc, tb)

    def set(self, **attrs) -> None:
        for k, v in _attrs(attrs).items():
            self._span.set_attribute(k, v)
        if attrs.get("status") in _FAILED:
            from opentelemetry.trace import Status, StatusCode

            self._span.set_status(Status(StatusCode.ERROR, attrs["status"]))

    def fail(self, description: str) -> None:
        """Mark the span failed (status ERROR) with ``description``: a code, never a message."""
        from opentelemetry.trace import Status, StatusCode

        self._span.set_status(Status(StatusCode.ERROR, description))

    def counts(self, counts):
        self.set(requests=counts.requests, bytes_pulled=counts.bytesPulled, bytes_pushed=counts.bytesPushed,
                 files_pulled=counts.filesPulled, files_pushed=counts.filesPushed,
                 files_deleted=counts.filesDeleted, conflicts=len(counts.conflicts), head=counts.head)
        return counts


def _attrs(attrs: dict) -> dict:
    out = {}
    for k, v in attrs.items():
        if v is None:
            continue
        if not isinstance(v, (str, bool, int, float)):
            v = str(v)
        out[f"swamp.{k}"] = v
    return out


def _failed(span, exc: BaseException) -> None:
    """An exception leaving a span: its class and swamp's error code, never
    its message (it may quote a value)."""
    from opentelemetry.trace import Status, StatusCode

    code = getattr(exc, "code", None)
    span.set_attribute("error.type", type(exc).__name__)
    if isinstance(code, str):
        span.set_attribute("swamp.error_code", code)
    span.set_status(Status(StatusCode.ERROR, code if isinstance(code, str) else type(exc).__name__))


def span(name: str, **attrs):
    """A span named ``name``, child of the current one, as a context
    manager; attributes become ``swamp.<key>``. Free when tracing is off."""
    tracer = _tracer if _tracer is not None else _get()
    if not tracer:
        return _NOOP
    return _Span(tracer.start_as_current_span(name, attributes=_attrs(attrs), record_exception=False,
                                              set_status_on_exception=False))


def traced(name: str, attrs=None, result=None, after=None):
    """``span`` as a decorator: ``attrs(*args, **kwargs)`` gives the span's
    attributes from the call, ``result(value)`` more from what it returned,
    ``after(*args, **kwargs)`` more once it returned (a ``status`` of
    failed or cancelled marks the span failed)."""
    def decorator(fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if not (_tracer if _tracer is not None else _get()):
                return fn(*args, **kwargs)
            with span(name, **(attrs(*args, **kwargs) if attrs else {})) as s:
                value = fn(*args, **kwargs)
                if result is not None:
                    s.set(**result(value))
                if after is not None:
                    s.set(**after(*args, **kwargs))
                return value
        return wrapper
    return decorator


def carry(fn):
    """``fn`` bound to the current context, to run in another thread with
    the current span as its parent and the context variables a run sets
    (vault/access.py: on whose behalf it reads vaults; vault/audit.py:
    through which command). Copied with tracing off too: without the
    context a step thread would read vaults with no check at all."""
    import contextvars

    context = contextvars.copy_context()  # one per call: a context runs in one thread at a time

    def run(*args, **kwargs):
        return context.run(fn, *args, **kwargs)
    return run


# ----------------------------------------------------------------- command
def command_path(root, args: list[str]) -> str:
    """The command's words (``swamp model method run``), never its
    arguments: the groups and commands ``args`` walk through from ``root``."""
    words = ["swamp"]
    command = root
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a.startswith("-"):
            skip = a in _VALUE_OPTIONS
            continue
        subcommands = getattr(command, "subcommands", None)  # cli.groups.CommandWithSubcommands
        if subcommands and a in subcommands:
            words.append(a)
            command = subcommands[a]
            continue
        get = getattr(command, "get_command", None)
        try:
            nxt = get(None, a) if get is not None and hasattr(command, "list_commands") else None
        except Exception:
            nxt = None
        if nxt is None:
            break
        words.append(a)
        command = nxt
    return " ".join(words)


def run_command(root, argv, run) -> int:
    """``run(root, argv)`` (the CLI; it returns the exit code) inside the
    command's span, a child of the caller's trace; flushed before return."""
    global _traceparent
    args = list(sys.argv[1:] if argv is None else argv)
    given = _given_traceparent(args)
    if given is not None and valid_traceparent(given):
        _traceparent = given.strip()  # (a bad one is the CLI's usage error)
    tracer = _get()
    if not tracer:
        return run(root, argv)
    from opentelemetry import context as otel_context

    parent = _parent_context()
    token = otel_context.attach(parent) if parent is not None else None
    try:
        with span("swamp") as s:
            code = 1
            try:
                code = run(root, argv)
                return code
            finally:
                s._span.update_name(command_path(root, args))
                s.set(command=command_path(root, args), exit_code=code)
                if code:
                    s.fail(f"exit code {code}")
    finally:
        if token is not None:
            otel_context.detach(token)
        flush()


def flush() -> None:
    """Export what is buffered (at the end of a command)."""
    if _provider is not None:
        try:
            _provider.force_flush()
        except Exception as e:
            _warn(f"tracing: export failed: {type(e).__name__}: {e}")
        if _failed_exports:
            _warn(f"tracing: spans not exported to {_failed_exports[-1]} (is the collector up? "
                  "OTEL_EXPORTER_OTLP_ENDPOINT); the command itself is unaffected")
            _failed_exports.clear()
