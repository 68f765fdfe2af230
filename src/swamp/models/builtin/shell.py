"""command/shell: run a shell command and record what it did. Written with
the same public API as any extension."""

from __future__ import annotations

import subprocess
import time
from typing import TYPE_CHECKING

from swamp.errors import CommandFailed, ValidationError
from swamp.models import step_environment
from swamp.models.api import ModelType
from swamp.util import clock, process_output, processes, tracing
from swamp.util.fast_schema import FastField, LazySchema
from swamp.vault.sentinel import describe_sentinels

if TYPE_CHECKING:
    from swamp.models.builtin.shell_schemas import ShellArguments
    from swamp.models.context import Context

# The schemas are the pydantic classes in shell_schemas.py, imported only
# when something needs them (describe, or a value the fast path leaves to
# them); these tables let a plain run check its arguments and its result
# without pydantic (util/fast_schema.py; tests/unit/test_fast_schema.py
# keeps them equal to the classes).
SHELL_ARGUMENTS = LazySchema("swamp.models.builtin.shell_schemas:ShellArguments", {
    "run": FastField(str),
    "workingDir": FastField(str, None, default=None),
    "timeout": FastField(int, None, default=None, ge=1),
    "env": FastField(dict, factory=dict, values=str),
    "inheritEnv": FastField(list, factory=list, values=str),
    "ignoreExitCode": FastField(bool, default=False),
})
SHELL_RESULT = LazySchema("swamp.models.builtin.shell_schemas:ShellResult", {
    "exitCode": FastField(int), "executedAt": FastField(str), "command": FastField(str),
    "durationMs": FastField(int), "stdout": FastField(str), "stderr": FastField(str),
})


def __getattr__(name: str):
    # ShellArguments and ShellResult, still importable from here.
    if name in ("ShellArguments", "ShellResult"):
        from swamp.models.builtin import shell_schemas

        return getattr(shell_schemas, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


shell = ModelType("command/shell", version="2026.11.30.1", global_arguments=SHELL_ARGUMENTS,
                  description="Run a shell command; record its exit code and output")
shell.resource("result", schema=SHELL_RESULT, lifetime="infinite", garbage_collection=10,
               description="Exit code, output and timing of the last run")
shell.file("log", content_type="text/plain", lifetime="infinite", garbage_collection=10,
           description="Combined stdout and stderr")
# Secrets in `run` are passed as environment variables, never pasted into
# the command text: the runner leaves them as references for this type.
shell.secret_passthrough = {"run"}


#: lines of stderr a failed command leaves in the run's log
STDERR_TAIL = 10


def _inherited_names(ctx: Context, asked: list[str]) -> list[str]:
    """``inheritEnv`` as the definition sets it (its globalArguments or its
    execute method's arguments): a caller's input cannot widen what of this
    process's environment a command sees."""
    from swamp.models.arguments import method_values

    declared = method_values(ctx.definition, "execute").get("inheritEnv") or []
    if list(asked) != list(declared):
        raise ValidationError("inheritEnv is taken from the definition only, not from inputs",
                              hint="set inheritEnv in the model's definition (needs write on the model); "
                                   "pass a value to the command through `env`")
    return step_environment.check_names(declared)


@shell.method(description="Run the command")
def execute(args: ShellArguments, ctx: Context) -> None:
    command, secret_env = ctx.shell_secrets(args.run)
    # A declared environment: the safe base, the variables the definition names, its `env`; never the
    # rest of this process's (serve's webhook secrets, AWS keys, tokens).
    inherit = _inherited_names(ctx, args.inheritEnv)
    env = {**step_environment.for_step(inherit), **tracing.child_env(), **ctx.resolve_secrets(args.env),
           **secret_env}
    cwd = args.workingDir or (str(ctx.repo_dir) if ctx.repo_dir else None)
    executed_at = clock.isoformat()
    t0 = time.perf_counter()
    # A session of its own, so a timeout stops what the command started too:
    # killing only `sh` would leave a child holding the output pipes open.
    proc = subprocess.Popen(["/bin/sh", "-c", command], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        # Each line as it comes, shown live (ctx.progress); all of it kept for the log and the result.
        # Lines are cut out of the output only for a listener (a terminal, a serve client, a worker's step log).
        out, err, timed_out = process_output.collect(
            proc, args.timeout / 1000 if args.timeout else None, ctx.progress if ctx.on_log is not None else None,
            on_timeout=lambda: processes.stop(proc, grace=0))  # the group and every descendant, at once
        code = proc.returncode
        if timed_out:
            code, err = -1, err + f"\ntimed out after {args.timeout} ms\n".encode()
    except BaseException:  # Ctrl-C while waiting: nothing of the command outlives us
        processes.stop(proc, grace=0)
        raise
    duration = int((time.perf_counter() - t0) * 1000)
    stdout = out.decode(errors="replace")
    stderr = err.decode(errors="replace")
    if ctx.cancelled:  # stopped by a cancel (its process group was signalled): nothing of it is written
        raise CommandFailed(f"cancelled after {duration} ms; the command was stopped")
    failed = timed_out or (code != 0 and not args.ignoreExitCode)
    with ctx.file_writer("log", "log") as w:  # kept either way: it says what happened
        w.write(out)
        w.write(err)
    if not failed:
        # A result is what later steps build on: only a command that succeeded writes one.
        ctx.write_resource("result", "result", {
            "exitCode": code, "executedAt": executed_at, "command": describe_sentinels(args.run),
            "durationMs": duration, "stdout": stdout.rstrip("\n"), "stderr": stderr.rstrip("\n")})
    ctx.log(f"exit code {code} after {duration} ms")
    if code != 0:
        # The run's log says why without opening the data: stderr's last lines.
        for line in stderr.rstrip("\n").splitlines()[-STDERR_TAIL:]:
            ctx.log(f"stderr: {line}")
    if timed_out:
        raise CommandFailed(f"command timed out after {args.timeout} ms", stderr_tail=_stderr_tail(stderr, timed_out))
    if failed:
        raise CommandFailed(f"command exited with code {code}", stderr_tail=_stderr_tail(stderr))


#: of a failed command's stderr, the error's ``stderr_tail`` (and so the
#: records' ``stderrTail``, the API) keeps the last lines, this many characters at most
ERROR_TAIL_LINES, ERROR_TAIL_CHARS = 3, 400


def _stderr_tail(stderr: str, timed_out: bool = False) -> str | None:
    """'<its last lines>' (joined by ' | '): why a command failed, readable where
    its error is shown without opening its log (redacted with the error); None
    when it printed nothing on stderr."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    if timed_out and lines and lines[-1].startswith("timed out after"):
        lines.pop()  # our own note, already in the message
    if not lines:
        return None
    tail = " | ".join(lines[-ERROR_TAIL_LINES:])
    if len(tail) > ERROR_TAIL_CHARS:
        tail = "..." + tail[-ERROR_TAIL_CHARS:]
    return tail
