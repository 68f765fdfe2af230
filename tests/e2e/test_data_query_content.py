"""`data query` filters on a version's content, as workflow expressions
read it (`content`, and `attributes` when it is a map); the content is data,
never evaluated."""

from __future__ import annotations

from tests.helpers import cli, init_repo, ok, write_model, write_type, WORK_TYPE


def _repo(tmp_path):
    repo = init_repo(tmp_path / "r")
    write_type(repo, "work.py", WORK_TYPE)
    write_model(repo, "eu", "globalArguments:\n  value: eu\n")
    write_model(repo, "us", "globalArguments:\n  value: us\n")
    for m in ("eu", "us"):
        ok(repo, "model", "method", "run", m, "work")
    # a shell whose output is an expression's text (its definition has none: printf joins it)
    ok(repo, "model", "create", "command/shell", "sneaky", "--global-arg", "run=printf '$%s' \"{{ 'e' + 'u' }}\"")
    ok(repo, "model", "method", "run", "sneaky", "execute")
    return repo


def test_data_query_matches_on_content_and_never_evaluates_it(tmp_path):
    repo = _repo(tmp_path)
    assert [r["model"] for r in ok(repo, "data", "query", 'attributes.value == "eu"')] == ["eu"]
    assert [r["model"] for r in ok(repo, "data", "query", 'content.value == "us" && name == "span"')] == ["us"]
    # the text of a value is compared as text: the expression in it is not run
    assert [r["model"] for r in ok(repo, "data", "query", 'content.stdout.startsWith("${{")')] == ["sneaky"]
    assert ok(repo, "data", "query", 'content.stdout == "eu"') == []
    # a key no version has matches nothing (not an error), and rows do not carry the content
    assert ok(repo, "data", "query", "content.nope == 1") == []
    rows = ok(repo, "data", "query", "attributes.value != ''")
    assert len(rows) == 2 and all("content" not in r for r in rows)


def test_a_content_predicate_that_cannot_parse_is_a_clear_error(tmp_path):
    repo = _repo(tmp_path)
    r = cli(repo, "data", "query", "content.value ==")
    assert r.code != 0 and "Traceback" not in r.stderr
    assert "data query" in r.error["error"]
