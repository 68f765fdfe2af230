"""The text of a user service that runs one swamp command: a systemd user
unit (Linux) or a launchd agent's property list (macOS).

The command line is caller text and stays text: each argument is quoted
for systemd so that nothing in it is expanded (``$VAR`` and ``%h`` are
written ``$$VAR`` and ``%%h``), and launchd gets the arguments as a list
with no shell between. A unit never holds a secret: what a command needs
(a webhook's secret, ...) comes from an environment file the unit names,
which stays the user's (mode 0600), or from files such as the team's
certificates."""

from __future__ import annotations

import plistlib
import re
import shlex

#: what systemd's ExecStart= may take unquoted (everything else is quoted)
_PLAIN = re.compile(r"^[A-Za-z0-9_@%+=:,./-]+$")


def systemd_word(arg: str) -> str:
    """One argument of ExecStart=, as systemd reads back exactly ``arg``."""
    if "\n" in arg or "\r" in arg or "\0" in arg:
        raise ValueError("an argument of a service cannot hold a line break or a NUL")
    escaped = arg.replace("%", "%%").replace("$", "$$")
    if _PLAIN.match(arg):
        return escaped
    return '"' + escaped.replace("\\", "\\\\").replace('"', '\\"') + '"'


def systemd_path(path: str) -> str:
    """A path setting (WorkingDirectory=, EnvironmentFile=): the whole value
    is the path, spaces included; only its specifiers are escaped."""
    if "\n" in path or "\r" in path or "\0" in path:
        raise ValueError("a path of a service cannot hold a line break or a NUL")
    return path.replace("%", "%%")


def systemd_unit(*, description: str, argv: list[str], working_dir: str, env_file: str | None) -> str:
    """A systemd user unit running ``argv`` (restarted if it fails)."""
    lines = [
        "# Written by swamp (swamp serve|worker daemon enable); 'daemon disable' removes it.",
        "[Unit]",
        f"Description={description}",
        "After=network-online.target",
        "Wants=network-online.target",
        "",
        "[Service]",
        "Type=simple",
        f"WorkingDirectory={systemd_path(working_dir)}",
    ]
    if env_file:
        lines.append(f"EnvironmentFile={systemd_path(env_file)}")
    lines += [
        "ExecStart=" + " ".join(systemd_word(a) for a in argv),
        "Restart=on-failure",
        "RestartSec=5",
        "",
        "[Install]",
        "WantedBy=default.target",
        "",
    ]
    return "\n".join(lines)


def launchd_plist(*, label: str, argv: list[str], working_dir: str, env_file: str | None, log: str) -> str:
    """A launchd agent's property list running ``argv`` (kept alive if it
    fails). launchd reads no environment file: with one, /bin/sh reads it
    and then execs the command (both quoted, never re-parsed)."""
    program = argv
    if env_file:
        program = ["/bin/sh", "-c", f"set -a; . {shlex.quote(env_file)}; set +a; exec \"$@\"", "swamp", *argv]
    doc = {
        "Label": label,
        "ProgramArguments": program,
        "WorkingDirectory": working_dir,
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "StandardOutPath": log,
        "StandardErrorPath": log,
    }
    return plistlib.dumps(doc, sort_keys=True).decode()
