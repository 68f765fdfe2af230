"""What `swamp serve` lets out of a step's secrets (issue 23, items 5 and 6):

- p9: a multi-line vault secret (a PEM key) a command prints whole is cut
  into lines for serve's live `log` events; no line of it is sent in clear,
  nor stored in the run's `log` data;
- p1 (env): the server's own environment (a webhook's secret, AWS keys)
  never reaches a step: a plain `env` publishes none of it as data; a
  variable the definition passes through on purpose (`inheritEnv`) is
  masked wherever the step prints it.
"""

from __future__ import annotations

from tests.helpers import cli, init_repo, ok, write_shell, write_workflow
from tests.serve.server import Serve

PEM = ("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n"
       "q3Jx2cWq0Zl7kGZK9hS1dPp0YvQ4Z2ZxXn0b5yVqZ8mL4bB1wDd2\n-----END PRIVATE KEY-----")
KEY_LINES = PEM.splitlines()[1:3]
WEBHOOK_SECRET = "whsec-0123456789abcdef-XYZ"
AWS_SECRET = "aws-secret-for-the-s3-datastore"
SERVER_ENV = {"SWAMP_WEBHOOK_GH_SECRET": WEBHOOK_SECRET, "AWS_SECRET_ACCESS_KEY": AWS_SECRET,
              "DEPLOY_API_TOKEN": "deploy-token-0987654321"}


def _stream_text(server: Serve, path: str) -> tuple[list[str], str]:
    """The `log` lines of a streamed run, and everything the stream carried."""
    seen = list(server.events(path, {}))
    return [d["line"] for e, d in seen if e == "log"], repr(seen)


def test_serves_live_events_and_stored_log_hold_no_line_of_a_multi_line_secret(tmp_path):
    repo = init_repo(tmp_path / "repo")
    ok(repo, "vault", "create", "local_encryption", "prod")
    ok(repo, "vault", "put", "prod", "tls.key", input=PEM + "\n")
    write_shell(repo, "show", """
        type: command/shell
        name: show
        globalArguments:
          run: 'echo "$KEY"; printf "%s" "$KEY" | head -c 40 >&2'
          env:
            KEY: "${{ vault.get('prod', 'tls.key') }}"
    """)
    write_workflow(repo, "show", """
        jobs:
          - name: main
            steps:
              - name: say
                task: {type: model_method, modelIdOrName: show, methodName: execute}
    """)
    server = Serve(repo)
    try:
        for path in ("/api/v1/models/show/methods/execute/run", "/api/v1/workflows/show/run"):
            lines, everything = _stream_text(server, path)
            assert lines.count("***") >= 4, lines  # the command's lines did stream, masked
            for line in KEY_LINES:
                assert line not in everything, path
        stored = server.get("/api/v1/data/show/log").doc["content"]
        assert not any(line in stored for line in KEY_LINES), stored
    finally:
        server.stop()
    logs = cli(repo, "workflow", "logs", "show").stdout
    assert not any(line in logs for line in KEY_LINES)


def test_a_step_gets_none_of_the_servers_own_secrets_and_a_passed_through_one_is_masked(tmp_path):
    repo = init_repo(tmp_path / "repo")
    write_shell(repo, "printenv", """
        type: command/shell
        name: printenv
        globalArguments:
          run: env
          env:
            GREETING: hello
    """)
    write_shell(repo, "deploy", """
        type: command/shell
        name: deploy
        globalArguments:
          run: 'echo "key: $AWS_SECRET_ACCESS_KEY"'
          inheritEnv: [AWS_SECRET_ACCESS_KEY]
    """)
    write_workflow(repo, "echo", """
        jobs:
          - name: main
            steps:
              - name: say
                task: {type: model_method, modelIdOrName: printenv, methodName: execute}
    """)
    server = Serve(repo, "--webhook", "gh=echo", env=SERVER_ENV)
    try:
        assert server.run_method("printenv", "execute").status == 200
        result = server.get("/api/v1/data/printenv/result").doc["content"]
        names = {line.split("=", 1)[0] for line in result["stdout"].splitlines()}
        assert "GREETING" in names and "PATH" in names  # what it declared, and the base
        for name in SERVER_ENV:
            assert name not in names, names
        log = server.get("/api/v1/data/printenv/log").doc["content"]
        lines, everything = _stream_text(server, "/api/v1/workflows/echo/run")
        for secret in SERVER_ENV.values():
            assert secret not in result["stdout"] and secret not in log and secret not in everything
        # A variable the definition passes through on purpose reaches the command, masked in its output.
        assert server.run_method("deploy", "execute").status == 200
        deployed = server.get("/api/v1/data/deploy/result").doc["content"]
        assert deployed["stdout"] == "key: ***"
        # A caller cannot widen what is passed through.
        wider = server.run_method("printenv", "execute", {"inheritEnv": ["SWAMP_WEBHOOK_GH_SECRET"]})
        assert wider.doc["status"] == "failed" and "definition only" in wider.doc["error"], wider
        assert WEBHOOK_SECRET not in repr(wider.doc)
    finally:
        server.stop()
