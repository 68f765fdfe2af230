"""Where the warnings that domain code logs (``logging.getLogger("swamp...")``)
go: one ``warning: ...`` line each on stderr for a person; nowhere in
--json mode, where stderr holds exactly one JSON error document or nothing.
Without this, Python's last-resort handler would print them raw.

The logging module is not imported for this (about 2 ms, with traceback
and textwrap): a command whose code logs nothing, such as ``data get`` on a
local datastore, never loads it. Until something imports logging, a finder
first on ``sys.meta_path`` waits for that import and puts the handler in
place as soon as the module has loaded, before anything can log through it."""

from __future__ import annotations

import sys

#: what the last configure() said
_json = False
#: the handler class, made when logging is loaded
_handler_class = None


def configure(*, json_mode: bool) -> None:
    """Idempotent: one handler on the ``swamp`` logger, told the mode."""
    global _json
    _json = json_mode
    if "logging" in sys.modules:
        _install()
    elif not any(isinstance(f, _WhenLoggingLoads) for f in sys.meta_path):
        sys.meta_path.insert(0, _WhenLoggingLoads())


def _install() -> None:
    import logging

    global _handler_class
    if _handler_class is None:
        _handler_class = _make_class(logging)
    log = logging.getLogger("swamp")
    handler = next((h for h in log.handlers if isinstance(h, _handler_class)), None)
    if handler is None:
        handler = _handler_class()
        log.addHandler(handler)
    handler.json = _json


def _make_class(logging):
    class _Warnings(logging.Handler):
        def __init__(self) -> None:
            super().__init__(logging.WARNING)
            self.json = False

        def emit(self, record: logging.LogRecord) -> None:
            if self.json:
                return
            try:
                from swamp.vault.redact import redact_text

                from swamp.cli import colour

                label = colour.paint("warning:", "wait", colour.enabled(sys.stderr))
                sys.stderr.write(label + " " + redact_text(record.getMessage()) + "\n")
            except Exception:  # a warning must never break the command
                self.handleError(record)

    return _Warnings


class _WhenLoggingLoads:
    """A finder of nothing but ``logging``, which it has the usual finder
    find, and loads with the usual loader, then installs the handler."""

    def find_spec(self, name, path=None, target=None):
        if name != "logging":
            return None
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec(name, path, target)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _ThenInstall(spec.loader, self)
        return spec


class _ThenInstall:
    def __init__(self, loader, finder: _WhenLoggingLoads) -> None:
        self.loader = loader
        self.finder = finder

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module) -> None:
        module.__loader__ = module.__spec__.loader = self.loader  # the module as if loaded the usual way
        self.loader.exec_module(module)
        try:
            sys.meta_path.remove(self.finder)
        except ValueError:
            pass
        _install()
