"""A webhook's signature covers its name: with two webhooks sharing one
secret, a delivery signed for one is refused by the other (p4's replay
across webhooks), and only a timestamp of plain digits is accepted."""

from __future__ import annotations

import json
import textwrap
import time
import uuid

import pytest

from swamp.serve.webhooks import sign, signed_headers
from tests.helpers import cli, init_repo
from tests.serve.server import Serve
from tests.serve.test_webhooks import GREET, SECRET


@pytest.fixture(scope="module")
def hooks(tmp_path_factory):
    repo = init_repo(tmp_path_factory.mktemp("webhook-name") / "repo")
    assert cli(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello").code == 0
    (repo / "workflows").mkdir(exist_ok=True)
    (repo / "workflows" / "workflow-greet.yaml").write_text(textwrap.dedent(GREET).lstrip())
    server = Serve(repo, "--webhook", "gh=greet", "--webhook", "ci=greet",
                   env={"SWAMP_WEBHOOK_GH_SECRET": SECRET, "SWAMP_WEBHOOK_CI_SECRET": SECRET})
    yield server
    server.stop()


def post(server: Serve, name: str, body: bytes, headers: dict):
    return server.request("POST", f"/hooks/{name}", raw=body, headers=headers)


def test_a_delivery_signed_for_one_webhook_is_refused_by_another_with_the_same_secret(hooks):
    body = json.dumps({"who": "w"}).encode()
    headers = signed_headers(SECRET, body, webhook="gh")
    replayed = post(hooks, "ci", body, headers)
    assert (replayed.status, replayed.error["code"]) == (401, "unauthorized")
    assert "<name>" in replayed.error["hint"]  # the hint says what is signed
    assert post(hooks, "gh", body, headers).status == 202
    assert post(hooks, "ci", body, signed_headers(SECRET, body, webhook="ci")).status == 202


def test_the_old_signature_without_the_name_is_refused(hooks):
    import hashlib
    import hmac

    body = json.dumps({"who": "w"}).encode()
    ts, delivery = str(int(time.time())), str(uuid.uuid4())
    old = "sha256=" + hmac.new(SECRET.encode(), f"{ts}.{delivery}.".encode() + body, hashlib.sha256).hexdigest()
    headers = {"X-Swamp-Timestamp": ts, "X-Swamp-Delivery": delivery, "X-Swamp-Signature-256": old}
    assert post(hooks, "gh", body, headers).status == 401


@pytest.mark.parametrize("shape", ["+{}", " {}", "{}_", "0{}"])
def test_a_timestamp_that_is_not_plain_digits_is_refused_even_when_signed(hooks, shape):
    body = json.dumps({"who": "w"}).encode()
    now = str(int(time.time()))
    ts = shape.format(now) if shape != "{}_" else now[:4] + "_" + now[4:]
    if shape == "0{}":  # digits only, with a leading zero: still the same second, accepted
        headers = signed_headers(SECRET, body, webhook="gh", timestamp=None)
        headers["X-Swamp-Timestamp"] = ts
        headers["X-Swamp-Signature-256"] = sign(SECRET, body, ts, headers["X-Swamp-Delivery"], webhook="gh")
        assert post(hooks, "gh", body, headers).status == 202
        return
    delivery = str(uuid.uuid4())
    headers = {"X-Swamp-Timestamp": ts, "X-Swamp-Delivery": delivery,
               "X-Swamp-Signature-256": sign(SECRET, body, ts, delivery, webhook="gh")}
    assert post(hooks, "gh", body, headers).status == 401
