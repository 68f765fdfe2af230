"""One small error hierarchy. Every error a user can meet is a SwampError:
a message, a stable machine code, an optional hint, and an exit code."""

from __future__ import annotations


class SwampError(Exception):
    code = "error"
    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None, code: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        if code is not None:
            self.code = code

    def to_json(self) -> dict:
        out = {"error": self.message, "code": self.code}
        if self.hint:
            out["hint"] = self.hint
        return out


class UsageError(SwampError):
    code = "usage"
    exit_code = 2


class NotFoundError(SwampError):
    code = "not_found"


class ValidationError(SwampError):
    code = "validation"


class ConflictError(SwampError):
    code = "conflict"


class LockTimeoutError(SwampError):
    """A lock or lease wait ran out (exit 75, EX_TEMPFAIL)."""

    code = "lock_timeout"
    exit_code = 75


class LeaseLostError(SwampError):
    code = "lease_lost"


class UnpublishedError(SwampError):
    """A command's work is done on this machine, but the push that publishes
    it failed. ``value`` is what the command reports (its record, with
    ``"published": false``): the CLI prints it on stdout, the error on
    stderr, and exits 1. The next sync, or the next command that changes
    state, publishes the work; nothing needs to run again."""

    code = "unpublished"

    def __init__(self, message: str, *, hint: str | None = None, value=None, code: str | None = None):
        # ``code``: the cause's own, when it means more than "unpublished"
        # (``remote_changed``: a sync cannot help, attaching again does)
        super().__init__(message, hint=hint, code=code)
        self.value = value

    def with_value(self, value) -> "UnpublishedError":
        if isinstance(value, dict):
            value = {**value, "published": False}
        self.value = value
        return self


class RepoNotFoundError(SwampError):
    code = "repo_not_found"
