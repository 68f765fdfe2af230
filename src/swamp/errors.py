"""Every error swamp raises on purpose, in one file, drawn here as a tree.

Every error a user can meet is a SwampError: a message, a stable machine
code (``code``, what ``--json`` and the HTTP API print), an optional hint,
and an exit code. Catch the branch you mean: ``except ObjectStoreError``
takes every object-store failure, ``except PreconditionFailed`` one.

    Exception
      SwampError                        error   exit 1 unless said
        UsageError                      usage   exit 2
          InsecureLinkError             a plain scheduler link, not asked for
        NotFoundError                   not_found
        ValidationError                 validation
          SchemaError                   a document's schema errors, each with its place
        ConflictError                   conflict
          SyncConflictError             paths conflicted; theirs in place
          TokenRefusedError             a worker enrolment token used, revoked or expired
        LockTimeoutError                lock_timeout   exit 75
        LeaseLostError                  lease_lost
        UnpublishedError                unpublished (carries the result)
        RepoNotFoundError               repo_not_found
        ObjectStoreError                objectstore
          ObjectNotFound                a key that is not there
          PreconditionFailed            a conditional write lost
          TransientError                worth retrying
          SourceChanged                 a file changed after it was hashed
          BackendRefused                the conditional-write probe failed
        CorruptRemoteError              the remote breaks the protocol
        RemoteChangedError              not the remote this cache describes
        ExpressionError                 a ${{ }} or CEL expression
        ExtensionError                  extension
        IndexError_                     a package index
        HashMismatchError               a wheel that is not the pinned one
        PinnedIndexError                asked for from another index
        AmbiguousIndexError             a new name on two trusted indexes
        TamperedInstallError            an install changed since it was sealed
        ApprovalRefusedError            approving one's own change
        TypeLoadError                   a model type that does not load
        CheckFailed                     a pre-flight check said no
        CommandFailed                   the shell model's command failed
        VaultError                      the local_encryption vault
        AwsVaultError                   the AWS Secrets Manager vault
        VaultMigrationError             moving secrets between vaults
        SchedulerUnreachableError       no Dask scheduler at the address
        SealError                       a placed step's sealed secrets
        WorkerLostError                 a placed step's worker died
        NoWorkerError                   no worker has the step's labels
        StepCancelledError              a placed step was cancelled
        NoDispatcherError               placed steps, and no scheduler to send them to
        NotRecordedError                a webhook delivery not recorded
        AccessBroken                    serve's access documents unreadable
        HttpError                       serve's own refusals (auth, limits)
        RemoteError                     a server's error, re-raised by --server

A few exceptions are signals between functions of one module and never
reach a user (a merge that cannot be made, a path a rule blocks, a store's
private conflict): they stay beside the code that raises and catches them,
and ``tests/unit/test_error_tree.py`` lists each with its reason.
``tests/unit/test_error_tree.py`` also checks that this drawing names every
class below under its real base, so it cannot go stale.

This module imports nothing of swamp's: every layer may import it. A few
modules re-export the errors of their interface, so that code written
against them keeps importing (``datastore/objectstore/base.py`` and
``errors.py``, ``datastore/sync/errors.py``, ``serve/errors.py``); new
code imports from here.
"""

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


class SchemaError(ValidationError):
    """A document that does not fit its schema. ``problems`` are every
    error, each ``{"path", "message"}`` (path: its place in the document,
    like ``jobs[0].steps[2].task``), sorted by place; --json prints them as
    the error's ``errors`` (the message joins them, for a reader of one line)."""

    def __init__(self, message: str, *, problems: list[dict], hint: str | None = None, source: str | None = None):
        super().__init__(message, hint=hint)
        self.problems = problems
        self.source = source  # the document's file, as the message names it

    def to_json(self) -> dict:
        out = super().to_json()
        out["errors"] = [dict(p) for p in self.problems]
        return out


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


# --- object stores (datastore/objectstore/) ---------------------------------


class ObjectStoreError(SwampError):
    code = "objectstore"


class ObjectNotFound(ObjectStoreError):
    code = "object_not_found"


class PreconditionFailed(ObjectStoreError):
    """A conditional write lost: the key exists (create-only) or its ETag
    changed (compare-and-swap). Never retried blindly."""

    code = "precondition_failed"


class TransientError(ObjectStoreError):
    """A fault worth retrying: 409 ConditionalRequestConflict, 5xx, timeout,
    dropped connection."""

    code = "transient"


