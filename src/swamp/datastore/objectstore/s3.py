"""S3 and S3-compatible servers (AWS, SeaweedFS, ...) through obstore.

Credentials come from where AWS tools look: the AWS_* environment variables
(read by obstore itself), else the shared credentials file
(AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials, profile AWS_PROFILE or
"default"). They stay in memory; nothing is written anywhere.

obstore's own retries are switched off: they would retry 5xx after a
conditional PUT too, and one retry layer (retry.py) that knows what a 412
means is enough.

Large files (put_file / get_file) stream. Above ``multipart_threshold`` an
upload is multipart (parts of ``part_size``, a few in flight), which is also
what lets an object exceed S3's 5 GiB limit on a single PUT. obstore's
timeout covers a whole request, body included, so each transfer runs on a
client whose timeout fits its size (streams.transfer_timeout_s). obstore
aborts a multipart upload that fails, but a process killed mid-upload leaves
its parts stored (and billed) until a bucket lifecycle rule
(AbortIncompleteMultipartUpload) removes them.
"""

from __future__ import annotations

import math
import os
import threading
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from swamp.errors import ObjectNotFound, ObjectStoreError, PreconditionFailed, TransientError

from .base import ObjectMeta, ObjectStore, check_key
from .streams import (
    MIN_RATE,
    Download,
    HashingReader,
    HashingWriter,
    finish_dest,
    open_dest,
    transfer_timeout_s,
)

if TYPE_CHECKING:
    from . import diagnose

MIB = 1 << 20
#: S3 allows at most 10,000 parts; parts grow past ``part_size`` to fit
MAX_PARTS = 10_000


def shared_file_credentials() -> dict[str, str]:
    """Keys from the shared credentials file, unless the environment has some."""
    if os.environ.get("AWS_ACCESS_KEY_ID"):
        return {}
    path = Path(os.environ.get("AWS_SHARED_CREDENTIALS_FILE", Path.home() / ".aws" / "credentials"))
    import configparser  # only without AWS_* credentials in the environment

    parser = configparser.ConfigParser()
    if not parser.read(path):
        return {}
    section = os.environ.get("AWS_PROFILE", "default")
    if not parser.has_option(section, "aws_access_key_id"):
        return {}
    out = {"access_key_id": parser.get(section, "aws_access_key_id"),
           "secret_access_key": parser.get(section, "aws_secret_access_key", fallback="")}
    if parser.has_option(section, "aws_session_token"):
        out["session_token"] = parser.get(section, "aws_session_token")
    return out


def _transient_status(status: int) -> bool:
    # 409: ConditionalRequestConflict (a concurrent conditional write is in
    # flight on AWS); 429 throttling; 5xx server trouble.
    return status in (409, 429) or status >= 500


