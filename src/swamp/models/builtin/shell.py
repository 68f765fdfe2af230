"""command/shell: run a shell command and record what it did. Written with
the same public API as any extension."""

from __future__ import annotations

import os
import subprocess
import time

from pydantic import BaseModel, Field

from swamp.errors import SwampError
from swamp.models.api import ModelType
from swamp.models.context import Context
from swamp.util import clock, processes, tracing
from swamp.vault.sentinel import describe_sentinels


class ShellArguments(BaseModel):
    run: str = Field(description="The command, run by /bin/sh -c")
    workingDir: str | None = Field(default=None, description="Directory to run in (default: the repository root)")
    timeout: int | None = Field(default=None, ge=1, description="Kill the command after this many milliseconds")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment variables")
    ignoreExitCode: bool = Field(default=False, description="Succeed even when the command exits non-zero")


class ShellResult(BaseModel):
    exitCode: int
    executedAt: str
    command: str
    durationMs: int
    stdout: str
    stderr: str


shell = ModelType("command/shell", version="2026.11.30.1", global_arguments=ShellArguments,
                  description="Run a shell command; record its exit code and output")
shell.resource("result", schema=ShellResult, lifetime="infinite", garbage_collection=10,
               description="Exit code, output and timing of the last run")
shell.file("log", content_type="text/plain", lifetime="infinite", garbage_collection=10,
           description="Combined stdout and stderr")
# Secrets in `run` are passed as environment variables, never pasted into
# the command text: the runner leaves them as references for this type.
shell.secret_passthrough = {"run"}


#: lines of stderr a failed command leaves in the run's log
STDERR_TAIL = 10


class CommandFailed(SwampError):
    code = "command_failed"


@shell.method(description="Run the command")
def execute(args: ShellArguments, ctx: Context) -> None:
    command, secret_env = ctx.shell_secrets(args.run)
    env = {**os.environ, **tracing.child_env(), **ctx.resolve_secrets(args.env), **secret_env}
    cwd = args.workingDir or (str(ctx.repo_dir) if ctx.repo_dir else None)
    executed_at = clock.isoformat()
    t0 = time.perf_counter()
    timed_out = False
    # A session of its own, so a timeout stops what the command started too:
    # killing only `sh` would leave a child holding the output pipes open.
    proc = subprocess.Popen(["/bin/sh", "-c", command], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=args.timeout / 1000 if args.timeout else None)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        timed_out = True
        processes.stop(proc, grace=0)  # the group and every descendant, at once
        out, err = proc.communicate()
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
        ctx.write_resource("result", "result", ShellResult(
            exitCode=code, executedAt=executed_at, command=describe_sentinels(args.run), durationMs=duration,
            stdout=stdout.rstrip("\n"), stderr=stderr.rstrip("\n")))
    ctx.log(f"exit code {code} after {duration} ms")
    if code != 0:
        # The run's log says why without opening the data: stderr's last lines.
        for line in stderr.rstrip("\n").splitlines()[-STDERR_TAIL:]:
            ctx.log(f"stderr: {line}")
    if timed_out:
        raise CommandFailed(f"command timed out after {args.timeout} ms")
    if failed:
        raise CommandFailed(f"command exited with code {code}")
