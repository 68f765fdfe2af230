"""A step's declared environment (issue 23, item 6): a command gets a safe
base plus what its definition asks for, never the environment swamp itself
was started with; the process's own secret-looking variables are masked
wherever they show up anyway. (serve's side: tests/serve/test_step_secrets.py.)"""

from __future__ import annotations

import pytest

from swamp.errors import ValidationError
from swamp.models import step_environment
from swamp.vault.process_secrets import looks_secret
from tests.helpers import cli, init_repo, write_shell, write_type

CLI_ENV = {"AWS_SECRET_ACCESS_KEY": "aws-secret-of-the-cli-user", "GITHUB_TOKEN": "ghp-cli-user-token-123",
           "DEPLOY_REGION": "eu-west-1", "LC_TIME": "C"}


def test_the_base_is_a_short_list_and_inherit_adds_names_that_are_set():
    environ = {"PATH": "/bin", "HOME": "/h", "LC_ALL": "C", "AWS_SECRET_ACCESS_KEY": "x", "SWAMP_TOKEN": "t",
               "REGION": "eu"}
    assert step_environment.base(environ) == {"PATH": "/bin", "HOME": "/h", "LC_ALL": "C"}
    assert step_environment.for_step(["REGION", "UNSET"], environ) == {"PATH": "/bin", "HOME": "/h",
                                                                       "LC_ALL": "C", "REGION": "eu"}
    with pytest.raises(ValidationError, match="not an environment variable name"):
        step_environment.for_step(["A=B"], environ)


@pytest.mark.parametrize("name, value, secret", [
    ("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG", True),
    ("SWAMP_WEBHOOK_GH_SECRET", "whsec-0123456789", True),
    ("GITHUB_TOKEN", "ghp_abcdefgh", True),
    ("DB_PASSWORD", "correct horse", True),
    ("GPG_KEY", "0123456789ABCDEF", True),
    ("DB_PASS", "hunter22", True),
    ("SSH_AUTH_SOCK", "/tmp/ssh-abc/agent.1", False),  # where a credential is, not one
    ("GIT_AUTHOR_NAME", "Jane Doe-Smith", False),
    ("SWAMP_REPO_DIR", "/home/me/repo", False),
    ("API_TOKEN", "true", False),  # too short to be a secret: a setting
    ("PATH", "/usr/bin:/bin", False),
])
def test_which_variables_of_swamps_own_environment_count_as_secrets(name, value, secret):
    assert looks_secret(name, value) is secret


def test_a_shell_step_run_from_the_cli_does_not_get_the_cli_users_environment(tmp_path):
    repo = init_repo(tmp_path / "repo")
    write_shell(repo, "printenv", """
        type: command/shell
        name: printenv
        globalArguments:
          run: 'env; echo "token=$GITHUB_TOKEN"'
          inheritEnv: [DEPLOY_REGION]
    """)
    r = cli(repo, "model", "method", "run", "printenv", "execute", env=CLI_ENV)
    assert r.code == 0, r
    out = cli(repo, "data", "get", "printenv", "result").data["content"]["stdout"]
    names = {line.split("=", 1)[0] for line in out.splitlines()}
    assert {"PATH", "HOME", "LC_TIME", "DEPLOY_REGION"} <= names
    assert not names & {"AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN"}
    assert "token=\n" in out + "\n" and "DEPLOY_REGION=eu-west-1" in out


def test_a_variable_the_definition_passes_through_is_masked_in_every_output(tmp_path):
    repo = init_repo(tmp_path / "repo")
    write_shell(repo, "deploy", """
        type: command/shell
        name: deploy
        globalArguments:
          run: 'echo "using $GITHUB_TOKEN"; echo "$GITHUB_TOKEN" >&2; exit 3'
          inheritEnv: [GITHUB_TOKEN]
    """)
    r = cli(repo, "model", "method", "run", "deploy", "execute", env=CLI_ENV)
    assert r.code != 0
    log = cli(repo, "data", "get", "deploy", "log").data["content"]
    assert log == "using ***\n***\n"
    assert CLI_ENV["GITHUB_TOKEN"] not in r.stdout + r.stderr


def test_an_input_cannot_widen_what_a_command_inherits(tmp_path):
    repo = init_repo(tmp_path / "repo")
    write_shell(repo, "hello", "type: command/shell\nname: hello\nglobalArguments:\n  run: env\n")
    r = cli(repo, "model", "method", "run", "hello", "execute", "--input", 'inheritEnv=["AWS_SECRET_ACCESS_KEY"]',
            env=CLI_ENV)
    assert r.code != 0 and "definition only" in r.stdout + r.stderr, r
    assert cli(repo, "data", "get", "hello", "result").code != 0  # nothing ran


SPAWNING_TYPE = '''
    import subprocess

    from pydantic import BaseModel
    from swamp import Context, ModelType


    class NoArgs(BaseModel):
        pass


    t = ModelType("acme/spawn", version="2026.01.01.1", global_arguments=NoArgs, description="runs env")
    t.resource("seen")


    @t.method(description="Run env as a method's own code would, with and without env=")
    def look(args, ctx: Context) -> None:
        plain = subprocess.run(["env"], capture_output=True, text=True).stdout
        chosen = subprocess.run(["env"], capture_output=True, text=True,
                                env={**ctx.environment, "MINE": "1"}).stdout
        ctx.write_resource("seen", "seen", {"plain": sorted(l.split("=")[0] for l in plain.splitlines()),
                                            "chosen": sorted(l.split("=")[0] for l in chosen.splitlines())})
'''


def test_a_process_a_method_starts_gets_the_base_unless_it_chooses_an_environment(tmp_path):
    repo = init_repo(tmp_path / "repo")
    write_type(repo, "spawn.py", SPAWNING_TYPE)
    assert cli(repo, "model", "create", "acme/spawn", "s").code == 0
    r = cli(repo, "model", "method", "run", "s", "look", env=CLI_ENV)
    assert r.code == 0, r
    seen = cli(repo, "data", "get", "s", "seen").data["content"]
    for names in (seen["plain"], seen["chosen"]):
        assert "PATH" in names and "AWS_SECRET_ACCESS_KEY" not in names and "GITHUB_TOKEN" not in names
    assert "MINE" in seen["chosen"] and "MINE" not in seen["plain"]
