"""`swamp data get`, `swamp model method run`, `swamp data list`,
`swamp model get` and `swamp datastore sync` without importing click (click and the standard modules
only it needs: 5 to 20 ms of start-up), for the command lines people and
scripts type most: `swamp.cli.main.main` tries `try_run` after
`swamp.cli.fast_help` and before click.

The lane accepts a deliberately small set of forms, parsed here exactly as
click parses them:

- the command words (``data get``, ``model method run``, ``data list``,
  ``model get``, ``datastore sync``) and its positional arguments (``MODEL NAME``;
  ``MODEL METHOD``, where MODEL names a model, not a type: no ``/``;
  ``[MODEL]``; ``NAME``; none);
- the global options, before the command words or after them:
  ``--json``, ``--offline``, ``-q``/``--quiet``, ``-v``/``--verbose``,
  ``--no-color``, ``--repo-dir DIR`` (or ``--repo-dir=DIR``);
- ``data get``'s ``--version N``, ``--no-content``, ``--workflow X``;
  ``datastore sync``'s ``--pull`` and ``--push``;
  ``model method run``'s ``--input K=V`` and ``--tag K=V`` (repeatable; an
  ``--input`` value is read by `swamp.cli.inputs`, as on the click path).

Anything else goes to click unchanged, which parses it and prints every
usage error and help page: ``-h``/``--help``, ``--``, an option not in the
list above (``--stdin``, ``--input-file``, ``--server``, ``--token``,
``--traceparent``, ``--placement``, report and check options, ...), an option
value that starts with ``-`` or that click would refuse, too many or too few
positional arguments, a type run directly, ``SWAMP_SERVE_URL`` set, or
``SWAMP_SCHEDULER`` for a method run, or stdout/stderr that click.echo
would re-wrap (`swamp.cli.echo.plain_streams`). ``SWAMP_NO_FAST_LANE`` (set to anything)
sends every command to click; the tests use it to compare the two paths.

Both paths call the same command bodies (`swamp.cli.data_get.run`,
`swamp.cli.method_run.run`, `swamp.cli.data_list.run`,
`swamp.cli.model_get.run`) and render errors through
`swamp.cli.error_output`, so the output, the --json documents, the errors and
the exit codes are the same. tests/unit/test_fast_lane.py checks that the
parameters the lane gives the bodies are exactly click's, for many command
lines, and that a command line it does not take is left to click."""

from __future__ import annotations

import os
import sys

from swamp.cli.option_table import fast_flags

#: global flags: option -> CliState field (the table click's options are made from)
_GLOBAL_FLAGS = fast_flags()


class _Spec:
    def __init__(self, words, positionals, flags=None, values=None, multiple=None, required=None, defaults=None):
        self.words = tuple(words)
        self.positionals = tuple(positionals)
        #: how many positional arguments must be given (the others are optional: None)
        self.required = len(self.positionals) if required is None else required
        self.flags = flags or {}  # option -> parameter (True when given)
        self.values = values or {}  # option -> (parameter, converter): the last one given wins
        self.multiple = multiple or {}  # option -> parameter (a tuple of every value given, in order)
        #: only for a parameter its body gives no default (the body's own defaults are read off it)
        self.defaults = defaults or {}


#: the commands the lane runs; the parameters are the click commands' own names. What
#: an option not given means is the command body's own default (_defaults), the same
#: value click passes for it (test_fast_lane.py compares the two), never a copy here.
COMMANDS = (
    _Spec(("data", "get"), ("model", "name"), flags={"--no-content": "no_content"},
          values={"--version": ("version", int), "--workflow": ("workflow", str)}),
    _Spec(("model", "method", "run"), ("model_name", "method_name"),
          multiple={"--input": "input_", "--tag": "tag"}),
    _Spec(("data", "list"), ("model",), required=0),
    _Spec(("model", "get"), ("name",)),
    _Spec(("datastore", "sync"), (), flags={"--pull": "pull_only", "--push": "push_only"},
          defaults={"pull_only": False, "push_only": False}),
)


class Parsed:
    """A command line the lane takes: the command's words, the CliState of
    its global options, and the keyword arguments of its click callback."""

    def __init__(self, words: tuple, state, params: dict) -> None:
        self.words = words
        self.state = state
        self.params = params


def _repo_dir_ok(value: str) -> bool:
    """What click.Path(file_okay=False) accepts: a path that is not there,
    or one that is there, is not a regular file and is readable."""
    import stat

    if not value:
        return False
    try:
        st = os.stat(value)
    except OSError:
        return True
    except ValueError:  # an embedded NUL: click's message, not ours
        return False
    return not stat.S_ISREG(st.st_mode) and os.access(value, os.R_OK)


def _option(args: list, i: int, spec: _Spec | None, state: dict, params: dict, multi: dict) -> int | None:
    """Take the option at ``args[i]``; the index after it, or None when it is
    not one the lane takes."""
    arg = args[i]
    name, eq, explicit = arg.partition("=")
    if not name.startswith("--"):
        name, eq, explicit = arg, "", ""  # a short option never has '=' (click: no such option '-=')
    if name in _GLOBAL_FLAGS or (spec is not None and name in spec.flags):
        if eq:
            return None  # click: "Option '--json' does not take a value."
        if name in _GLOBAL_FLAGS:
            state[_GLOBAL_FLAGS[name]] = True
        else:
            params[spec.flags[name]] = True
        return i + 1
    takes_value = name == "--repo-dir" or (spec is not None and (name in spec.values or name in spec.multiple))
    if not takes_value:
        return None
    if eq:
        value, after = explicit, i + 1
    else:
        if i + 1 >= len(args) or args[i + 1].startswith("-"):
            return None  # missing (click's error), or an option-like value: click decides
        value, after = args[i + 1], i + 2
    if name == "--repo-dir":
        if not _repo_dir_ok(value):
            return None
        state["repo_dir"] = value
    elif name in spec.values:
        param, convert = spec.values[name]
        try:
            params[param] = convert(value)
        except ValueError:
            return None  # click: "'x' is not a valid integer."
    else:
        multi.setdefault(spec.multiple[name], []).append(value)
    return after


