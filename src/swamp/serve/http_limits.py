"""Bounds on what a client can hold of the HTTP server, below the
application: a request's headers must arrive within ``header_timeout``
seconds of the connection opening (or of the previous answer), its body
within ``body_timeout`` seconds of its headers, and at most
``max_connections`` connections are open at once.

uvicorn's h11 server has none of these: a connection that sends half a
request line and then nothing is held for ever, and a thousand of them use
up the process's file descriptors, after which nobody gets an answer, not
even ``/health``. So the connection cap is also kept below the process's
open-file limit, and a connection over the cap closes the oldest one that
is not being answered (half-sent or idle) instead of being refused: a
slow client is what loses its place, never a quick one."""

from __future__ import annotations

import resource
from dataclasses import dataclass

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

#: file descriptors kept for everything else the server opens (datastore, logs, threads' files)
FD_RESERVE = 128


@dataclass(frozen=True)
class Limits:
    header_timeout: float = 10.0
    body_timeout: float = 20.0
    max_connections: int = 1000

    def connection_cap(self) -> int:
        """max_connections, or fewer when the open-file limit is lower (read
        each time: it can be changed under a running process)."""
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft == resource.RLIM_INFINITY:
            return self.max_connections
        return max(1, min(self.max_connections, soft - FD_RESERVE))


_TIMEOUT_BODY = b'{"error": "the request did not arrive in time", "code": "timeout", "hint": "send it whole"}\n'
_TIMEOUT_REPLY = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\nconnection: close\r\n"
                  b"content-length: %d\r\n\r\n" % len(_TIMEOUT_BODY)) + _TIMEOUT_BODY


def protocol(limits: Limits) -> type:
    """The h11 protocol class uvicorn runs, with ``limits`` applied."""

    class BoundedH11(H11Protocol):
        _timer = None
        _reading = "headers"  # headers | body | none (the request is whole: the app has it)
        _since = 0.0

        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            self._arm("headers")
            cap = limits.connection_cap()
            if len(self.connections) > cap:
                self._make_room(cap)

        def connection_lost(self, exc) -> None:
            self._disarm()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            their = self.conn.their_state
            if their is h11.SEND_BODY and self._reading != "body":
                self._arm("body")
            elif their in (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR) and self._reading != "none":
                self._disarm()
                self._reading = "none"
            elif their is h11.IDLE and self._reading != "headers":  # the next request on this connection
                self._arm("headers")

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm("headers")  # uvicorn's keep-alive timer ends an idle wait sooner; this, a half-sent one

        # ---------------------------------------------------------------
        def _arm(self, what: str) -> None:
            self._disarm()
            self._reading = what
            self._since = self.loop.time()
            delay = limits.header_timeout if what == "headers" else limits.body_timeout
            self._timer = self.loop.call_later(delay, self._too_slow)

        def _disarm(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def _idle(self) -> bool:
            """Between requests, or still sending a request's headers: nothing is being answered."""
            return self._reading == "headers" and (self.cycle is None or self.cycle.response_complete)

        def _evictable(self) -> bool:
            """Closing it loses no work: idle, or its request not whole yet (a
            handler reads the whole body before it runs anything)."""
            return self._idle() or self._reading == "body"

        def _too_slow(self) -> None:
            self._timer = None
            if self.transport.is_closing() or self._reading == "none":
                return
            if self._idle():
                self.transport.write(_TIMEOUT_REPLY)
            self.transport.close()  # a body half-sent: the handler reading it sees the client gone

        def _make_room(self, cap: int) -> None:
            idle = sorted((c for c in self.connections
                           if c is not self and getattr(c, "_evictable", None) and c._evictable()),
                          key=lambda c: c._since)
            for victim in idle[:len(self.connections) - cap]:
                victim._disarm()
                victim.transport.close()
            if len(self.connections) > cap and not idle:
                self.transport.close()  # every other connection is busy being answered

    return BoundedH11
