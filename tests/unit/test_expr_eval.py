"""Evaluating and rendering: namespaces, native types, interpolation."""

import threading

import pytest

from swamp.data.provider import NAMESPACE as DATA
from swamp.errors import ExpressionError
from swamp.expr import (ExprContext, Function, Namespace, evaluate, predicate, register_namespace, render,
                        validate)

register_namespace(DATA)


class Data:
    def __init__(self):
        self.calls = []

    def latest(self, model, name):
        self.calls.append(("latest", model, name))
        return {"name": name, "version": 3, "attributes": {"id": f"{model}-{name}"}}

    def version(self, model, name, version):
        return {"name": name, "version": version}

    def list_versions(self, model, name):
        return [{"version": 1}, {"version": 2}]

    def find_by_spec(self, model, spec):
        return [{"name": "a", "specName": spec}]

    def find_by_tag(self, key, value):
        return [{"name": "t", "tags": {key: value}}]

    def query(self, predicate, select=None):
        return [{"predicate": predicate, "select": select}]


@pytest.fixture
def ctx():
    return ExprContext(
        {
            "inputs": {"count": 3, "names": ["a", "b"], "flag": True, "region": "eu"},
            "self": {"name": "web", "globalArguments": {"port": 8080}},
            "model": {"my-model": {"input": {"globalArguments": {"size": 2}}}},
            "env": {"HOME": "/home/x"},
            "run": {"id": "r1", "workflowName": "deploy"},
            "steps": {"build": {"status": "succeeded"}},
        },
        providers={"data": Data()},
    )


@pytest.mark.parametrize("expr, expected", [
    ("inputs.count + 1", 4),
    ("inputs.names", ["a", "b"]),
    ("inputs.flag", True),
    ("self.name", "web"),
    ("self.globalArguments.port", 8080),
    ('model["my-model"].input.globalArguments.size', 2),
    ("env.HOME", "/home/x"),
    ("run.workflowName", "deploy"),
    ("steps.build.status", "succeeded"),
    ("{'a': [1, 2.5, null]}", {"a": [1, 2.5, None]}),
    ("inputs.names.map(n, n.upperAscii())", ["A", "B"]),
    ("'%s-%d'.format([self.name, inputs.count])", "web-3"),
    ("inputs.?missing.orValue('dflt')", "dflt"),
    ("inputs.?region.orValue('dflt')", "eu"),
    ("self.?globalArguments.?port.orValue(0)", 8080),
    ("{?'k': inputs.?missing}", {}),
    ("has(inputs.flag) ? 'yes' : 'no'", "yes"),
    ("timestamp('2020-01-01T00:00:00Z')", "2020-01-01T00:00:00Z"),
    ("duration('90m')", "5400s"),
    ("b'hi'", "aGk="),
])
def test_evaluate_native_values(ctx, expr, expected):
    assert evaluate(expr, ctx) == expected


def test_whole_expression_keeps_native_type(ctx):
    assert render("${{ inputs.names }}", ctx) == ["a", "b"]
    assert render("${{ inputs.count }}", ctx) == 3
    assert render("${{ inputs.flag }}", ctx) is True
    assert render("${{ {'k': inputs.count} }}", ctx) == {"k": 3}


def test_embedded_expressions_print_as_json_with_strings_bare(ctx):
    out = render("n=${{ inputs.count }} f=${{ inputs.flag }} l=${{ inputs.names }} s=${{ self.name }}"
                 " z=${{ null }} m=${{ {'a': 1} }}", ctx)
    assert out == 'n=3 f=true l=["a","b"] s=web z=null m={"a":1}'


def test_render_walks_nested_values_and_leaves_the_rest(ctx):
    value = {"a": ["${{ inputs.count }}", 7, None], "b": {"c": "x-${{ self.name }}"}, "d": "plain"}
    assert render(value, ctx) == {"a": [3, 7, None], "b": {"c": "x-web"}, "d": "plain"}
    assert value["a"][0] == "${{ inputs.count }}"  # input untouched


