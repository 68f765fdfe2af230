"""The house's layering, enforced on the source: every module under
src/swamp is parsed (ast) and each import is an arrow: at module level,
deferred inside a function, or by name (``importlib.import_module("swamp.x")``
with a literal name). Deferred imports are fine for start-up speed; they
are dependencies all the same. An import under ``if TYPE_CHECKING:`` is a
type-only arrow: it never runs, so it takes no part in a cycle, and what
sits below app may name ``Repo`` (swamp/repo/context.py) that way, the
type of the ``repo`` it is handed; every other rule holds for it too.

Layers, top to bottom (an arrow may point within a layer or down, never up):

  0  cli, serve, workers, __main__, demo   entry points
  1  app                                   one function per use case
  2  repo                                  the repository context
  3  models, workflows, data, vault, extensions, expr, reports, access   the domain
  4  datastore                             the Datastore facade (base, cached,
                                           filesystem, open)
  5  datastore/sync                        (its holders.py: the lock-file and
                                           dead-holder rule; datastore/locks
                                           names it for the layers above)
  7  datastore/objectstore
  8  util, errors, the swamp package itself (its authoring API loads lazily)

Where repo/ sits: the Repo context is handed to nearly every domain function,
but as an argument; no domain package imports swamp.repo at run time.
repo/ itself opens the datastore with the path rules each domain package
declares (`<package>/sync_rules.py`), so it imports the domain, and sits
between app and the domain.

Besides the layers:
  - the fronts (cli, serve) import only app, errors, util, redaction
    (vault/redact.py, vault/process_secrets.py), the swamp package itself
    and themselves, never each other: every use case, and every value a use
    case takes, is reached through app/ (access administration, which both
    need, is app/access_admin.py, access_tokens.py and enforced_access.py
    over the domain package access/, and the user's logins app/logins.py).
    One narrow exception: the CLI may import the processes it becomes
    (PROCESS_ENTRY_POINTS), entry points beside it in layer 0: the worker
    and scheduler processes (swamp.workers.worker, .scheduler), because
    `swamp worker start` and `swamp worker scheduler` become that process
    (app may not import an entry point, so no use case can start one),
    handed only what app/worker_fleet.py checked and decided; and the
    server process (swamp.serve.process), which `swamp serve` becomes and
    whose options `swamp serve daemon enable` checks.
    Serve may not import a worker process, nothing else of workers/ is
    reached from a front, and nothing else of serve/ from the CLI;
  - the domain never imports app or a front;
  - below app, nothing imports click, rich, starlette or uvicorn;
  - expr imports no other domain package (the `data` and `vault`
    namespaces register themselves through swamp.expr.namespaces);
  - data does not import models (models are named to data by lookups);
  - datastore/sync imports nothing of the datastore facade (it stands
    below it: of swamp.datastore only sync, locks and objectstore);
  - no import cycle between modules.

A failure names the file, the line and the forbidden arrow."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"

# (module prefix, layer): the longest matching prefix decides.
LAYERS = {
    "swamp.cli": 0, "swamp.serve": 0, "swamp.__main__": 0, "swamp.demo": 0,
    # the worker and scheduler processes are entry points; the rest of workers/ is the Dask transport
    # of placed steps (both of its ends), which app reaches through app/placed_steps.py
    "swamp.workers.worker": 0, "swamp.workers.scheduler": 0,
    "swamp.app": 1, "swamp.workers": 1,
    "swamp.repo": 2,
    "swamp.models": 3, "swamp.workflows": 3, "swamp.data": 3, "swamp.vault": 3, "swamp.extensions": 3,
    "swamp.expr": 3, "swamp.reports": 3, "swamp.access": 3,
    "swamp.datastore": 4,
    "swamp.datastore.sync": 5,
    "swamp.datastore.objectstore": 7,
    "swamp.util": 8, "swamp.errors": 8, "swamp": 8,
}
DOMAIN = ("swamp.models", "swamp.workflows", "swamp.data", "swamp.vault", "swamp.extensions", "swamp.expr",
          "swamp.reports", "swamp.access")
FRAMEWORKS = ("click", "rich", "starlette", "uvicorn")
FRONTS = ("swamp.cli", "swamp.serve")
#: what a front may import besides itself and third-party code (not the other front)
FRONT_REACHES = ("swamp.app", "swamp.errors", "swamp.util", "swamp.vault.redact", "swamp.vault.process_secrets")
#: the processes a CLI command becomes: entry points beside the CLI, and only the CLI may start them.
#: `swamp worker start` and `swamp worker scheduler` are handed what app/worker_fleet.py decided;
#: `swamp serve` becomes the server process (and `serve daemon enable` checks its options with it)
PROCESS_ENTRY_POINTS = ("swamp.workers.worker", "swamp.workers.scheduler", "swamp.serve.process")
#: what the sync protocol may import of the datastore package
SYNC_REACHES = ("swamp.datastore.sync", "swamp.datastore.locks", "swamp.datastore.objectstore")

# Known violations, each removed by the issue item named. Keep it minimal: an
# entry that no longer matches anything fails the test, so it gets deleted.
# (importing file, imported module prefix) -> the item that removes it
ALLOWED: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Arrow:
    source: str  # importing module
    target: str  # imported module (swamp.*) or top-level third-party name
    path: str  # importing file, relative to src/
    line: int
    type_only: bool = False  # under `if TYPE_CHECKING:`: never runs

    def __str__(self) -> str:
        return f"src/{self.path}:{self.line}: {self.source} -> {self.target}"


def _modules() -> dict[str, tuple[Path, bool]]:
    out = {}
    for p in sorted((SRC / "swamp").rglob("*.py")):
        parts = list(p.relative_to(SRC).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        out[".".join(parts)] = (p, is_package)
    return out


MODULES = _modules()


def _known(name: str) -> str:
    """The module an import loads: the longest known prefix of ``name``."""
    while name not in MODULES and "." in name:
        name = name.rpartition(".")[0]
    return name


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST):
    """(import node or import_module call, type_only) for every import in ``tree``."""
    work = [(tree, False)]
    while work:
        node, type_only = work.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, type_only
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)
              and ((isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                   or (isinstance(node.func, ast.Name) and node.func.id in ("import_module", "__import__")))):
            yield node, type_only
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            work += [(child, True) for child in node.body] + [(child, type_only) for child in node.orelse]
            continue
        work += [(child, type_only) for child in ast.iter_child_nodes(node)]


def _arrows() -> list[Arrow]:
    arrows = []
    for module, (path, is_package) in MODULES.items():
        rel = str(path.relative_to(SRC))
        for node, type_only in _imports(ast.parse(path.read_text(), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Call):  # importlib.import_module("swamp.x"): an import by name
                targets = [node.args[0].value]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                if node.level:
                    base = module.split(".") if is_package else module.split(".")[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    origin = ".".join(base + ([node.module] if node.module else []))
                else:
                    origin = node.module or ""
                # `from pkg import sub` loads pkg.sub when sub is a module.
                targets = [f"{origin}.{a.name}" if f"{origin}.{a.name}" in MODULES else origin
                           for a in node.names]
            for target in targets:
                if target == "swamp" or target.startswith("swamp."):
                    target = _known(target)
                    if target == module:
                        continue
                else:
                    target = target.split(".")[0]
                arrows.append(Arrow(module, target, rel, node.lineno, type_only))
    return sorted(arrows, key=lambda a: (a.path, a.line, a.target))


ARROWS = _arrows()


def _layer(module: str) -> int:
    best = max((p for p in LAYERS if module == p or module.startswith(p + ".")), key=len)
    return LAYERS[best]


def _under(module: str, prefixes) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def _package(module: str) -> str:
    return ".".join(module.split(".")[:2])


def _problem(a: Arrow) -> str | None:
    """Why the arrow is forbidden, or None."""
    if not a.target.startswith("swamp"):
        if a.target in FRAMEWORKS and _layer(a.source) > LAYERS["swamp.app"]:
            return f"{a.target} belongs to the entry points (cli, serve, workers)"
        return None
    if _under(a.source, ["swamp.cli"]) and _under(a.target, PROCESS_ENTRY_POINTS):
        return None  # a command that becomes the worker or the scheduler process
    if _under(a.source, FRONTS) and a.target != "swamp" and not _under(a.target, FRONT_REACHES) \
            and _package(a.target) != _package(a.source):
        if _under(a.target, FRONTS):
            return "a front never imports the other front: what both need is a use case in app/"
        return "a front reaches the house only through app/ (and errors, util, redaction)"
    if a.type_only and _under(a.target, ["swamp.repo.context"]) and _layer(a.source) > LAYERS["swamp.app"]:
        return None  # the type of the `repo` a function below app is handed
    if _under(a.source, DOMAIN) and _layer(a.target) < LAYERS["swamp.models"]:
        return "the domain never imports app, repo or a front"
    if (_under(a.source, ["swamp.datastore.sync"]) and _under(a.target, ["swamp.datastore"])
            and not _under(a.target, SYNC_REACHES)):
        return "datastore/sync does not import the datastore facade"
    if _layer(a.target) < _layer(a.source):
        return "points up the layers"
    if _under(a.source, ["swamp.expr"]) and _under(a.target, DOMAIN) and not _under(a.target, ["swamp.expr"]):
        return "expr imports no other domain package"
    if _under(a.source, ["swamp.data"]) and _under(a.target, ["swamp.models"]):
        return "data does not import models"
    return None


def _allowed(a: Arrow) -> str | None:
    for (path, prefix), why in ALLOWED.items():
        if a.path == path and _under(a.target, [prefix]):
            return why
    return None


def test_every_import_points_down_and_keeps_the_rules():
    problems, tolerated = [], []
    used = set()
    for a in ARROWS:
        problem = _problem(a)
        if problem is None:
            continue
        why = _allowed(a)
        if why is None:
            problems.append(f"{a} ({problem})")
        else:
            tolerated.append(f"{a} ({problem}; allowed until {why})")
            used.update(k for k in ALLOWED if k[0] == a.path and _under(a.target, [k[1]]))
    for line in tolerated:
        print("known layering violation:", line)
    stale = [f"{path} -> {prefix}" for (path, prefix) in ALLOWED if (path, prefix) not in used]
    assert not problems, "forbidden imports:\n" + "\n".join(problems)
    assert not stale, ("allow-list entries that match nothing any more; delete them from "
                       "tests/unit/test_layering.py: " + ", ".join(stale))


def test_no_import_cycle_between_modules():
    graph: dict[str, dict[str, Arrow]] = {m: {} for m in MODULES}
    for a in ARROWS:
        if a.target in MODULES and not a.type_only:  # a type-only import never runs
            graph[a.source].setdefault(a.target, a)
    cycles = [c for c in _strongly_connected(graph) if len(c) > 1]
    messages = []
    for cycle in cycles:
        members = set(cycle)
        arrows = [str(a) for m in sorted(members) for t, a in graph[m].items() if t in members]
        messages.append("a cycle between " + ", ".join(sorted(members)) + ":\n  " + "\n  ".join(arrows))
    assert not cycles, "\n".join(messages)


def _strongly_connected(graph: dict[str, dict]) -> list[list[str]]:
    """Tarjan's algorithm, iterative (the module graph is deep enough)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    component.append(m)
                    if m == node:
                        break
                out.append(component)
    return out