class S3ObjectStore(ObjectStore):
    def __init__(
        self,
        bucket: str,
        prefix: str = "",
        *,
        endpoint_url: str | None = None,
        region: str | None = None,
        allow_http: bool | None = None,
        timeout_s: float = 30.0,
        connect_timeout_s: float = 5.0,
        multipart_threshold: int = 16 * MIB,
        part_size: int = 8 * MIB,
        part_concurrency: int = 4,
        min_rate: int = MIN_RATE,
    ) -> None:
        from obstore.store import S3Store

        self.prefix = prefix.strip("/")
        self.timeout_s = timeout_s
        self.connect_timeout_s = connect_timeout_s
        #: a file larger than this is uploaded in parts (AWS: parts >= 5 MiB)
        self.multipart_threshold = multipart_threshold
        self.part_size = max(5 * MIB, part_size)
        self.part_concurrency = max(1, part_concurrency)
        self.min_rate = min_rate
        self._bucket = bucket
        self._sized: dict[int, Any] = {}  # timeout (s) -> S3Store with that request timeout
        self._sized_lock = threading.Lock()
        self.name = f"s3://{bucket}/{self.prefix + '/' if self.prefix else ''}"
        config: dict[str, Any] = dict(shared_file_credentials())
        if endpoint_url:
            config["endpoint"] = endpoint_url
            config["virtual_hosted_style_request"] = False  # S3-compatible servers want path style
        if region:
            config["region"] = region
        if allow_http is None:
            allow_http = bool(endpoint_url and endpoint_url.startswith("http://"))
        self._config = config
        self._allow_http = allow_http
        try:
            self._store = self._client(timeout_s)
        except Exception as e:  # obstore checks the configuration here (GenericError)
            if "SecretAccessKey" in str(e) or "AccessKeyId" in str(e):
                raise ObjectStoreError(
                    f"incomplete AWS credentials for {self.name}: an access key without its secret key "
                    "(or the other way round)", code="no_credentials",
                    hint="export both AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY") from None
            raise ObjectStoreError(f"{self.name}: {str(e).splitlines()[0]}") from None

    def _client(self, timeout_s: float) -> Any:
        from obstore.store import S3Store

        return S3Store(
            self._bucket,
            prefix=self.prefix or None,
            config=self._config,
            client_options={"allow_http": self._allow_http, "timeout": timedelta(seconds=timeout_s),
                            "connect_timeout": timedelta(seconds=self.connect_timeout_s)},
            retry_config={"max_retries": 0, "retry_timeout": timedelta(seconds=timeout_s)},
        )

    def _sized_client(self, moving: int) -> Any:
        """A client whose request timeout fits a request moving ``moving``
        bytes. Timeouts are rounded up to a power of two seconds, so a few
        clients (and their connection pools) serve every size; what moves at
        ``min_rate`` within the ordinary timeout uses the ordinary client."""
        if moving / self.min_rate <= self.timeout_s:
            return self._store
        wanted = transfer_timeout_s(moving, self.timeout_s, self.min_rate)
        seconds = 1 << math.ceil(math.log2(wanted))
        with self._sized_lock:
            client = self._sized.get(seconds)
            if client is None:
                client = self._sized[seconds] = self._client(seconds)
            return client

    def _part_size(self, size: int) -> int:
        return max(self.part_size, -(-size // MAX_PARTS))

    # ------------------------------------------------------------- errors
    def _error(self, e: Exception, key: str) -> ObjectStoreError:
        from obstore.exceptions import (
            AlreadyExistsError,
            PermissionDeniedError,
            PreconditionError,
            UnauthenticatedError,
        )

        from . import diagnose  # here: only a failure needs it (regexes, urllib.parse)

        where = f"{self.name}{key}"
        text = str(e)
        failure = diagnose.parse(text)
        status = failure.status
        if failure.asked_metadata_service:  # nothing in the environment or the shared file
            looked, hint = diagnose.aws_credentials_text()
            return ObjectStoreError(f"no AWS credentials found for {self.name}: {looked}", hint=hint,
                                    code="no_credentials")
        if failure.code == "NoSuchBucket" or "NoSuchBucket" in text:
            return ObjectStoreError(f"{self.name}: the bucket '{self._bucket}' does not exist"
                                    + (f" on {failure.endpoint}" if failure.endpoint else ""),
                                    hint=diagnose.s3_hint("NoSuchBucket"), code="no_such_bucket")
        # obstore reports a 409 on a conditional PUT as AlreadyExists; on
        # AWS it is ConditionalRequestConflict, "try again", not an answer.
        if isinstance(e, (AlreadyExistsError, PreconditionError)) and status != 409:
            return PreconditionFailed(f"{where}: precondition failed")
        if isinstance(e, FileNotFoundError):
            return ObjectNotFound(f"{where} not found")
        said = self._server_said(failure)
        if isinstance(e, (PermissionDeniedError, UnauthenticatedError)) or status in (401, 403):
            return ObjectStoreError(f"{where}: access denied: {said}", code="access_denied",
                                    hint=diagnose.s3_hint(failure.code) or diagnose.s3_hint("AccessDenied"))
        if failure.unreachable:
            return TransientError(f"{where}: cannot reach {failure.endpoint or 'the server'} "
                                  f"({failure.unreachable}) for {failure.operation or 'a request'}",
                                  hint="is the server running, and is the endpoint right? "
                                       "(datastore setup --endpoint-url)")
        if status is not None and not _transient_status(status):
            return ObjectStoreError(f"{where}: {said}", hint=diagnose.s3_hint(failure.code))
        # 409/429/5xx, timeouts, dropped connections
        return TransientError(f"{where}: {said}")

    @staticmethod
    def _server_said(failure: diagnose.Failure) -> str:
        """'PUT answered 403 SignatureDoesNotMatch: <the server's message>'."""
        parts = [failure.operation or "request"]
        if failure.status is not None:
            parts.append(f"answered {failure.status}")
        if failure.code:
            parts.append(failure.code + (f": {failure.message}" if failure.message else ""))
        elif failure.unreachable:
            parts.append(f"failed ({failure.unreachable})")
        return " ".join(parts) + (f" (at {failure.endpoint})" if failure.endpoint else "")

    # ------------------------------------------------------------ the bucket
    @property
    def bucket_name(self) -> str:
        return self._bucket

    @property
    def endpoint(self) -> str | None:
        return self._config.get("endpoint")

    def bucket_exists(self) -> bool:
        """One LIST of at most one key: NoSuchBucket means no."""
        import obstore

        try:
            next(iter(obstore.list(self._store, chunk_size=1)), None)
        except Exception as e:
            error = self._error(e, "")
            if error.code == "no_such_bucket":
                return False
            raise error from e
        return True

    def create_bucket(self) -> None:
        """CreateBucket, signed by obstore and sent by urllib (obstore has
        no bucket operations). A bucket that is already there is fine."""
        import urllib.error  # imported here: a rare call, and 10+ ms at load
        import urllib.request

        import obstore
        from obstore.store import S3Store

        bare = S3Store(self._bucket, config=self._config, client_options={"allow_http": self._allow_http})
        url = obstore.sign(bare, "PUT", "", timedelta(minutes=5))
        body = b""
        region = self._config.get("region")
        if region and region != "us-east-1" and not self.endpoint:  # AWS wants the region named
            body = (f'<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
                    f"<LocationConstraint>{region}</LocationConstraint></CreateBucketConfiguration>").encode()
        try:
            urllib.request.urlopen(urllib.request.Request(url, method="PUT", data=body), timeout=30).close()
        except urllib.error.HTTPError as e:
            if e.code != 409:  # 409: BucketAlreadyOwnedByYou
                raise ObjectStoreError(f"creating the bucket '{self._bucket}' failed: {e.code} {e.reason}") from e
        except (urllib.error.URLError, OSError) as e:
            raise TransientError(f"creating the bucket '{self._bucket}' failed: {e}") from e

    # ------------------------------------------------------------ the API
    def get(self, key: str) -> tuple[bytes, str]:
        import obstore

        check_key(key)
        try:
            result = obstore.get(self._store, key)
            data = bytes(result.bytes())
        except Exception as e:
            raise self._error(e, key) from e
        return data, result.meta["e_tag"] or ""

    def put(self, key: str, data: bytes, *, if_none_match: bool = False,
            if_match: str | None = None) -> str:
        import obstore

        mode: Any = "overwrite"
        if if_none_match:
            mode = "create"
        elif if_match is not None:
            mode = {"e_tag": if_match}
        check_key(key)
        try:
            body = data if isinstance(data, bytes) or (isinstance(data, memoryview) and data.readonly) else bytes(data)
            result = obstore.put(self._store, key, body, mode=mode, use_multipart=False)
        except FileNotFoundError as e:
            # If-Match on a missing key: AWS answers 404, SeaweedFS 412.
            if if_match is not None and "NoSuchBucket" not in str(e):
                raise PreconditionFailed(f"{self.name}{key}: missing (If-Match)") from e
            raise self._error(e, key) from e
        except Exception as e:
            raise self._error(e, key) from e
        return result["e_tag"] or ""

    def put_file(self, key: str, path: Path, *, if_none_match: bool = False, sha256: str | None = None) -> str:
        check_key(key)
        path = Path(path)
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            source = HashingReader(f, size, sha256)
            try:
                return self._upload(key, source, size, if_none_match)
            except Exception:
                if source.mismatch:
                    raise self._source_changed(key, path) from None
                raise

    def _upload(self, key: str, source: HashingReader, size: int, if_none_match: bool) -> str:
        import obstore

        if size <= self.multipart_threshold:
            # One PUT, create-only where asked. obstore holds a single PUT's
            # body in memory: at most the threshold.
            mode: Any = "create" if if_none_match else "overwrite"
            try:
                result = obstore.put(self._sized_client(size), key, source, mode=mode, use_multipart=False)
            except Exception as e:
                raise self._error(e, key) from e
            return result["e_tag"] or ""
        # Multipart. obstore (object_store) cannot make the completing request
        # create-only (it sends If-None-Match there only for its own copies),
        # so create-only is checked when the upload starts, and the completion
        # overwrites. That is correct for the keys this is used for, blobs:
        # a blob's key is the sha256 of its bytes, so a peer that completes an
        # upload of the same key at the same time stores the very same bytes,
        # and overwriting identical content changes nothing a reader sees.
        # (The hash check of HashingReader runs before the last part is
        # handed over, so a file that changed meanwhile never completes.)
        if if_none_match and self.head(key) is not None:
            raise PreconditionFailed(f"{self.name}{key}: precondition failed")
        part = self._part_size(size)
        try:
            result = obstore.put(self._sized_client(part * self.part_concurrency), key, source,
                                 use_multipart=True, chunk_size=part, max_concurrency=self.part_concurrency)
        except Exception as e:
            raise self._error(e, key) from e
        return result["e_tag"] or ""

    def get_file(self, key: str, dest: Path, *, size_hint: int | None = None, fsync: bool = False) -> Download:
        import obstore

        check_key(key)
        if size_hint is None:
            meta = self.head(key)
            if meta is None:
                raise ObjectNotFound(f"{self.name}{key} not found")
            size_hint = meta.size
        try:
            result = obstore.get(self._sized_client(size_hint), key)
            stream = iter(result.stream(min_chunk_size=MIB))
        except Exception as e:
            raise self._error(e, key) from e
        etag = result.meta["e_tag"] or ""
        with open_dest(dest) as out:  # errors of the local disk are not the store's: they pass as they are
            writer = HashingWriter(out)
            while True:
                try:
                    chunk = next(stream)
                except StopIteration:
                    break
                except Exception as e:
                    raise self._error(e, key) from e
                writer.write(chunk)
            finish_dest(out, fsync)
        return writer.result(etag)

    def head(self, key: str) -> ObjectMeta | None:
        import obstore

        check_key(key)
        try:
            meta = obstore.head(self._store, key)
        except FileNotFoundError:
            return None
        except Exception as e:
            raise self._error(e, key) from e
        return self._meta(meta)

    @staticmethod
    def _meta(meta: Any) -> ObjectMeta:
        return ObjectMeta(meta["path"], meta["size"], meta["e_tag"] or "", meta["last_modified"].timestamp())

    def list(self, prefix: str = "", start_after: str | None = None) -> Iterator[ObjectMeta]:
        import obstore

        # obstore lists whole '/'-segments; our prefix is a plain string
        # prefix: list the enclosing directory and filter. Without a
        # start_after, start at prefix[:-1], which sorts before every key
        # with the prefix in plain and in per-segment order alike.
        parent = prefix.rsplit("/", 1)[0] if "/" in prefix else ""
        offset = start_after
        below = prefix[:-1] if prefix and not prefix.endswith("/") else None
        if below and (offset is None or offset < below):
            offset = below
        try:
            found = [self._meta(meta)
                     for chunk in obstore.list(self._store, parent or None, offset=offset, chunk_size=1000)
                     for meta in chunk
                     if meta["path"].startswith(prefix) and (start_after is None or meta["path"] > start_after)]
        except Exception as e:
            raise self._error(e, prefix) from e
        # AWS lists in UTF-8 order; SeaweedFS walks its directory tree instead
        # ("a/b" before "a-b"), so sort here. Its start-after follows the same
        # tree order: a start_after key that is also the directory of other
        # keys skips them there (swamp's fixed-width log names never are).
        yield from sorted(found, key=lambda m: m.key)

    def delete(self, key: str, *, if_match: str | None = None) -> None:
        import obstore

        check_key(key)
        if if_match is None:
            try:
                obstore.delete(self._store, key)
            except FileNotFoundError:
                pass
            except Exception as e:
                raise self._error(e, key) from e
            return
        # Servers that ignore If-Match on DELETE (radosgw 16) would delete
        # anyway: compare first, so only a race in between goes unnoticed
        # there. AWS and SeaweedFS enforce the header itself.
        meta = self.head(key)
        if meta is None or meta.etag != if_match:
            raise PreconditionFailed(f"{self.name}{key} changed or missing (etag mismatch)")
        self._conditional_delete(key, if_match)

    def _conditional_delete(self, key: str, if_match: str) -> None:
        # obstore has no conditional delete; a presigned DELETE URL signs the
        # host only, so an If-Match header can ride along unsigned.
        import urllib.error
        import urllib.request

        import obstore

        try:
            url = obstore.sign(self._store, "DELETE", key, timedelta(minutes=5))
        except Exception as e:
            raise self._error(e, key) from e
        request = urllib.request.Request(url, method="DELETE", headers={"If-Match": if_match})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s):
                return
        except urllib.error.HTTPError as e:
            if e.code in (404, 412):
                raise PreconditionFailed(f"{self.name}{key} changed or missing (etag mismatch)") from e
            if _transient_status(e.code):
                raise TransientError(f"{self.name}{key}: DELETE answered {e.code}") from e
            raise ObjectStoreError(f"{self.name}{key}: DELETE answered {e.code} {e.reason}") from e
        except (urllib.error.URLError, OSError) as e:
            raise TransientError(f"{self.name}{key}: DELETE failed: {e}") from e
