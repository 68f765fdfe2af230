"""What a route of the API is made of (``Route``, ``Body``), what its
handler gets (``Call``: the request's checked path, query and body, and the
server's hooks) and may answer besides a JSON document (``Reply``), and what
the handlers of every kind share: the inputs of a run, an unpublished
result. The table itself is routes.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from swamp.errors import UnpublishedError, ValidationError

#: every route's path starts here
API = "/api/v1"


@dataclass
class Reply:
    status: int
    doc: Any
    headers: dict[str, str] | None = None


@dataclass
class Call:
    repo: Any
    path: dict[str, str]
    query: dict[str, Any]
    body: dict[str, Any]
    #: send an event to a streaming client (does nothing otherwise); any thread
    emit: Callable[[str, dict], None] = lambda event, data: None
    #: note what this request is running, for a graceful shutdown
    note: Callable[[dict], None] = lambda info: None
    #: check an action on a resource found only while handling (403 if denied)
    authorize: Callable[[str, str], None] = lambda action, resource: None
    #: whether the caller may (action, resource), without refusing: filters what a query looks at
    allowed: Callable[[str, str], bool] = lambda action, resource: True
    #: who is calling, as records name them (util/actors.py: "token:NAME", "anonymous")
    caller: str | None = None
    #: continue a run in the background on this server: (workflow, run id) (serve/state.py)
    resume_later: Callable[[str, str], None] | None = None
    #: start a workflow run in the background on this server: (workflow, inputs, fail_on, run id, on_end)
    start_later: Callable[[str, dict, str, str, Callable[[], None]], None] | None = None
    #: the run this request starts or continues, when known before it runs (every SSE event names it)
    run_id: str | None = None
    #: run work(): str in the background on this server, counted as the caller's run (serve/state.py)
    in_background: Callable[[str, Callable[[], str]], None] | None = None


@dataclass
class Body:
    """The body fields a route accepts: name -> (JSON type, required, description)."""

    fields: dict[str, tuple[type | tuple, bool, str]]


@dataclass
class Route:
    method: str
    path: str
    op: str
    summary: str
    run: Callable[[Call], Any]
    #: what access control checks: an action and the resource it acts on
    action: str | None = None
    resource: Callable[[Call], str] | None = None
    query: dict[str, tuple[type, str]] = field(default_factory=dict)
    body: Body | None = None
    #: answers ``Accept: text/event-stream`` with the run's events
    stream: bool = False
    #: lists: each row's resource; rows the caller may not read are left out
    row_resource: Callable[[dict], str] | None = None
    #: changes state: refused while the server shuts down
    changes: bool = False
    #: runs a method or a workflow: counted against the run limits
    runs: bool = False
    #: the run id a request will start or continue, known before it runs (None: not known)
    run_id: Callable[[Call], str | None] | None = None


def inputs_of(call: Call, values=None, key: str = "inputs") -> dict:
    """The inputs map, with the leaves listed in ``cliStrings`` treated as
    text typed on a command line (coerced to their declared type, as
    ``--input KEY=VALUE`` is): that is how ``--server`` sends ``--input``."""
    from swamp.util.cli_strings import CliString

    values = (call.body.get(key) or {}) if values is None else values
    if not isinstance(values, dict):
        raise ValidationError(f"{key} must be a JSON object")
    for path in call.body.get("cliStrings") or []:
        if not isinstance(path, list) or not path or not all(isinstance(p, str) for p in path):
            raise ValidationError("cliStrings holds paths: lists of keys, such as [\"a\", \"b\"]")
        node = values
        for k in path[:-1]:
            node = node.get(k) if isinstance(node, dict) else None
        if not isinstance(node, dict) or not isinstance(node.get(path[-1]), str):
            raise ValidationError(f"cliStrings: {'.'.join(path)} is not a string in {key}")
        node[path[-1]] = CliString(node[path[-1]])
    return values


def unpublished_reply(e: UnpublishedError) -> Reply:
    from swamp.serve.errors import error_doc

    return Reply(202, error_doc(e))
