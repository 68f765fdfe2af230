"""The terminal's live activity line (issue 23, item 5): a command that
prints a multi-line vault secret line by line, slowly enough for each line
to be drawn, shows `***` for each, never a line of the key."""

from __future__ import annotations

from tests.helpers import init_repo, ok, on_a_terminal, write_shell

PEM = ("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n"
       "q3Jx2cWq0Zl7kGZK9hS1dPp0YvQ4Z2ZxXn0b5yVqZ8mL4bB1wDd2\n-----END PRIVATE KEY-----")


def test_the_activity_line_shows_no_line_of_a_multi_line_secret(tmp_path):
    repo = init_repo(tmp_path / "repo")
    ok(repo, "vault", "create", "local_encryption", "prod")
    ok(repo, "vault", "put", "prod", "tls.key", input=PEM + "\n")
    # Each line stays the last one logged for a while: the activity line (drawn after a second) shows it.
    write_shell(repo, "slow", """
        type: command/shell
        name: slow
        globalArguments:
          run: 'sleep 1.2; printf "%s\\n" "$KEY" | while IFS= read -r l; do echo "$l"; sleep 0.3; done'
          env:
            KEY: "${{ vault.get('prod', 'tls.key') }}"
    """)
    shown = on_a_terminal(["model", "method", "run", "slow", "execute"], cwd=repo)
    assert "slow.execute" in shown and "***" in shown, shown
    for line in PEM.splitlines():
        assert line not in shown, shown
