"""Values are data, never templates (issue 23, item 2): only the text of
definitions and workflow files is evaluated as `${{ }}`, once. A value a
caller gives (`--input`, a workflow's inputs) or a run reads (a step's
output, passed on with `data.latest(...)`) comes out as the text it is:
`${{ env.X }}`, `${{ vault.get(...) }}` and `${{ data... }}` in it are never
evaluated. The API, webhook and form forms are tests/serve/test_values_are_data.py."""

from __future__ import annotations

import base64
import json
import subprocess

import pytest

from tests.helpers import init_repo, invoke, write_deploy_with_secret, write_shell, write_workflow

SECRET = "s3cr3t-of-the-vault"
ENV_SECRET = "env-secret-of-the-process"
#: each an expression a caller must never get evaluated
ATTACKS = [
    "${{ env.SWAMP_TEST_ENV_SECRET }}",
    "${{ vault.get('prod', 'api.token') }}",
    "${{ data.latest('deploy', 'result').content.stdout }}",
    "${{ shell.quote('x') }}",
]


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.setenv("SWAMP_TEST_ENV_SECRET", ENV_SECRET)
    r = init_repo(tmp_path / "repo")
    write_deploy_with_secret(r, SECRET, swamp=invoke)
    assert invoke(r, "model", "method", "run", "deploy", "execute").code == 0
    # open: its `run` is left to the caller
    write_shell(r, "open", "type: command/shell\nname: open\nglobalArguments: {}\n")
    # greet: a declared input that reaches the shell through env (the safe path)
    write_shell(r, "greet", """
        type: command/shell
        name: greet
        inputs:
          properties:
            who: {type: string}
          required: [who]
        globalArguments:
          run: 'printf "%s" "$WHO" | base64'
          env:
            WHO: "${{ inputs.who }}"
    """)
    return r


def stdout_of(repo, model: str) -> str:
    r = invoke(repo, "data", "get", model, "result")
    assert r.code == 0, r
    return r.data["content"]["stdout"]


def decoded(repo, model: str) -> str:
    return base64.b64decode(stdout_of(repo, model).strip()).decode()


@pytest.mark.parametrize("attack", ATTACKS)
def test_an_input_replacing_an_open_argument_is_run_as_its_text(repo, attack):
    r = invoke(repo, "model", "method", "run", "open", "execute", "--input",
               f"run=printf '%s' '{attack}'\"$X\" | base64", "--input", "env=" + json.dumps({"X": attack}))
    assert r.code == 0, r
    assert decoded(repo, "open") == attack.replace("'", "") + attack
    assert SECRET not in stdout_of(repo, "open") and ENV_SECRET not in stdout_of(repo, "open")


@pytest.mark.parametrize("attack", ATTACKS)
def test_a_declared_input_is_inserted_as_text_never_evaluated(repo, attack):
    r = invoke(repo, "model", "method", "run", "greet", "execute", "--input", f"who={attack} and more")
    assert r.code == 0, r
    assert decoded(repo, "greet") == f"{attack} and more"


@pytest.mark.parametrize("attack", ATTACKS)
def test_a_direct_type_run_takes_its_values_as_text(repo, attack):
    r = invoke(repo, "model", "method", "run", "command/shell", "execute", "direct", "--input",
               "run=printf '%s' \"$X\" | base64", "--input", "env=" + json.dumps({"X": attack}))
    assert r.code == 0, r
    assert decoded(repo, "direct") == attack


@pytest.mark.parametrize("attack", ATTACKS)
def test_a_workflow_input_is_evaluated_once_as_the_workflow_files_text(repo, attack):
    # `${{ inputs.who }}` is the workflow file's text: it is evaluated, and
    # gives the input's value, which is text and is never rendered again
    # (neither in the step's inputs nor in the method's arguments).
    write_workflow(repo, "greet", """
        inputs:
          properties:
            who: {type: string}
        jobs:
          - name: main
            steps:
              - name: say
                task:
                  type: model_method
                  modelIdOrName: greet
                  methodName: execute
                  inputs:
                    who: "hello ${{ inputs.who }}"
              - name: as-an-argument
                task:
                  type: model_method
                  modelIdOrName: open
                  methodName: execute
                  inputs:
                    run: printf '%s' "$X" | base64
                    env: {X: "hi ${{ inputs.who }}"}
    """)
    r = invoke(repo, "workflow", "run", "greet", "--input", f"who={attack}")
    assert r.code == 0, r
    assert decoded(repo, "greet") == f"hello {attack}"
    assert decoded(repo, "open") == f"hi {attack}"


