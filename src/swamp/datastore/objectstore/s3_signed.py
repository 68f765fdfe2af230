"""The two S3 requests obstore cannot make, signed by obstore and sent by
urllib: CreateBucket (obstore has no bucket operations) and a DELETE with
If-Match (obstore has no conditional delete; a presigned URL signs the host
only, so the header can ride along unsigned). Both are bounded by the
store's answer limit, like every other request."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from .base import ObjectStoreError, PreconditionFailed, TransientError
from .s3_errors import no_answer, transient_status

if TYPE_CHECKING:
    from .s3_clients import S3Clients


def _timed_out(e: BaseException) -> bool:
    import socket

    return isinstance(e, (TimeoutError, socket.timeout)) or isinstance(getattr(e, "reason", None),
                                                                        (TimeoutError, socket.timeout))


def create_bucket(clients: S3Clients, name: str) -> None:
    """A bucket that is already there is fine."""
    import urllib.error  # imported here: a rare call, and 10+ ms at load
    import urllib.request

    import obstore
    from obstore.store import S3Store

    bare = S3Store(clients.bucket, config=clients.config, client_options={"allow_http": clients.allow_http})
    url = obstore.sign(bare, "PUT", "", timedelta(minutes=5))
    body = b""
    region = clients.config.get("region")
    if region and region != "us-east-1" and not clients.config.get("endpoint"):  # AWS wants the region named
        body = (f'<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
                f"<LocationConstraint>{region}</LocationConstraint></CreateBucketConfiguration>").encode()
    try:
        urllib.request.urlopen(urllib.request.Request(url, method="PUT", data=body),
                               timeout=clients.response_timeout_s).close()
    except urllib.error.HTTPError as e:
        if e.code != 409:  # 409: BucketAlreadyOwnedByYou
            raise ObjectStoreError(f"creating the bucket '{clients.bucket}' failed: {e.code} {e.reason}") from e
    except (urllib.error.URLError, OSError) as e:
        if _timed_out(e):
            raise no_answer(name, "", clients.config.get("endpoint"), "CreateBucket", clients) from e
        raise TransientError(f"creating the bucket '{clients.bucket}' failed: {e}") from e


def conditional_delete(clients: S3Clients, name: str, key: str, if_match: str, on_error) -> None:
    """``on_error(e, key)`` maps a failure to sign (obstore's) to our errors."""
    import urllib.error
    import urllib.request

    import obstore

    try:
        url = obstore.sign(clients.plain, "DELETE", key, timedelta(minutes=5))
    except Exception as e:
        raise on_error(e, key) from e
    request = urllib.request.Request(url, method="DELETE", headers={"If-Match": if_match})
    try:
        with urllib.request.urlopen(request, timeout=clients.response_timeout_s):
            return
    except urllib.error.HTTPError as e:
        if e.code in (404, 412):
            raise PreconditionFailed(f"{name}{key} changed or missing (etag mismatch)") from e
        if transient_status(e.code):
            raise TransientError(f"{name}{key}: DELETE answered {e.code}") from e
        raise ObjectStoreError(f"{name}{key}: DELETE answered {e.code} {e.reason}") from e
    except (urllib.error.URLError, OSError) as e:
        if _timed_out(e):
            raise no_answer(name, key, clients.config.get("endpoint"), "DELETE", clients) from e
        raise TransientError(f"{name}{key}: DELETE failed: {e}") from e