def parse(args: list, environ=os.environ) -> Parsed | None:
    """The command line ``args`` (without the program name) as the lane
    runs it, or None: click's."""
    if "SWAMP_NO_FAST_LANE" in environ or "SWAMP_SERVE_URL" in environ:
        return None
    if not all(isinstance(a, str) for a in args):
        return None  # main(argv) called with paths or numbers: click converts them
    state: dict = {}
    params: dict = {}
    multi: dict = {}
    i = 0
    while i < len(args) and args[i].startswith("-"):  # the root group's options, before the command
        i = _option(args, i, None, state, params, multi)
        if i is None:
            return None
    spec = next((s for s in COMMANDS if tuple(args[i:i + len(s.words)]) == s.words), None)
    if spec is None or (spec.words == ("model", "method", "run") and "SWAMP_SCHEDULER" in environ):
        return None
    i += len(spec.words)
    positionals = []
    while i < len(args):
        if args[i].startswith("-"):
            if args[i] in ("-", "--", "-h", "--help"):
                return None
            i = _option(args, i, spec, state, params, multi)
            if i is None:
                return None
        else:
            positionals.append(args[i])
            i += 1
    if not spec.required <= len(positionals) <= len(spec.positionals):
        return None
    if spec.words == ("model", "method", "run") and "/" in positionals[0]:
        return None  # a type run directly (MODEL|TYPE METHOD NAME): click
    out = {**_defaults(_body(spec.words)), **spec.defaults}
    out.update(zip(spec.positionals, positionals))
    out.update(params)
    out.update({k: tuple(v) for k, v in multi.items()})
    from swamp.cli.state import CliState

    cli_state = CliState(json=state.get("json", False), repo_dir=state.get("repo_dir"),
                         quiet=state.get("quiet", False), offline=state.get("offline", False),
                         verbose=state.get("verbose", False), color=not state.get("color", False))
    return Parsed(spec.words, cli_state, out)


def _defaults(fn) -> dict:
    """A command body's keyword defaults, read off the function (inspect
    would cost start-up): what each option not given means."""
    code = fn.__code__
    names = code.co_varnames[:code.co_argcount]
    values = fn.__defaults__ or ()
    out = dict(zip(names[len(names) - len(values):], values))
    out.update(fn.__kwdefaults__ or {})
    out.pop("state", None)
    return out


def _body(words: tuple):
    """The command's body, shared with its click command."""
    if words == ("data", "get"):
        from swamp.cli import data_get as body
    elif words == ("data", "list"):
        from swamp.cli import data_list as body
    elif words == ("model", "get"):
        from swamp.cli import model_get as body
    elif words == ("datastore", "sync"):
        from swamp.cli import datastore_sync as body
    else:
        from swamp.cli import method_run as body
    return body.run


def try_run(args: list) -> int | None:
    """Run ``args`` when the lane takes it, returning the exit code run_cli
    would; None: click's."""
    from swamp.cli.echo import plain_streams

    if sys.platform == "win32":  # click writes to the Windows console its own way
        return None
    parsed = parse(args)
    if parsed is None or not plain_streams():
        return None
    return run(parsed, args)


def run(parsed: Parsed, args: list) -> int:
    """What click's main (standalone_mode=False) and swamp.cli.errors.run_cli
    together do with a command's exceptions, without click."""
    import errno

    from swamp.cli import error_output
    from swamp.cli.colour import use_state
    from swamp.errors import SwampError

    json_mode = error_output.json_mode(args)
    state = error_output.start(args, parsed.state)
    body = _body(parsed.words)
    use_state(state)
    try:
        try:
            body(state, **parsed.params)
            return 0
        except (EOFError, KeyboardInterrupt) as e:
            sys.stderr.write("\n")  # click closes the terminal's ^C echo with a blank line
            sys.stderr.flush()
            if isinstance(e, KeyboardInterrupt):
                return error_output.interrupted(json_mode)
            error_output.report(SwampError("aborted", code="aborted"), json_mode)
            return 1
        except OSError as e:
            if e.errno != errno.EPIPE:
                raise
            # As click: no second complaint when the interpreter flushes the closed pipe at exit.
            sys.stdout = _PacifyFlush(sys.stdout)
            sys.stderr = _PacifyFlush(sys.stderr)
            return 1
    except SystemExit as e:  # commands exit with a code (records on failure)
        return int(e.code or 0)
    except SwampError as e:
        return error_output.swamp_error(e, json_mode)
    except KeyboardInterrupt:
        return error_output.interrupted(json_mode)
    except BrokenPipeError:
        return 1
    finally:
        use_state(None)


class _PacifyFlush:
    """A stream whose flush ignores a broken pipe (click's _PacifyFlushWrapper)."""

    def __init__(self, wrapped) -> None:
        self.wrapped = wrapped

    def flush(self) -> None:
        import errno

        try:
            self.wrapped.flush()
        except OSError as e:
            if e.errno != errno.EPIPE:
                raise

    def __getattr__(self, attr: str):
        return getattr(self.wrapped, attr)
