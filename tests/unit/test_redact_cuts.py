"""A secret is masked however the output holding it was cut (issue 23,
item 5): line by line, chunk by chunk, inside JSON. The random cases are
tests/property/test_redaction_cuts.py; these are the cases a user meets."""

from __future__ import annotations

import json

import pytest

from tests.helpers import cli, init_repo, write_type
from swamp.vault import redact

PEM = ("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n"
       "q3Jx2cWq0Zl7kGZK9hS1dPp0YvQ4Z2ZxXn0b5yVqZ8mL4bB1wDd2\n-----END PRIVATE KEY-----")


@pytest.fixture(autouse=True)
def _clean_redactor():
    redact.clear()
    yield
    redact.clear()


def test_every_line_of_a_multi_line_secret_is_masked_on_its_own():
    redact.register_secret(PEM)
    for line in PEM.splitlines():
        assert redact.redact_text(f"> {line}\r") == "> ***\r"
    assert redact.redact_text(f"key:\n{PEM}\n") == "key:\n***\n"


def test_a_short_line_of_a_multi_line_secret_is_not_masked_alone_but_the_whole_is():
    redact.register_secret("user: x\npassword-of-some-length\n}")
    assert redact.redact_text("}") == "}"  # shorter than MIN_LINE_LEN: structure, not key material
    assert redact.redact_text("user: x") == "user: x"
    assert redact.redact_text("the password-of-some-length") == "the ***"
    assert redact.redact_text("user: x\npassword-of-some-length\n}") == "***"


def test_a_line_of_a_secret_inside_a_json_event_is_masked():
    redact.register_secret('first line "quoted"\\x\nsecond line of it')
    event = json.dumps({"line": 'first line "quoted"\\x'})
    assert redact.redact_text(event) == '{"line": "***"}'


def test_overlapping_secrets_leave_nothing_of_either_in_clear():
    redact.register_secret("abcdefgh")
    redact.register_secret("efghijkl")
    assert redact.redact_text("..abcdefghijkl..") == "..***.."


def test_a_secret_split_across_chunks_of_a_stream_is_masked():
    redact.register_secret("hunter2-hunter2")
    r = redact.StreamRedactor()
    out = r.feed(b"token: hunt") + r.feed(b"er2-hun") + r.feed(b"ter2 and more") + r.flush()
    assert out == b"token: *** and more"


def test_a_secret_of_many_byte_characters_split_anywhere_in_a_stream_is_masked():
    redact.register_secret("ab" * 10)
    redact.register_secret("ééééé")  # fewer characters, more bytes: the longest secret in bytes
    secret = "ééééé".encode()
    for cut in range(1, len(secret)):
        r = redact.StreamRedactor()
        assert r.feed(b"x" * 30 + secret[:cut]) + r.feed(secret[cut:] + b"y") + r.flush() == b"x" * 30 + b"***y"


def test_a_stream_holds_back_no_more_than_it_must():
    redact.register_secret("hunter2-hunter2")
    r = redact.StreamRedactor()
    # what cannot begin a secret goes out at once; only the last len-1 bytes wait
    assert r.feed(b"x" * 100) == b"x" * (100 - len("hunter2-hunter2") + 1)
    assert r.flush() == b"x" * (len("hunter2-hunter2") - 1)


CHUNKED_TYPE = '''
    from pydantic import BaseModel
    from swamp import Context, ModelType


    class Args(BaseModel):
        key: str


    t = ModelType("acme/chunked", version="2026.01.01.1", global_arguments=Args, description="writes in pieces")
    t.file("out", content_type="text/plain")


    @t.method(description="Write the key in small pieces, as a copy loop would")
    def write(args, ctx: Context) -> None:
        text = "key follows\\n" + args.key + "\\nthe end\\n"
        with ctx.file_writer("out", "out") as w:
            for i in range(0, len(text), 7):
                w.write(text[i:i + 7])
'''


def test_a_vault_secret_written_in_pieces_to_a_file_is_masked_in_the_stored_data(tmp_path):
    repo = init_repo(tmp_path / "r")
    assert cli(repo, "vault", "create", "local_encryption", "prod").code == 0
    assert cli(repo, "vault", "put", "prod", "tls.key", input=PEM + "\n").code == 0
    write_type(repo, "chunked.py", CHUNKED_TYPE)
    (repo / "models" / "acme" / "chunked").mkdir(parents=True)
    (repo / "models" / "acme" / "chunked" / "c.yaml").write_text(
        "type: acme/chunked\nname: c\nglobalArguments:\n  key: \"${{ vault.get('prod', 'tls.key') }}\"\n")
    r = cli(repo, "model", "method", "run", "c", "write")
    assert r.code == 0, r
    content = cli(repo, "data", "get", "c", "out").data["content"]
    assert content == "key follows\n***\nthe end\n"


def test_a_failed_commands_stderr_lines_in_the_runs_log_hold_no_line_of_a_multi_line_secret(tmp_path):
    from tests.helpers import write_shell

    repo = init_repo(tmp_path / "r")
    assert cli(repo, "vault", "create", "local_encryption", "prod").code == 0
    assert cli(repo, "vault", "put", "prod", "tls.key", input=PEM + "\n").code == 0
    write_shell(repo, "fails", """
        type: command/shell
        name: fails
        globalArguments:
          run: 'echo "bad key:" >&2; echo "$KEY" >&2; exit 2'
          env:
            KEY: "${{ vault.get('prod', 'tls.key') }}"
    """)
    r = cli(repo, "model", "method", "run", "fails", "execute")
    assert r.code != 0
    assert r.data["status"] == "failed", r
    logs = cli(repo, "model", "output", "logs", r.data["id"], json=False).stdout
    assert "stderr: ***" in logs, logs  # the run's log keeps stderr's last lines: each masked
    for line in PEM.splitlines():
        assert line not in logs and line not in r.stdout + r.stderr
