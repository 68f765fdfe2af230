"""What an obstore failure on S3 means: an answer (412, 404), a refusal to
show a person (access denied, no such bucket, no credentials), or a fault
worth retrying (409, 429, 5xx, no answer, a dropped connection)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import ObjectNotFound, ObjectStoreError, PreconditionFailed, TransientError
from .no_answer import no_answer as no_answer_error

if TYPE_CHECKING:
    from . import diagnose
    from .s3_clients import S3Clients


def transient_status(status: int) -> bool:
    # 409: ConditionalRequestConflict (a concurrent conditional write is in
    # flight on AWS); 429 throttling; 5xx server trouble.
    return status in (409, 429) or status >= 500


def seconds(value: float) -> str:
    return f"{value:g} s"


def s3_error(e: Exception, name: str, key: str, clients: S3Clients) -> ObjectStoreError:
    from obstore.exceptions import (
        AlreadyExistsError,
        PermissionDeniedError,
        PreconditionError,
        UnauthenticatedError,
    )

    from . import diagnose  # here: only a failure needs it (regexes, urllib.parse)

    where = f"{name}{key}"
    text = str(e)
    failure = diagnose.parse(text)
    status = failure.status
    if failure.asked_metadata_service:  # nothing in the environment or the shared file
        looked, hint = diagnose.aws_credentials_text()
        return ObjectStoreError(f"no AWS credentials found for {name}: {looked}", hint=hint,
                                code="no_credentials")
    if failure.code == "NoSuchBucket" or "NoSuchBucket" in text:
        return ObjectStoreError(f"{name}: the bucket '{clients.bucket}' does not exist"
                                + (f" on {failure.endpoint}" if failure.endpoint else ""),
                                hint=diagnose.s3_hint("NoSuchBucket"), code="no_such_bucket")
    # obstore reports a 409 on a conditional PUT as AlreadyExists; on
    # AWS it is ConditionalRequestConflict, "try again", not an answer.
    if isinstance(e, (AlreadyExistsError, PreconditionError)) and status != 409:
        return PreconditionFailed(f"{where}: precondition failed")
    if isinstance(e, FileNotFoundError):
        return ObjectNotFound(f"{where} not found")
    said = server_said(failure)
    if isinstance(e, (PermissionDeniedError, UnauthenticatedError)) or status in (401, 403):
        return ObjectStoreError(f"{where}: access denied: {said}", code="access_denied",
                                hint=diagnose.s3_hint(failure.code) or diagnose.s3_hint("AccessDenied"))
    if failure.unreachable == "timed out":
        return no_answer(name, key, failure.endpoint or clients.config.get("endpoint"), failure.operation,
                         clients, connecting="kind: Connect" in text)
    if failure.unreachable:
        return TransientError(f"{where}: cannot reach {failure.endpoint or 'the server'} "
                              f"({failure.unreachable}) for {failure.operation or 'a request'}",
                              hint="is the server running, and is the endpoint right? "
                                   "(datastore setup --endpoint-url)")
    if status is not None and not transient_status(status):
        return ObjectStoreError(f"{where}: {said}", hint=diagnose.s3_hint(failure.code))
    # 409/429/5xx, dropped connections
    return TransientError(f"{where}: {said}")


def no_answer(name: str, key: str, endpoint: str | None, operation: str | None, clients: S3Clients,
              *, connecting: bool = False) -> TransientError:
    """'s3://b/ at http://host:port did not answer within 5 s (HEAD k)'."""
    at = f"{name.rstrip('/')} at {endpoint or 'AWS S3'}"
    what = (f"could not connect within {seconds(clients.connect_timeout_s)}" if connecting
            else f"did not answer within {seconds(min(clients.response_timeout_s, clients.timeout_s))}")
    return no_answer_error(f"{at} {what} ({operation or 'request'} {key or '/'})",
                    hint="is the endpoint right and the server up? A slow server needs a larger "
                         "'networkTimeout' in the datastore settings of .swamp.yaml "
                         "(docs: swamp docs sync, 'Timeouts')")


def server_said(failure: diagnose.Failure) -> str:
    """'PUT answered 403 SignatureDoesNotMatch: <the server's message>'."""
    parts = [failure.operation or "request"]
    if failure.status is not None:
        parts.append(f"answered {failure.status}")
    if failure.code:
        parts.append(failure.code + (f": {failure.message}" if failure.message else ""))
    elif failure.unreachable:
        parts.append(f"failed ({failure.unreachable})")
    return " ".join(parts) + (f" (at {failure.endpoint})" if failure.endpoint else "")