def test_text_a_step_produced_is_not_evaluated_when_a_later_step_passes_it_on(repo):
    # p13: the producer stands for what a workflow reads from outside (an
    # API answer, a ticket title); the consumer only forwards its output.
    write_shell(repo, "producer", """
        type: command/shell
        name: producer
        globalArguments:
          run: "printf '%s{{ env.SWAMP_TEST_ENV_SECRET }} and %s{{ vault.get(\\"prod\\", \\"api.token\\") }}' '$' '$'"
    """)
    write_workflow(repo, "chain", """
        jobs:
          - name: main
            steps:
              - name: produce
                task: {type: model_method, modelIdOrName: producer, methodName: execute}
              - name: consume
                dependsOn: [{step: produce, condition: {type: succeeded}}]
                task:
                  type: model_method
                  modelIdOrName: open
                  methodName: execute
                  inputs:
                    run: "echo 'got: ${{ data.latest('producer', 'result').content.stdout }}' | base64"
    """)
    r = invoke(repo, "workflow", "run", "chain")
    assert r.code == 0, r
    produced = stdout_of(repo, "producer")
    assert produced == "${{ env.SWAMP_TEST_ENV_SECRET }} and ${{ vault.get(\"prod\", \"api.token\") }}"
    assert decoded(repo, "open") == f"got: {produced}\n"


def test_the_definitions_own_text_is_still_evaluated(repo):
    # what people with write wrote: the vault reference it names is resolved
    r = invoke(repo, "data", "get", "deploy", "result")
    assert r.code == 0 and r.data["content"]["exitCode"] == 0
    write_shell(repo, "own", """
        type: command/shell
        name: own
        globalArguments:
          run: "printf '%s' '${{ env.SWAMP_TEST_ENV_SECRET }}' | base64"
    """)
    assert invoke(repo, "model", "method", "run", "own", "execute").code == 0
    assert decoded(repo, "own") == ENV_SECRET


def test_a_value_is_checked_against_its_type_as_it_is(repo):
    # no longer "checked once resolved": a caller's `${{ }}` is never resolved
    r = invoke(repo, "model", "method", "run", "open", "execute", "--input", "run=true",
               "--input", "timeout=${{ 5 }}")
    assert r.code == 1, r
    assert r.error["code"] == "validation" and "timeout" in r.error["error"]


# ------------------------------------------------------- the renderer itself
def test_resolve_arguments_never_hands_a_callers_value_to_the_renderer():
    from swamp.models.arguments import resolve_arguments
    from swamp.models.definition_schema import Definition
    from swamp.models.registry import registry_for

    seen = []

    def renderer(value, variables, source, field):
        seen.append(value)
        return {k: (f"rendered({v})" if isinstance(v, str) and "${{" in v else v) for k, v in value.items()}

    shell = registry_for(None).get("command/shell")
    d = Definition(type="command/shell", typeVersion=shell.version, name="m",
                   inputs={"properties": {"who": {"type": "string"}}},
                   globalArguments={"run": "echo ${{ inputs.who }}", "env": {"A": "${{ env.HOME }}"}})
    args, used = resolve_arguments(d, shell, "execute", {"who": "${{ env.HOME }}", "timeout": 3,
                                                          "env": {"B": "${{ vault.get('v', 'k') }}"}},
                                   renderer=renderer)
    assert seen == [{"run": "echo ${{ inputs.who }}"}]  # the definition's own text, and only what the caller left it
    assert args.run == "rendered(echo ${{ inputs.who }})"
    assert args.env == {"B": "${{ vault.get('v', 'k') }}"}  # the caller's value, as given
    assert used == {"who": "${{ env.HOME }}", "timeout": 3, "env": {"B": "${{ vault.get('v', 'k') }}"}}


