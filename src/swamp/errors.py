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


class RepoNotFoundError(SwampError):
    code = "repo_not_found"
