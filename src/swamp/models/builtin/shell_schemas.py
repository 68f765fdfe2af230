"""The schemas of command/shell, as pydantic classes: what `swamp type
describe command/shell` shows, and what judges any argument or result the
fast path in shell.py does not accept exactly. Imported only then."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ShellArguments(BaseModel):
    # Argument schemas refuse unknown keys (models/api._strict); declared here
    # so that the class is the same whether or not it is loaded lazily.
    model_config = ConfigDict(extra="forbid")

    run: str = Field(description="The command, run by /bin/sh -c")
    workingDir: str | None = Field(default=None, description="Directory to run in (default: the repository root)")
    timeout: int | None = Field(default=None, ge=1, description="Kill the command after this many milliseconds")
    env: dict[str, str] = Field(default_factory=dict, description="Environment variables the command gets "
                                "(besides a safe base: PATH, HOME, LANG, LC_*, TZ, TMPDIR, USER, ...)")
    inheritEnv: list[str] = Field(default_factory=list, description="Variables passed through from swamp's own "
                                  "environment, by name (set in the definition only)")
    ignoreExitCode: bool = Field(default=False, description="Succeed even when the command exits non-zero")


class ShellResult(BaseModel):
    exitCode: int
    executedAt: str
    command: str
    durationMs: int
    stdout: str
    stderr: str