def test_the_checks_see_what_they_guard():
    # The rules are only as good as the parse: these arrows exist today.
    seen = {(a.source, a.target) for a in ARROWS}
    assert ("swamp.models.expressions", "swamp.expr") in seen  # from swamp import expr
    assert ("swamp.datastore.open", "swamp.datastore.cached") in seen  # a relative import
    assert ("swamp.cli.main", "click") in seen
    assert _problem(Arrow("swamp.expr.cel", "swamp.vault.sentinel", "swamp/expr/cel.py", 1)) \
        == "expr imports no other domain package"
    assert _problem(Arrow("swamp.models.runner", "swamp.app.methods", "swamp/models/runner.py", 1)) \
        == "the domain never imports app, repo or a front"
    assert _problem(Arrow("swamp.repo.context", "swamp.app.lifecycle", "swamp/repo/context.py", 1)) \
        == "points up the layers"
    # the fronts reach the domain only through app/
    assert _problem(Arrow("swamp.cli.model", "swamp.models.definitions", "swamp/cli/model.py", 1)) is not None
    assert _problem(Arrow("swamp.serve.routes", "swamp.repo.context", "swamp/serve/routes.py", 1)) is not None
    assert _problem(Arrow("swamp.serve.routes", "swamp.app.methods", "swamp/serve/routes.py", 1)) is None
    assert _problem(Arrow("swamp.cli.output", "swamp.vault.redact", "swamp/cli/output.py", 1)) is None
    # the worker transport only through app/; the CLI may start the worker and scheduler processes, serve not
    assert _problem(Arrow("swamp.cli.worker", "swamp.workers.team_certs", "swamp/cli/worker.py", 1)) is not None
    assert _problem(Arrow("swamp.cli.worker", "swamp.workers.worker", "swamp/cli/worker.py", 1)) is None
    assert _problem(Arrow("swamp.cli.worker", "swamp.workers.scheduler", "swamp/cli/worker.py", 1)) is None
    assert _problem(Arrow("swamp.serve.app", "swamp.workers.worker", "swamp/serve/app.py", 1)) is not None
    assert _problem(Arrow("swamp.app.worker_fleet", "swamp.workers.worker", "swamp/app/worker_fleet.py", 1)) \
        == "points up the layers"
    assert ("swamp.cli.worker", "swamp.workers.worker") in seen
    # a front never imports the other one (what both need is in app/), except the server process the CLI becomes
    front_to_front = "a front never imports the other front: what both need is a use case in app/"
    assert _problem(Arrow("swamp.cli.access", "swamp.serve.state", "swamp/cli/access.py", 1)) == front_to_front
    assert _problem(Arrow("swamp.cli.serve", "swamp.serve.runner", "swamp/cli/serve.py", 1)) == front_to_front
    assert _problem(Arrow("swamp.serve.app", "swamp.cli.output", "swamp/serve/app.py", 1)) == front_to_front
    assert _problem(Arrow("swamp.serve.app", "swamp.serve.state", "swamp/serve/app.py", 1)) is None
    assert _problem(Arrow("swamp.cli.access", "swamp.app.access_admin", "swamp/cli/access.py", 1)) is None
    assert _problem(Arrow("swamp.cli.serve", "swamp.serve.process", "swamp/cli/serve.py", 1)) is None
    assert _problem(Arrow("swamp.serve.app", "swamp.serve.process", "swamp/serve/app.py", 1)) is None  # its own
    assert ("swamp.cli.serve", "swamp.serve.process") in seen
    # the access rules are domain: they never reach a session's use case, nor a front
    assert _problem(Arrow("swamp.access.grants", "swamp.app.access", "swamp/access/grants.py", 1)) \
        == "the domain never imports app, repo or a front"
    assert _problem(Arrow("swamp.access.tokens", "swamp.serve.state", "swamp/access/tokens.py", 1)) \
        == "the domain never imports app, repo or a front"
    # the domain may name the Repo type, and only under TYPE_CHECKING
    assert _problem(Arrow("swamp.data.gc", "swamp.repo.context", "swamp/data/gc.py", 1, type_only=True)) is None
    assert _problem(Arrow("swamp.data.gc", "swamp.repo.context", "swamp/data/gc.py", 1)) is not None
    assert _problem(Arrow("swamp.data.gc", "swamp.app.lifecycle", "swamp/data/gc.py", 1, type_only=True)) is not None
    assert _problem(Arrow("swamp.datastore.sync.pull", "swamp.datastore.filesystem",
                          "swamp/datastore/sync/pull.py", 1)) == "datastore/sync does not import the datastore facade"
    # an import by name is an arrow, and so is one under TYPE_CHECKING (marked)
    tree = ast.parse("import importlib\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                     "    from swamp.repo import Repo\ndef f():\n    importlib.import_module('swamp.cli.remote')\n")
    found = {(n.lineno, kind) for n, kind in _imports(tree)}
    assert (4, True) in found and (6, False) in found
    assert _problem(Arrow("swamp.workflows.engine", "click", "swamp/workflows/engine.py", 1)) is not None
    graph = {"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}
    assert sorted(map(sorted, _strongly_connected(graph))) == [["a", "b", "c"], ["d"]]
