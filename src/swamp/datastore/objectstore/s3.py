"""S3 and S3-compatible servers (AWS, SeaweedFS, ...) through obstore.

The clients and their timeouts (connect, answer, whole request) are in
s3_clients.py, what a failure means in s3_errors.py, the two requests
obstore cannot make in s3_signed.py.

Large files (put_file / get_file) stream. Above ``multipart_threshold`` an
upload is multipart (parts of ``part_size``, a few in flight), which is also
what lets an object exceed S3's 5 GiB limit on a single PUT. obstore's
timeout covers a whole request, body included, so each transfer runs on a
client whose timeouts fit its size (S3Clients.sending / receiving). obstore
aborts a multipart upload that fails, but a process killed mid-upload leaves
its parts stored (and billed) until a bucket lifecycle rule
(AbortIncompleteMultipartUpload) removes them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator

from .base import (
    ObjectMeta,
    ObjectNotFound,
    ObjectStore,
    ObjectStoreError,
    PreconditionFailed,
    check_key,
)
from .s3_clients import S3Clients, shared_file_credentials  # noqa: F401  (re-exported)
from .streams import (
    MIN_RATE,
    Download,
    HashingReader,
    HashingWriter,
    finish_dest,
    open_dest,
)

MIB = 1 << 20
#: S3 allows at most 10,000 parts; parts grow past ``part_size`` to fit
MAX_PARTS = 10_000


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
        response_timeout_s: float = 5.0,
        multipart_threshold: int = 16 * MIB,
        part_size: int = 8 * MIB,
        part_concurrency: int = 4,
        min_rate: int = MIN_RATE,
    ) -> None:
        self.prefix = prefix.strip("/")
        #: a file larger than this is uploaded in parts (AWS: parts >= 5 MiB)
        self.multipart_threshold = multipart_threshold
        self.part_size = max(5 * MIB, part_size)
        self.part_concurrency = max(1, part_concurrency)
        self._bucket = bucket
        self.name = f"s3://{bucket}/{self.prefix + '/' if self.prefix else ''}"
        self.clients = S3Clients(bucket, self.prefix, self.name, endpoint_url=endpoint_url, region=region,
                                 allow_http=allow_http, timeout_s=timeout_s, connect_timeout_s=connect_timeout_s,
                                 response_timeout_s=response_timeout_s, min_rate=min_rate)
        self._store = self.clients.plain

    def _part_size(self, size: int) -> int:
        return max(self.part_size, -(-size // MAX_PARTS))

    def _error(self, e: Exception, key: str) -> ObjectStoreError:
        from .s3_errors import s3_error

        return s3_error(e, self.name, key, self.clients)

    # ------------------------------------------------------------ the bucket
    @property
    def bucket_name(self) -> str:
        return self._bucket

    @property
    def endpoint(self) -> str | None:
        return self.clients.config.get("endpoint")

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
        from .s3_signed import create_bucket

        create_bucket(self.clients, self.name)

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
            result = obstore.put(self.clients.sending(len(body)), key, body, mode=mode, use_multipart=False)
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
                result = obstore.put(self.clients.sending(size), key, source, mode=mode, use_multipart=False)
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
            result = obstore.put(self.clients.sending(part * self.part_concurrency), key, source,
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
            result = obstore.get(self.clients.receiving(size_hint), key)
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
        from .s3_signed import conditional_delete

        conditional_delete(self.clients, self.name, key, if_match, self._error)
