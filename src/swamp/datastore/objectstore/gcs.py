"""Google Cloud Storage through google-cloud-storage (the JSON API).

Why not obstore's GCSStore, like S3: obstore writes through the GCS XML API,
and fake-gcs-server, the only GCS emulator here that enforces preconditions,
answers its PUT with ``400 invalid uploadType`` (checked with obstore 0.12.1
and fake-gcs-server 0.1.1's binary). A backend that no test can exercise is
not shipped; this one is tested against fake-gcs-server.

Conditions use generations: create-only is ``if_generation_match=0``,
compare-and-swap is ``if_generation_match=<generation>``, and the ETag we
hand out is the generation as a string (it changes on every write, identical
bytes included). The library's own retries are off (``retry=None``): retry.py
is the one retry layer.

Large files (put_file / get_file) stream: above ``multipart_threshold`` an
upload is resumable, sent in chunks of ``part_size`` (the library keeps one
chunk in memory); a download is one request whose body is written as it
arrives. Its timeout is per socket read, so a slow but moving transfer is
never cut; the value passed still grows with the size moved. Every other
request waits at most ``connect_timeout_s`` to connect and
``response_timeout_s`` for each read of its answer (docs/sync.md
"Timeouts").

The emulator is used when ``endpoint_url`` or STORAGE_EMULATOR_HOST is set,
with anonymous credentials; otherwise the usual Google application default
credentials apply.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Iterator

from swamp.errors import ObjectNotFound, ObjectStoreError, PreconditionFailed, TransientError

from . import diagnose
from .base import (
    ObjectMeta,
    ObjectStore,
    check_key,
)
from .no_answer import no_answer
from .streams import (
    MIN_RATE,
    Download,
    HashingReader,
    HashingWriter,
    finish_dest,
    open_dest,
    transfer_timeout_s,
)

MIB = 1 << 20


class GCSObjectStore(ObjectStore):
    def __init__(
        self,
        bucket: str,
        prefix: str = "",
        *,
        endpoint_url: str | None = None,
        project: str | None = None,
        timeout_s: float = 30.0,
        connect_timeout_s: float = 5.0,
        response_timeout_s: float = 5.0,
        multipart_threshold: int = 8 * MIB,
        part_size: int = 8 * MIB,
        min_rate: int = MIN_RATE,
    ) -> None:
        self.bucket_name = bucket
        self.multipart_threshold = multipart_threshold
        # resumable chunks are multiples of 256 KiB
        self.part_size = max(256 * 1024, part_size // (256 * 1024) * (256 * 1024))
        self.min_rate = min_rate
        self.prefix = prefix.strip("/")
        self._root = self.prefix + "/" if self.prefix else ""
        endpoint = endpoint_url or os.environ.get("STORAGE_EMULATOR_HOST")
        if endpoint and "://" not in endpoint:
            endpoint = "http://" + endpoint
        self.endpoint = endpoint
        self.project = project
        self.connect_timeout_s = connect_timeout_s
        self.response_timeout_s = response_timeout_s
        self.timeout_s = timeout_s
        #: (connect, each read) for a request that moves little: what requests takes
        self.timeouts = (connect_timeout_s, self.response_timeout_s)
        self.name = f"gs://{bucket}/{self._root}"
        # A google Client wraps a requests.Session, which is not documented
        # as thread-safe: one client per thread keeps the store shareable.
        self._local = threading.local()

    def _bucket(self) -> Any:
        bucket = getattr(self._local, "bucket", None)
        if bucket is None:
            from google.cloud import storage

            if self.endpoint:
                from google.auth.credentials import AnonymousCredentials

                client = storage.Client(project=self.project or "swamp", credentials=AnonymousCredentials(),
                                        client_options={"api_endpoint": self.endpoint})
            else:
                import google.auth.exceptions

                try:
                    client = storage.Client(project=self.project)
                except google.auth.exceptions.DefaultCredentialsError:
                    looked, hint = diagnose.gcs_credentials_text()
                    raise ObjectStoreError(f"no Google credentials found for {self.name}: {looked}", hint=hint,
                                           code="no_credentials") from None
            # google-cloud-storage 3.x reads the bucket's metadata in a
            # background thread on a client's first call, only to label its
            # trace spans: one request more per thread (needing
            # storage.buckets.get) from a daemon an exit can cut off.
            if getattr(client, "_bucket_metadata_cache", None) is not None:
                client._bucket_metadata_cache = None
            bucket = self._local.bucket = client.bucket(self.bucket_name)
        return bucket

    def _error(self, e: Exception, key: str) -> ObjectStoreError:
        from google.api_core import exceptions as gx

        where = f"{self.name}{key}"
        if isinstance(e, gx.PreconditionFailed):
            return PreconditionFailed(f"{where}: precondition failed")
        if isinstance(e, gx.NotFound):
            return ObjectNotFound(f"{where} not found")
        if isinstance(e, (gx.Conflict, gx.TooManyRequests, gx.ServerError)):
            return TransientError(f"{where}: {e}")
        if isinstance(e, gx.GoogleAPICallError):
            return ObjectStoreError(f"{where}: {e}")
        # requests' connection errors and timeouts, google.auth transport errors
        import requests

        endpoint = self.endpoint or "storage.googleapis.com"
        if isinstance(e, requests.Timeout):
            what = (f"could not connect within {self.connect_timeout_s:g} s" if isinstance(e, requests.ConnectTimeout)
                    else f"did not answer within {self.response_timeout_s:g} s")
            return no_answer(f"{self.name.rstrip('/')} at {endpoint} {what} ({key or '/'})",
                            hint="is the endpoint right and the server up? A slow server needs a larger "
                                 "'networkTimeout' in the datastore settings of .swamp.yaml "
                                 "(docs: swamp docs sync, 'Timeouts')")
        if isinstance(e, requests.ConnectionError):
            why = "connection refused" if "refused" in str(e) else "no connection"
            return TransientError(f"{where}: cannot reach {endpoint} ({why})",
                                  hint="is the server running, and is the endpoint right? "
                                       "(datastore setup --endpoint-url)")
        return TransientError(f"{where}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")

    def _calls(self) -> tuple[type[Exception], ...]:  # the errors worth mapping; others are bugs
        import google.auth.exceptions
        import requests
        from google.api_core import exceptions as gx

        return (gx.GoogleAPICallError, requests.RequestException, google.auth.exceptions.TransportError)

    # ------------------------------------------------------------ the bucket
    def bucket_exists(self) -> bool:
        try:
            return self._bucket().exists(retry=None, timeout=self.timeouts)
        except self._calls() as e:
            raise self._error(e, "") from e

    def create_bucket(self) -> None:
        bucket = self._bucket()
        try:
            bucket.client.create_bucket(bucket, retry=None, timeout=self.timeouts)
        except self._calls() as e:
            from google.api_core import exceptions as gx

            if not isinstance(e, gx.Conflict):  # already there
                raise self._error(e, "") from e

    # ------------------------------------------------------------ the API
    def get(self, key: str) -> tuple[bytes, str]:
        blob = self._bucket().blob(self._root + check_key(key))
        try:
            data = blob.download_as_bytes(retry=None, timeout=self.timeouts)
        except self._calls() as e:
            raise self._error(e, key) from e
        # the download response carries the generation it served
        return data, str(blob.generation)

    def put(self, key: str, data: bytes, *, if_none_match: bool = False,
            if_match: str | None = None) -> str:
        generation: int | None = None
        if if_none_match:
            generation = 0
        elif if_match is not None:
            if not if_match.isdigit():
                raise PreconditionFailed(f"{self.name}{key}: {if_match!r} is no generation of it")
            generation = int(if_match)
        blob = self._bucket().blob(self._root + check_key(key))
        try:
            blob.upload_from_string(bytes(data), content_type="application/octet-stream",
                                    if_generation_match=generation, retry=None, timeout=self.timeouts)
        except self._calls() as e:
            err = self._error(e, key)
            if if_match is not None and isinstance(err, ObjectNotFound):
                raise PreconditionFailed(f"{self.name}{key}: missing (if_generation_match)") from e
            raise err from e
        return str(blob.generation)

    def _timeout(self, moving: int) -> tuple[float, float]:
        return self.connect_timeout_s, transfer_timeout_s(moving, self.timeout_s, self.min_rate)

    def put_file(self, key: str, path: Path, *, if_none_match: bool = False, sha256: str | None = None) -> str:
        path = Path(path)
        size = path.stat().st_size
        blob = self._bucket().blob(self._root + check_key(key))
        if size > self.multipart_threshold:
            blob.chunk_size = self.part_size  # resumable
            # GCS applies if_generation_match to a resumable upload too;
            # fake-gcs-server does not. Checking first keeps create-only there
            # up to a race, which is harmless for the keys large files go to:
            # content-addressed blobs, where both racers write the same bytes.
            if if_none_match and self.head(key) is not None:
                raise PreconditionFailed(f"{self.name}{key}: precondition failed")
        with open(path, "rb") as f:
            source = HashingReader(f, size, sha256)
            try:
                blob.upload_from_file(source, size=size, content_type="application/octet-stream",
                                      if_generation_match=0 if if_none_match else None, retry=None,
                                      timeout=self._timeout(min(size, self.part_size)))
            except self._calls() as e:
                raise self._error(e, key) from e
            except Exception:
                if source.mismatch:
                    raise self._source_changed(key, path) from None
                raise
        return str(blob.generation)

    def get_file(self, key: str, dest: Path, *, size_hint: int | None = None, fsync: bool = False) -> Download:
        blob = self._bucket().blob(self._root + check_key(key))
        with open_dest(dest) as out:
            writer = HashingWriter(out)
            try:
                # checksum=None: the caller checks the sha256 we compute anyway
                blob.download_to_file(writer, retry=None, checksum=None, timeout=self._timeout(size_hint or 0))
            except self._calls() as e:
                raise self._error(e, key) from e
            finish_dest(out, fsync)
        # the download response carries the generation it served
        return writer.result(str(blob.generation))

    def head(self, key: str) -> ObjectMeta | None:
        try:
            blob = self._bucket().get_blob(self._root + check_key(key), retry=None, timeout=self.timeouts)
        except self._calls() as e:
            raise self._error(e, key) from e
        return None if blob is None else self._meta(blob)

    def _meta(self, blob: Any) -> ObjectMeta:
        return ObjectMeta(blob.name[len(self._root):], blob.size, str(blob.generation), blob.updated.timestamp())

    def list(self, prefix: str = "", start_after: str | None = None) -> Iterator[ObjectMeta]:
        bucket = self._bucket()
        # GCS's startOffset is inclusive; start_after is not.
        offset = self._root + start_after if start_after is not None else None
        try:
            for blob in bucket.client.list_blobs(bucket, prefix=self._root + prefix, start_offset=offset,
                                                 retry=None, timeout=self.timeouts):
                meta = self._meta(blob)
                if start_after is None or meta.key > start_after:
                    yield meta
        except self._calls() as e:
            raise self._error(e, prefix) from e

    def delete(self, key: str, *, if_match: str | None = None) -> None:
        blob = self._bucket().blob(self._root + check_key(key))
        generation = None
        if if_match is not None:
            # fake-gcs-server ignores if_generation_match on delete; GCS
            # enforces it. Compare first so that the emulator, too, refuses a
            # stale delete unless it races with a write.
            meta = self.head(key)
            if meta is None or meta.etag != if_match:
                raise PreconditionFailed(f"{self.name}{key} changed or missing (generation mismatch)")
            generation = int(if_match)
        try:
            blob.delete(if_generation_match=generation, retry=None, timeout=self.timeouts)
        except self._calls() as e:
            err = self._error(e, key)
            if isinstance(err, ObjectNotFound):
                if if_match is None:
                    return
                raise PreconditionFailed(f"{self.name}{key} missing (generation mismatch)") from e
            raise err from e
