"""Values are data over HTTP (issue 23, items 2-3; the attacks of
p1_expression_injection and p13): a token with `run` on a model, denied
every vault and another model's data, sends `${{ vault.get(...) }}`,
`${{ env.X }}` and `${{ data... }}` in an API body, a webhook body and the
dashboard's run form. Each comes out as the text it is; nothing is
evaluated. And `run` does not let it replace what a definition fixes
(a command/shell model's `run`), nor run a type with no model behind it."""

from __future__ import annotations

import base64
import json
import textwrap
import time

import pytest

from swamp.serve.webhooks import signed_headers
from tests.dashboard.http import Session
from tests.helpers import cli, init_repo, write_deploy_with_secret, write_shell, write_workflow
from tests.serve.server import Serve, mint_token

API = "/api/v1"
SECRET = "vault-secret-0123"
WEBHOOK_SECRET = "whsec-0123456789abcdef"
ENV_SECRET = "server-env-secret-4567"
ATTACKS = [
    "${{ vault.get('prod', 'api.token') }}",
    "${{ env.SWAMP_WEBHOOK_GH_SECRET }} ${{ env.SERVER_ONLY_SECRET }}",
    "${{ data.latest('deploy', 'result').content.stdout }}",
    "${{ model.deploy.input.globalArguments.env.TOKEN }}",
]
LEAKS = (SECRET, WEBHOOK_SECRET, ENV_SECRET, "deployed with")