class SourceChanged(ObjectStoreError):
    """put_file was given the sha256 of the file, and the bytes it read are
    different: the file changed after it was hashed. Nothing was stored."""

    code = "source_changed"


class BackendRefused(ObjectStoreError):
    """The conditional-write probe (S7) failed: not safe for shared state."""

    code = "backend_refused"


# --- the sync protocol (datastore/sync/) ------------------------------------


class CorruptRemoteError(SwampError):
    """The remote log or a blob is not what the protocol promises (a gap, a
    bad record, a hash mismatch). Never papered over: nothing is applied."""

    code = "corrupt_remote"


class SyncConflictError(ConflictError):
    """Raised by pull/push/sync after the safe part is finished and recorded:
    some paths conflicted. ``counts`` (a ``SyncCounts``) is the full report,
    ``counts.conflicts`` says what happened to each path (theirs in place,
    ours saved aside)."""

    def __init__(self, counts) -> None:
        parts = []
        for c in counts.conflicts:
            what = c["path"]
            if c.get("keys"):
                what += " (key " + ", ".join(repr(k) for k in c["keys"]) + ")"
            if c.get("savedAs"):
                what += f", yours saved as {c['savedAs']}"
            parts.append(what)
        super().__init__(
            f"{len(counts.conflicts)} conflict(s): " + "; ".join(parts),
            hint="theirs is in place; compare with the saved copy, edit the file, then sync again",
        )
        self.counts = counts


class TokenRefusedError(ConflictError):
    """A worker enrolment token that is used, revoked, expired or not ours."""

    code = "token_refused"


class RemoteChangedError(SwampError):
    """The remote is not the one this cache's sync state describes."""

    code = "remote_changed"

    #: also what ``swamp doctor`` suggests when it finds the same
    ATTACH_HINT = ("if it is the remote you mean, attach this repository to it again with "
                   "'swamp datastore setup s3|gcs ...' (the same options as before): that republishes "
                   "whatever the remote lacks")

    def __init__(self, message: str) -> None:
        super().__init__(message + "; nothing was applied or published", hint=self.ATTACH_HINT)


# --- expressions (expr/) ----------------------------------------------------


class ExpressionError(SwampError):
    """What went wrong, in which file and field, in which expression, and
    where in it. ``detail`` is the engine's reason; ``snippet`` the
    expression with a caret under ``line``:``column`` (both 1-based, within
    the expression) when the position is known."""

    code = "expression"

    def __init__(
        self,
        detail: str,
        *,
        expression: str | None = None,
        source: str | None = None,
        field: str | None = None,
        line: int | None = None,
        column: int | None = None,
        snippet: str | None = None,
        hint: str | None = None,
    ):
        self.detail = detail
        self.expression = expression
        self.source = source
        self.field = field
        self.line = line
        self.column = column
        self.snippet = snippet
        super().__init__(self._compose(), hint=hint)

    def located(self, *, source: str | None = None, field: str | None = None,
                expression: str | None = None) -> "ExpressionError":
        """The same error with the location filled in where it was missing
        (and its code: ``forbidden`` when a namespace refused the caller)."""
        err = ExpressionError(
            self.detail,
            expression=self.expression or expression,
            source=self.source or source,
            field=self.field or field,
            line=self.line,
            column=self.column,
            snippet=self.snippet,
            hint=self.hint,
        )
        err.code = self.code
        return err

    def problem(self):
        """The error as a check's Problem (util/problems.py): its field is
        the place, the rest of the message what is wrong there."""
        from swamp.util.problems import Problem

        if self.field and not self.source:
            return Problem(self.field, self._compose(located=False))
        return Problem("", self.message)

    def _compose(self, located: bool = True) -> str:
        where = ": ".join(p for p in (self.source, self.field) if p) if located else ""
        text = f"{where}: " if where else ""
        if self.expression is not None:
            text += f"${{{{ {self.expression} }}}}: "
        if self.line is not None and self.column is not None:
            text += f"{self.line}:{self.column}: "
        text += self.detail
        if self.snippet:
            text += "\n" + self.snippet
        return text


# --- extensions (extensions/, app/extension_review.py) ----------------------


class ExtensionError(SwampError):
    code = "extension"


class IndexError_(SwampError):
    """The package index could not be read, or does not have what was asked."""

    code = "index"


class HashMismatchError(SwampError):
    """A downloaded wheel is not the one the lockfile pins: never installed."""

    code = "hash_mismatch"


