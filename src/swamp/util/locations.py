"""Checking where a datastore lives, as a person typed it: an endpoint URL,
a bucket name, a key prefix and a region. Each check names what is wrong
and what a valid value looks like, before anything reaches a client
library (whose errors for these are panics and stack traces)."""

from __future__ import annotations

import re
import urllib.parse

from swamp.errors import UsageError

_BUCKET = re.compile(r"^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$")
_REGION = re.compile(r"^[a-z0-9][a-z0-9-]{0,40}[a-z0-9]$")
_PREFIX_SEGMENT = re.compile(r"^[A-Za-z0-9._=+@,-]+$")


def check_endpoint_url(value: str, option: str = "--endpoint-url") -> str:
    parsed = urllib.parse.urlsplit(value)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise UsageError(f"{option} {value!r} is not a URL with a scheme and a host",
                         hint="write it as http://HOST:PORT or https://HOST, e.g. http://127.0.0.1:8333")
    try:
        port = parsed.port
    except ValueError:
        raise UsageError(f"{option} {value!r} has an invalid port", hint="a port is a number from 1 to 65535") from None
    if not parsed.hostname or (port is not None and not 0 < port < 65536):
        raise UsageError(f"{option} {value!r} has no valid host and port",
                         hint="write it as http://HOST:PORT or https://HOST")
    if parsed.query or parsed.fragment or parsed.username or parsed.password:
        raise UsageError(f"{option} {value!r} may not carry a query, a fragment or credentials",
                         hint="credentials come from the environment or the usual config files, never the URL")
    return value.rstrip("/")


def check_bucket(value: str, option: str = "--bucket") -> str:
    if not _BUCKET.match(value) or ".." in value:
        raise UsageError(f"{option} {value!r} is not a valid bucket name",
                         hint="3 to 63 characters: lower-case letters, digits, '.', '-' and '_', "
                              "starting and ending with a letter or digit")
    return value


def check_prefix(value: str, option: str = "--prefix") -> str:
    segments = [s for s in value.strip("/").split("/") if s] if value else []
    bad = [s for s in segments if s in (".", "..") or not _PREFIX_SEGMENT.match(s)]
    if bad or "//" in value.strip("/"):
        raise UsageError(f"{option} {value!r} is not a valid key prefix",
                         hint="path segments of letters, digits and ._=+@,- separated by '/', no '.' or '..'")
    return "/".join(segments)


def check_region(value: str, option: str = "--region") -> str:
    if not _REGION.match(value):
        raise UsageError(f"{option} {value!r} is not a region name", hint="for example us-east-1 or eu-west-1")
    return value
