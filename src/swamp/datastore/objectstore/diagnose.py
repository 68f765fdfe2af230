"""Turn an object store client's failure into words a person can act on.

obstore reports a failed request as one long text: the operation and URL,
the status, the server's XML error document, and a debug dump of the Rust
error chain. People need four facts from it (which endpoint, which
operation, what the server said, what to do), and two failures that are not
the server's at all: no credentials anywhere (the client then asks the cloud
metadata service, and that request is what fails), and a server that cannot
be reached."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

_REQUEST = re.compile(r"Error performing (\w+) (\S+) in ")
_STATUS = re.compile(r"status code: (\d{3})|status: (\d{3})")
_XML_CODE = re.compile(r"<Code>([^<]+)</Code>")
_XML_MESSAGE = re.compile(r"<Message>([^<]+)</Message>")
# Paths of the instance metadata service's credential endpoints (IMDSv2
# token, role credentials, container credentials).
_METADATA_PATHS = ("/latest/api/token", "/latest/meta-data/iam", "/v2/credentials")

_CONNECT_REASONS = (
    ("ConnectionRefused", "connection refused"),
    ("Connection refused", "connection refused"),
    ("dns error", "the host name does not resolve"),
    ("failed to lookup address", "the host name does not resolve"),
    ("TimedOut", "timed out"),
    ("operation timed out", "timed out"),
    ("timed out", "timed out"),
    ("ConnectionReset", "the connection was reset"),
    ("certificate", "its TLS certificate was refused"),
)

#: S3 error codes people meet, and what to do about each
_S3_HINTS = {
    "SignatureDoesNotMatch": "the secret key does not belong to this access key: check AWS_SECRET_ACCESS_KEY "
                             "(or the profile's aws_secret_access_key)",
    "InvalidAccessKeyId": "the server does not know this access key: check AWS_ACCESS_KEY_ID (or AWS_PROFILE) "
                          "and that --endpoint-url is the server the key belongs to",
    "AccessDenied": "the credentials work but may not do this: check the bucket policy or the user's permissions",
    "ExpiredToken": "the session token has expired: refresh the credentials (AWS_SESSION_TOKEN)",
    "InvalidToken": "the session token is not valid: refresh the credentials (AWS_SESSION_TOKEN)",
    "NoSuchBucket": "create the bucket first, or check --bucket",
    "AuthorizationHeaderMalformed": "the region does not match the bucket's: check --region",
    "PermanentRedirect": "the bucket is in another region: check --region",
}


@dataclass
class Failure:
    operation: str | None = None
    url: str | None = None
    status: int | None = None
    #: the server's own error code and message (S3's XML error document)
    code: str | None = None
    message: str | None = None
    #: why no answer came at all (connection refused, timed out, ...)
    unreachable: str | None = None

    @property
    def endpoint(self) -> str | None:
        if not self.url:
            return None
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}"

    @property
    def asked_metadata_service(self) -> bool:
        """The request that failed was the client looking for credentials
        in the cloud's metadata service: none were found anywhere else."""
        return bool(self.url) and urlsplit(self.url).path.startswith(_METADATA_PATHS)


def parse(text: str) -> Failure:
    f = Failure()
    if m := _REQUEST.search(text):
        f.operation, f.url = m.group(1), m.group(2).rstrip(",")
    if m := _STATUS.search(text):
        f.status = int(m.group(1) or m.group(2))
    if m := _XML_CODE.search(text):
        f.code = m.group(1)
    if m := _XML_MESSAGE.search(text):
        f.message = m.group(1)
    if f.status is None and ("error sending request" in text or "Connect" in text or "timed out" in text):
        f.unreachable = next((why for needle, why in _CONNECT_REASONS if needle in text), "no answer")
    return f


def s3_hint(code: str | None) -> str | None:
    return _S3_HINTS.get(code or "")


def aws_credentials_text() -> tuple[str, str]:
    """(where swamp looked for AWS credentials, what to set): for the error
    when none were found."""
    profile = os.environ.get("AWS_PROFILE", "default")
    shared = os.environ.get("AWS_SHARED_CREDENTIALS_FILE", "~/.aws/credentials")
    looked = (f"looked in the environment (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), the shared "
              f"credentials file ({shared}, profile '{profile}') and the instance metadata service "
              "(not reachable from here)")
    hint = ("export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or put them under "
            f"[{profile}] in {shared} (AWS_PROFILE picks another profile)")
    return looked, hint


def gcs_credentials_text() -> tuple[str, str]:
    looked = ("looked in GOOGLE_APPLICATION_CREDENTIALS, gcloud's application default credentials "
              "(~/.config/gcloud/application_default_credentials.json) and the metadata server "
              "(not reachable from here)")
    hint = ("run 'gcloud auth application-default login', or export GOOGLE_APPLICATION_CREDENTIALS="
            "/path/to/service-account.json")
    return looked, hint