def test_close_braces_inside_string_literal(ctx):
    assert render("${{ self.name + '}}' }}", ctx) == "web}}"
    assert render("[${{ '}}' }}]", ctx) == "[}}]"


def test_hyphenated_model_names_with_brackets(ctx):
    assert render('${{ model["my-model"].input.globalArguments.size }}', ctx) == 2


def test_data_namespace(ctx):
    assert evaluate('data.latest("vpc", "main").attributes.id', ctx) == "vpc-main"
    assert evaluate('data.version("vpc", "main", 2).version', ctx) == 2
    assert evaluate('data.version("vpc", "main", inputs.count).version', ctx) == 3
    assert evaluate('data.listVersions("vpc", "main").size()', ctx) == 2
    assert evaluate('data.findBySpec("vpc", "state")[0].specName', ctx) == "state"
    assert evaluate('data.findByTag("env", "prod")[0].tags.env', ctx) == "prod"
    assert evaluate('data.query("name == \'x\'")[0].predicate', ctx) == "name == 'x'"
    assert evaluate('data.query("true", "name")[0].select', ctx) == "name"
    assert ctx.providers["data"].calls == [("latest", "vpc", "main")]


def test_env_defaults_to_the_process_environment(monkeypatch):
    monkeypatch.setenv("SWAMP_TEST_VAR", "hello")
    assert render("${{ env.SWAMP_TEST_VAR }}", ExprContext()) == "hello"
    # A later expression in the same render that needs env still sees it.
    assert render(["${{ 1 }}", "${{ env.SWAMP_TEST_VAR }}"], ExprContext()) == [1, "hello"]


def test_unknown_root_is_a_programming_error():
    with pytest.raises(ValueError):
        ExprContext({"nope": 1})


def test_predicate():
    test = predicate("modelName == 'vpc' && version >= 2", ["modelName", "version"])
    assert test({"modelName": "vpc", "version": 2}) is True
    assert test({"modelName": "vpc", "version": 1}) is False


def test_predicate_must_be_boolean():
    with pytest.raises(ExpressionError, match="true or false"):
        predicate("'x'", ["a"])


def test_strings_without_expressions_are_returned_as_is(ctx):
    value = {"a": "x"}
    assert render(value, ctx) is value


def test_each_thread_sees_its_own_providers():
    class Named:
        def __init__(self, name):
            self.name = name

        def latest(self, model, name):
            return {"who": self.name}

    failures = []

    def work(name):
        ctx = ExprContext(providers={"data": Named(name)})
        for _ in range(300):
            got = evaluate("data.latest('m', 'n').who", ctx)
            if got != name:
                failures.append((name, got))

    threads = [threading.Thread(target=work, args=(f"t{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def _probe(provider, text):
    return f"{provider}:{text}"


PROBE = Namespace("probe", (Function("echo", ("string",), _probe, returns="string", usage="probe.echo(text)"),))


def test_a_registered_namespace_calls_the_provider_the_context_gives():
    register_namespace(PROBE)
    register_namespace(PROBE)  # again: nothing changes
    assert evaluate("probe.echo('x')", ExprContext(providers={"probe": "P"})) == "P:x"
    assert evaluate("probe.echo('x')", ExprContext()) == "None:x"
    (e,) = validate("${{ probe.echo(1) }}")
    assert e.hint == "usage: probe.echo(text)"
    # Namespaces share one receiver type, so a function of another
    # namespace compiles; the call says it does not exist here.
    with pytest.raises(ExpressionError, match=r"probe.latest\(\) does not exist"):
        evaluate("probe.latest('a', 'b')", ExprContext())


def test_an_unregistered_namespace_is_an_unknown_name():
    with pytest.raises(ExpressionError, match="undeclared reference to 'nosuch'"):
        evaluate("nosuch.f('x')", ExprContext())