def test_an_expressions_result_is_never_rendered_again(repo):
    from swamp.models.expressions import Expressions

    value = Expressions(None).render("a ${{ inputs.x }} b", {"inputs": {"x": "${{ env.HOME }}"}},
                                     source="t", field="f")
    assert value == "a ${{ env.HOME }} b"


# ---------------------------------------------------------- shell.quote()
@pytest.mark.parametrize("text", ["", "plain", "it's", "$(id -u) `id` $HOME", "a\nb", "'''", "\\' \"x\""])
def test_shell_quote_makes_one_word_the_shell_reads_back_as_the_text(text):
    from swamp.models.expressions import Expressions

    word = Expressions(None).render("${{ shell.quote(inputs.x) }}", {"inputs": {"x": text}}, source="t", field="f")
    out = subprocess.run(["sh", "-c", f"printf '%s' {word}"], capture_output=True, text=True, check=True).stdout
    assert out == text


def test_model_create_takes_an_env_map_of_expressions_the_shell_safe_way(repo):
    r = invoke(repo, "model", "create", "command/shell", "safe", "--input", "message",
               "--global-arg", "run=printf '%s' \"$MESSAGE\" | base64",
               "--global-arg", 'env={"MESSAGE": "${{ inputs.message }}"}')
    assert r.code == 0, r
    from swamp.util import yamlio

    assert yamlio.load(repo / r.data["path"])["globalArguments"]["env"] == {"MESSAGE": "${{ inputs.message }}"}
    assert invoke(repo, "model", "method", "run", "safe", "execute", "--input", "message=$(id -u); `id` 'x'").code == 0
    assert decoded(repo, "safe") == "$(id -u); `id` 'x'"


def test_validate_warns_of_a_value_pasted_into_a_shell_command(repo):
    write_shell(repo, "pasted", """
        type: command/shell
        name: pasted
        inputs:
          properties: {x: {type: string}}
        globalArguments:
          run: "echo ${{ inputs.x }} ${{ shell.quote(inputs.x) }} ${{ 1 + 2 }}"
    """)
    write_workflow(repo, "pastes", """
        inputs:
          properties: {who: {type: string}}
        jobs:
          - name: main
            steps:
              - name: say
                task: {type: model_method, modelIdOrName: open, methodName: execute,
                       inputs: {run: "echo ${{ inputs.who }}"}}
              - name: safe
                task: {type: model_method, modelIdOrName: open, methodName: execute,
                       inputs: {run: 'echo "$WHO"', env: {WHO: "${{ inputs.who }}"}}}
    """)
    models = {m["name"]: m for m in invoke(repo, "model", "validate").data["models"]}
    assert models["pasted"]["valid"] is True  # a warning: the author may know the value is safe
    assert len(models["pasted"]["warnings"]) == 1
    assert models["pasted"]["warnings"][0].startswith("globalArguments.run: ${{ inputs.x }} pastes a value")
    assert models["greet"]["warnings"] == [] and models["deploy"]["warnings"] == []  # env: is the safe way
    wf = invoke(repo, "workflow", "validate", "pastes").data["workflows"][0]
    assert wf["valid"] is True
    assert [w.split(":")[0] for w in wf["warnings"]] == ["jobs[0].steps[0].task.inputs.run"]
    assert "env:" in wf["warnings"][0] and "shell.quote" in wf["warnings"][0]


@pytest.mark.parametrize("predicate", ["env.SWAMP_TEST_ENV_SECRET != ''", "vault.get('prod', 'api.token') != ''",
                                       "data.latest('deploy', 'result') != null"])
def test_a_data_query_predicate_sees_the_records_fields_only(repo, predicate):
    r = invoke(repo, "data", "query", predicate)
    assert r.code == 1 and "undeclared reference" in r.error["error"], r
    assert SECRET not in r.stdout + r.stderr and ENV_SECRET not in r.stdout + r.stderr
