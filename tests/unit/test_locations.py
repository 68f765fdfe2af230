"""Datastore locations as a person types them: refused up front with a
usage error (exit 2) that says what a valid value looks like, never a
client library's panic or traceback."""

from __future__ import annotations

import pytest

from swamp.errors import UsageError
from swamp.util import locations
from tests.helpers import cli, init_repo


@pytest.mark.parametrize("url", ["127.0.0.1:28333", "s3.internal", "ftp://h:1", "http://", "http://h:99999",
                                 "http://h:port", "http://user:secret@h:1", "http://h:1/?x=1"])
def test_bad_endpoint_urls_are_refused(url):
    with pytest.raises(UsageError) as e:
        locations.check_endpoint_url(url)
    assert e.value.hint


@pytest.mark.parametrize("url,clean", [("http://127.0.0.1:8333", "http://127.0.0.1:8333"),
                                       ("https://s3.internal/", "https://s3.internal"),
                                       ("http://[::1]:9000", "http://[::1]:9000")])
def test_good_endpoint_urls_pass(url, clean):
    assert locations.check_endpoint_url(url) == clean


@pytest.mark.parametrize("bucket", ["ab", "Bad_Bucket", "-x-y", "a..b", "x" * 64, "with space"])
def test_bad_buckets(bucket):
    with pytest.raises(UsageError):
        locations.check_bucket(bucket)


@pytest.mark.parametrize("prefix,clean", [("", ""), ("team/a", "team/a"), ("/team/a/", "team/a")])
def test_prefixes_are_normalised(prefix, clean):
    assert locations.check_prefix(prefix) == clean


@pytest.mark.parametrize("prefix", ["../x", "a/../b", "a//b", "a b", "./a"])
def test_bad_prefixes(prefix):
    with pytest.raises(UsageError):
        locations.check_prefix(prefix)


def test_setup_with_a_url_without_scheme_is_a_usage_error_not_a_crash(tmp_path):
    repo = init_repo(tmp_path / "r")
    r = cli(repo, "datastore", "setup", "s3", "--bucket", "swamp-tests", "--endpoint-url", "127.0.0.1:28333")
    assert r.code == 2
    assert r.error["code"] == "usage" and "http://HOST:PORT" in r.error["hint"]
    human = cli(repo, "datastore", "setup", "s3", "--bucket", "swamp-tests", "--endpoint-url", "127.0.0.1:28333",
                json=False)
    assert human.code == 2 and "Traceback" not in human.stderr and "panicked" not in human.stderr
    assert "datastore" not in (repo / ".swamp.yaml").read_text()
