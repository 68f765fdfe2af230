"""One drawn error tree: every exception class under src/swamp is defined in
swamp/errors.py (or is a signal listed below, with why it stays where it is),
and the tree drawn in errors.py's docstring names each of them under its
real base, so the drawing cannot go stale."""

from __future__ import annotations

import ast
import builtins
import re
from pathlib import Path

import swamp.errors

SRC = Path(swamp.errors.__file__).resolve().parent

#: exceptions that never reach a user: raised and caught inside one module
#: (or one package), each turned into something else before it leaves.
#: "path:Class" -> why it stays beside its code
SIGNALS = {
    "cli/fast_help.py:_NotPlain": "a help text the fast renderer does not lay out: click prints it",
    "util/yaml_light.py:_NotPlain": "a document outside the light YAML writer's form: ruamel.yaml writes it",
    "datastore/objectstore/local.py:_Conflict": "a generation another writer created first: PreconditionFailed",
    "datastore/objectstore/local.py:_Mismatch": "a copied file that does not hash as said: SourceChanged",
    "datastore/objectstore/streams.py:Mismatch": "bytes read that differ from the hash given: SourceChanged",
    "datastore/sync/records.py:Contended": "a commit record that lost every race: retried, then reported",
    "datastore/sync/localtree.py:BlockedPath": "a directory where a file goes: recorded as a conflict by the sync engine",
    "datastore/sync/merge.py:MergeConflict": "keys changed on both sides: recorded as a conflict",
    "datastore/sync/merge.py:NotMergeable": "a side that is not a map: the merge keeps both copies",
    "datastore/sync/pool.py:CancelledError": "the sync pool's future cancelled before it ran: never raised to a caller",
    "datastore/sync/applying.py:_LocalChanged": "a file changed on disk during a pull: kept, reported as a conflict",
    "expr/template.py:TemplateSyntaxError": "a malformed template: the expression API raises ExpressionError for it",
    "vault/aws.py:_Missing": "a secret AWS does not have: the vault answers NotFoundError",
    "workflows/validation.py:_MissingModel": "a step naming an absent model: validation reports it as a finding",
}

_BUILTIN_EXCEPTIONS = {name for name, value in vars(builtins).items()
                       if isinstance(value, type) and issubclass(value, BaseException)}


def _exception_classes() -> dict[str, list[str]]:
    """Every class under src/swamp whose base is an exception, by name, with
    the files defining it ("path:Class"). Bases are followed by name across
    files, so a subclass of a swamp error is found wherever it is."""
    defs: list[tuple[str, str, list[str]]] = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                bases = [ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases]
                defs.append((rel, node.name, bases))
    known = set(_BUILTIN_EXCEPTIONS)
    found: dict[str, list[str]] = {}
    grew = True
    while grew:
        grew = False
        for rel, name, bases in defs:
            where = f"{rel}:{name}"
            if any(b in known for b in bases) and where not in found.get(name, []):
                found.setdefault(name, []).append(where)
                known.add(name)
                grew = True
    return found


def _drawn_tree() -> dict[str, str]:
    """The docstring's drawing as {class: drawn parent}: a name's parent is
    the nearest line above it indented less."""
    lines = swamp.errors.__doc__.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "Exception")
    stack: list[tuple[int, str]] = []
    parents: dict[str, str] = {}
    for line in lines[start:]:
        if not line.strip():
            break
        indent = len(line) - len(line.lstrip())
        name = re.match(r"\s*(\w+)", line).group(1)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if stack:
            parents[name] = stack[-1][1]
        stack.append((indent, name))
    return parents


def test_every_exception_class_is_in_errors_py_or_a_listed_signal():
    elsewhere = sorted(where for places in _exception_classes().values() for where in places
                       if not where.startswith("errors.py:") and where not in SIGNALS)
    assert not elsewhere, (
        "define these in src/swamp/errors.py (and draw them in its tree), or list them in "
        f"SIGNALS with why they never reach a user: {elsewhere}")


def test_every_listed_signal_still_exists_where_it_is_listed():
    found = {where for places in _exception_classes().values() for where in places}
    assert sorted(set(SIGNALS) - found) == []


def test_the_drawing_names_every_error_class_under_its_real_base():
    defined = {name: value for name, value in vars(swamp.errors).items()
               if isinstance(value, type) and issubclass(value, BaseException)
               and value.__module__ == "swamp.errors"}
    drawn = _drawn_tree()
    assert sorted(set(defined) - set(drawn)) == [], "classes errors.py defines but does not draw"
    assert sorted(set(drawn) - set(defined)) == [], "classes drawn that errors.py does not define"
    wrong = {name: (drawn[name], cls.__bases__[0].__name__) for name, cls in defined.items()
             if drawn[name] != cls.__bases__[0].__name__}
    assert wrong == {}, "drawn under another parent than the class's base: {name: (drawn, real)}"


def test_error_names_are_unique_across_the_tree():
    # one name, one class: a second class spelled the same would make
    # `except X` catch one and miss the other
    twice = {name: places for name, places in _exception_classes().items() if len(places) > 1}
    assert set(twice) <= {"_NotPlain"}, twice


def test_an_error_a_server_sends_keeps_its_code_and_exit_code():
    # RemoteError moved here from cli/remote.py: the codes that exit other
    # than 1 still do
    usage = swamp.errors.RemoteError({"error": "bad flag", "code": "usage", "hint": "see --help"})
    busy = swamp.errors.RemoteError({"error": "busy", "code": "lock_timeout"})
    other = swamp.errors.RemoteError({"error": "gone", "code": "not_found"})
    assert (usage.exit_code, busy.exit_code, other.exit_code) == (2, 75, 1)
    assert usage.to_json() == {"error": "bad flag", "code": "usage", "hint": "see --help"}


def test_the_authoring_api_still_exports_check_failed():
    from swamp import CheckFailed

    assert CheckFailed is swamp.errors.CheckFailed
    assert issubclass(CheckFailed, swamp.errors.SwampError)