class PinnedIndexError(SwampError):
    """An extension pinned to one index was asked for from another without
    ``--move``: its code comes only from the index it was pinned from."""

    code = "pinned_index"


class AmbiguousIndexError(SwampError):
    """A name not pinned yet is on more than one trusted index: which one is
    the team's is not swamp's guess to make (a look-alike package on a second
    index is how dependency confusion works)."""

    code = "ambiguous_index"


class TamperedInstallError(SwampError):
    """An installed extension's files are not the ones its pinned wheels
    unpacked to (changed, added or made writable by others since): never
    loaded."""

    code = "tampered_install"


class ApprovalRefusedError(SwampError):
    """The one who proposed a change (or someone swamp cannot name) cannot approve it."""

    code = "approval_refused"


# --- models (models/) -------------------------------------------------------


class TypeLoadError(SwampError):
    code = "type_load_error"


class CheckFailed(SwampError):
    """Raised by a check (and by the runner when one fails): exit 1.
    Extension writers import it as ``from swamp import CheckFailed``."""

    code = "check_failed"


class CommandFailed(SwampError):
    """The builtin shell model's command exited non-zero (or ran out of
    time). ``stderr_tail`` is the last lines of what it printed on stderr,
    kept apart from the short message so a reader can show it without
    parsing the message (the records' ``stderrTail``)."""

    code = "command_failed"

    def __init__(self, message: str, *, stderr_tail: str | None = None, hint: str | None = None):
        super().__init__(message, hint=hint)
        self.stderr_tail = stderr_tail

    def to_json(self) -> dict:
        out = super().to_json()
        if self.stderr_tail:
            out["stderrTail"] = self.stderr_tail
        return out


# --- vaults (vault/, app/vaults.py) -----------------------------------------


class VaultError(SwampError):
    code = "vault"


class AwsVaultError(SwampError):
    code = "vault"


class VaultMigrationError(SwampError):
    code = "vault_migrate"


# --- workers and placed steps (workers/, app/remote_steps.py) ---------------


class InsecureLinkError(UsageError):
    code = "insecure_link"


class SchedulerUnreachableError(SwampError):
    code = "scheduler_unreachable"


class SealError(SwampError):
    code = "sealed_secrets"


class WorkerLostError(SwampError):
    """The worker running the step went away; the step is not run again."""

    code = "worker_lost"


class NoWorkerError(SwampError):
    """No connected worker fits the placement within its queue timeout."""

    code = "no_worker"


class StepCancelledError(SwampError):
    code = "cancelled"


class NoDispatcherError(SwampError):
    """A placed step, and nothing here to send it with (no scheduler configured)."""

    code = "no_scheduler"


# --- serve, and the CLI's --server (serve/, cli/remote.py) ------------------


class NotRecordedError(SwampError):
    """The delivery's record could not be published: it was taken back, and
    the delivery must be sent again (serve: 503, Retry-After)."""

    code = "unavailable"


class AccessBroken(SwampError):
    """The grants, groups or tokens a server enforces cannot be read: it
    refuses every request (503) until they are fixed, rather than allow one
    by accident."""

    code = "access_broken"


class HttpError(SwampError):
    """An error raised by serve itself (auth, limits, malformed requests)."""

    def __init__(self, code: str, message: str, *, hint: str | None = None) -> None:
        super().__init__(message, hint=hint, code=code)


#: the codes a server's error document may carry that exit other than 1
_REMOTE_EXIT_CODES = {UsageError.code: UsageError.exit_code, LockTimeoutError.code: LockTimeoutError.exit_code}


class RemoteError(SwampError):
    """An error document from the server, re-raised here as the same error
    (its code, hint and exit code)."""

    def __init__(self, doc: dict) -> None:
        super().__init__(doc.get("error", "error"), hint=doc.get("hint"), code=doc.get("code", "error"))
        self.exit_code = _REMOTE_EXIT_CODES.get(self.code, 1)
        # a document's schema errors (SchemaError's "errors"), kept as the server gave them: text only
        errors = doc.get("errors")
        self.problems = [{"path": str(p.get("path", "")), "message": str(p.get("message", ""))}
                         for p in errors if isinstance(p, dict)] if isinstance(errors, list) else []

    def to_json(self) -> dict:
        out = super().to_json()
        if self.problems:
            out["errors"] = [dict(p) for p in self.problems]
        return out