GRANTS = """
grants:
  - subjects: ["token:runner"]
    actions: [run, read]
    resources: ["model:greet", "model:hello", "model:open", "data:greet/*", "data:hello/*", "data:open/*",
                "workflow:echo"]
  - subjects: ["token:runner"]
    effect: deny
    actions: [admin]
    resources: ["vault:*", "model:deploy", "data:deploy/*"]
  - subjects: ["token:author"]
    actions: [read, run, write]
    resources: ["model:*", "data:*"]
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    repo = init_repo(tmp_path_factory.mktemp("values") / "repo")
    write_deploy_with_secret(repo, SECRET)
    assert cli(repo, "model", "method", "run", "deploy", "execute").code == 0
    write_shell(repo, "hello", "type: command/shell\nname: hello\nglobalArguments: {run: 'echo hello'}\n")
    write_shell(repo, "open", "type: command/shell\nname: open\nglobalArguments: {}\n")
    write_shell(repo, "greet", """
        type: command/shell
        name: greet
        inputs:
          properties: {who: {type: string}}
          required: [who]
        globalArguments:
          run: 'printf "%s" "$WHO" | base64'
          env: {WHO: "${{ inputs.who }}"}
    """)
    write_workflow(repo, "echo", """
        inputs:
          properties: {who: {type: string}}
        jobs:
          - name: main
            steps:
              - name: say
                task:
                  type: model_method
                  modelIdOrName: open
                  methodName: execute
                  inputs:
                    run: printf '%s' "$WHO" | base64
                    env: {WHO: "hello ${{ inputs.who }}"}
    """)
    (repo / "grants").mkdir()
    (repo / "grants" / "team.yaml").write_text(textwrap.dedent(GRANTS).lstrip())
    tokens = {"runner": mint_token(repo, "runner"), "author": mint_token(repo, "author")}
    server = Serve(repo, "--auth-mode", "token", "--dashboard", "--webhook", "gh=echo",
                   env={"SWAMP_WEBHOOK_GH_SECRET": WEBHOOK_SECRET, "SERVER_ONLY_SECRET": ENV_SECRET})
    yield server, tokens
    server.stop()


def result_of(server: Serve, token: str, model: str) -> dict:
    got = server.get(f"{API}/data/{model}/result", token=token)
    assert got.status == 200, got.doc
    return got.doc["content"]


def decoded(server: Serve, token: str, model: str) -> str:
    return base64.b64decode(result_of(server, token, model)["stdout"].strip()).decode()


def no_leak(*texts: str) -> None:
    for text in texts:
        for leak in LEAKS:
            assert leak not in text


def wait_for_output(server: Serve, token: str, model: str, expected: str) -> str:
    deadline = time.monotonic() + 30
    while True:
        got = server.get(f"{API}/data/{model}/result", token=token)
        if got.status == 200:
            text = decoded(server, token, model)
            if text == expected:
                return text
        assert time.monotonic() < deadline, (got.status, got.doc)
        time.sleep(0.2)


@pytest.mark.parametrize("attack", ATTACKS)
def test_a_declared_input_in_an_api_body_is_text(served, attack):
    server, tokens = served
    ran = server.run_method("greet", "execute", {"who": attack}, token=tokens["runner"])
    assert ran.status == 200 and ran.doc["status"] == "succeeded", ran.doc
    assert decoded(server, tokens["runner"], "greet") == attack
    no_leak(json.dumps(result_of(server, tokens["runner"], "greet")))


@pytest.mark.parametrize("attack", ATTACKS)
def test_an_argument_the_definition_leaves_open_is_text(served, attack):
    server, tokens = served
    ran = server.run_method("open", "execute", {"run": "printf '%s' \"$X\" | base64", "env": {"X": attack}},
                            token=tokens["runner"])
    assert ran.status == 200 and ran.doc["status"] == "succeeded", ran.doc
    assert decoded(server, tokens["runner"], "open") == attack


@pytest.mark.parametrize("attack", ATTACKS)
def test_a_webhook_body_is_text_in_the_workflow_it_starts(served, attack):
    server, tokens = served
    body = json.dumps({"who": attack}).encode()
    sent = server.request("POST", "/hooks/gh", raw=body,
                          headers={"Content-Type": "application/json", **signed_headers(WEBHOOK_SECRET, body, webhook="gh")})
    assert sent.status == 202, sent.doc
    wait_for_output(server, tokens["runner"], "open", f"hello {attack}")
    no_leak(json.dumps(result_of(server, tokens["runner"], "open")))


@pytest.mark.parametrize("attack", ATTACKS[:2])
def test_the_dashboards_run_form_is_text(served, attack):
    server, tokens = served
    ui = Session(server)
    ui.login(tokens["runner"])
    status, page = ui.post("/ui/workflows/echo/run", {"in.who": f"{attack} from the form"},
                           csrf_from="/ui/workflows/echo")
    assert status == 200, page[:300]
    wait_for_output(server, tokens["runner"], "open", f"hello {attack} from the form")


def test_a_workflow_input_over_the_api_is_text(served):
    server, tokens = served
    attack = ATTACKS[0]
    ran = server.post(f"{API}/workflows/echo/run", {"inputs": {"who": attack}}, token=tokens["runner"])
    assert ran.status == 200 and ran.doc["status"] == "succeeded", ran.doc
    assert decoded(server, tokens["runner"], "open") == f"hello {attack}"


# ------------------------------------------------ grants mean what they say
def outputs(server: Serve, token: str, model: str) -> int:
    return len(server.get(f"{API}/outputs?model={model}", token=token).doc)


@pytest.mark.parametrize("inputs", [
    {"run": "id"},
    {"run": "printf %s ${{ vault.get('prod', 'api.token') }}"},
])
def test_run_does_not_replace_an_argument_the_definition_fixes(served, inputs):
    server, tokens = served
    before = outputs(server, tokens["author"], "hello")
    refused = server.run_method("hello", "execute", inputs, token=tokens["runner"])
    assert refused.status == 403 and refused.error["code"] == "forbidden"
    assert "run" in refused.error["error"] and "write on model:hello" in refused.error["error"]
    batch = server.post(f"{API}/models/hello/methods/execute/run", {"batch": [{}, inputs]}, token=tokens["runner"])
    assert batch.status == 403 and batch.error["code"] == "forbidden"
    assert outputs(server, tokens["author"], "hello") == before  # nothing ran
    assert server.run_method("hello", "execute", token=tokens["runner"]).status == 200  # its own `run`: fine


def test_write_on_the_model_may_replace_a_fixed_argument_and_it_is_still_text(served):
    server, tokens = served
    ran = server.run_method("hello", "execute", {"run": "printf '%s' '${{ env.SERVER_ONLY_SECRET }}'"},
                            token=tokens["author"])
    assert ran.status == 200 and ran.doc["status"] == "succeeded", ran.doc
    assert result_of(server, tokens["author"], "hello")["stdout"] == "${{ env.SERVER_ONLY_SECRET }}"


def test_a_type_with_no_model_behind_it_needs_write(served):
    server, tokens = served
    body = {"type": "command/shell", "inputs": {"run": "id"}}
    refused = server.post(f"{API}/models/newone/methods/execute/run", body, token=tokens["runner"])
    assert refused.status == 403 and refused.error["code"] == "forbidden", refused.doc
    # runner's `run` on model:open does not cover running the type directly under that name
    refused = server.post(f"{API}/models/open/methods/execute/run", body, token=tokens["runner"])
    assert refused.status == 403 and refused.error["code"] == "forbidden", refused.doc
    assert "directly" in refused.error["error"] and "write on model:open" in refused.error["error"]
    ran = server.post(f"{API}/models/newone/methods/execute/run",
                      {"type": "command/shell", "inputs": {"run": "echo '${{ env.SERVER_ONLY_SECRET }}'"}},
                      token=tokens["author"])
    assert ran.status == 200 and ran.doc["status"] == "succeeded", ran.doc
    assert result_of(server, tokens["author"], "newone")["stdout"].strip() == "${{ env.SERVER_ONLY_SECRET }}"
