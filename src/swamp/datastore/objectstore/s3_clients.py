"""The obstore clients one S3 store talks through, and their timeouts.

Three limits bound every request (docs/sync.md "Timeouts"):

* connecting: ``connect_timeout_s``;
* the answer: ``response_timeout_s`` from the request until the first byte
  of the answer, and between two reads of its body, so a server that
  accepts the connection and then says nothing fails in a few seconds
  instead of the whole-request limit;
* the whole request: ``timeout_s``, grown with the bytes moved
  (streams.transfer_timeout_s), so a large transfer on a slow link is not cut.

reqwest's read timeout also runs while a request body is being sent, so a
request that uploads gets an answer limit that includes the time its body
may take at ``min_rate``. Limits are rounded up to a power of two seconds,
so a few clients (and their connection pools) serve every size.

Credentials come from where AWS tools look: the AWS_* environment variables
(read by obstore itself), else the shared credentials file
(AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials, profile AWS_PROFILE or
"default"). They stay in memory; nothing is written anywhere.

obstore's own retries are off: retry.py is the one retry layer.
"""

from __future__ import annotations

import math
import os
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

from .base import ObjectStoreError
from .streams import MIN_RATE, transfer_timeout_s

#: a request body up to this size is sent by the ordinary client (it takes
#: well under a second even at ``min_rate``)
SMALL_BODY = 64 * 1024


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


def _power_of_two(seconds: float) -> int:
    return 1 << max(0, math.ceil(math.log2(max(1.0, seconds))))


class S3Clients:
    def __init__(self, bucket: str, prefix: str, name: str, *, endpoint_url: str | None, region: str | None,
                 allow_http: bool | None, timeout_s: float, connect_timeout_s: float,
                 response_timeout_s: float, min_rate: int = MIN_RATE) -> None:
        self.bucket = bucket
        self.prefix = prefix
        self.timeout_s = timeout_s
        self.connect_timeout_s = connect_timeout_s
        #: a plain request's whole limit still applies when it is shorter
        self.response_timeout_s = response_timeout_s
        self.min_rate = min_rate
        config: dict[str, Any] = dict(shared_file_credentials())
        if endpoint_url:
            config["endpoint"] = endpoint_url
            config["virtual_hosted_style_request"] = False  # S3-compatible servers want path style
        if region:
            config["region"] = region
        if allow_http is None:
            allow_http = bool(endpoint_url and endpoint_url.startswith("http://"))
        self.config = config
        self.allow_http = allow_http
        self._sized: dict[tuple[float, float], Any] = {}  # (whole, answer) limits -> client
        self._sized_lock = threading.Lock()
        try:
            self.plain = self._client(timeout_s, response_timeout_s)
        except Exception as e:  # obstore checks the configuration here (GenericError)
            if "SecretAccessKey" in str(e) or "AccessKeyId" in str(e):
                raise ObjectStoreError(
                    f"incomplete AWS credentials for {name}: an access key without its secret key "
                    "(or the other way round)", code="no_credentials",
                    hint="export both AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY") from None
            raise ObjectStoreError(f"{name}: {str(e).splitlines()[0]}") from None

    def _client(self, timeout_s: float, answer_s: float) -> Any:
        from obstore.store import S3Store

        return S3Store(
            self.bucket,
            prefix=self.prefix or None,
            config=self.config,
            client_options={"allow_http": self.allow_http, "timeout": timedelta(seconds=timeout_s),
                            "read_timeout": timedelta(seconds=answer_s),
                            "connect_timeout": timedelta(seconds=self.connect_timeout_s)},
            retry_config={"max_retries": 0, "retry_timeout": timedelta(seconds=timeout_s)},
        )

    def _cached(self, whole: float, answer: float) -> Any:
        with self._sized_lock:
            client = self._sized.get((whole, answer))
            if client is None:
                client = self._sized[(whole, answer)] = self._client(whole, answer)
            return client

    def receiving(self, size: int) -> Any:
        """A client for a request whose answer carries ``size`` bytes: the
        answer must start (and keep coming) within the answer limit."""
        if size / self.min_rate <= self.timeout_s:
            return self.plain
        return self._cached(_power_of_two(transfer_timeout_s(size, self.timeout_s, self.min_rate)),
                            self.response_timeout_s)

    def sending(self, size: int) -> Any:
        """A client for a request that uploads ``size`` bytes: its answer
        may start only once the body is sent."""
        if size <= SMALL_BODY:
            return self.plain
        whole = _power_of_two(transfer_timeout_s(size, self.timeout_s, self.min_rate))
        return self._cached(whole, _power_of_two(transfer_timeout_s(size, self.response_timeout_s, self.min_rate)))
