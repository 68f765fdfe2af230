"""`swamp serve daemon` and `swamp worker daemon`: a user service that runs
`swamp serve` or `swamp worker start` for one repository, with the options
given, started at login and restarted when it fails: a systemd user unit
on Linux, a launchd agent on macOS.

One service per repository and command, named after both
(``swamp-serve-infra-1a2b3c4d``), so two repositories never share one.
Where neither service manager answers (a container, CI) every command but
``enable --dry-run`` says so and exits 1: nothing is half done. The unit
text is built by util/service_units.py and holds no secret."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from swamp.errors import SwampError, UsageError
from swamp.util import service_units
from swamp.util.atomic import atomic_write

KINDS = {"serve": "swamp serve", "worker": "swamp worker start"}
_HINT = ("'swamp {kind} daemon enable --dry-run' prints the unit to install by hand; or run "
         "'{command}' under the supervisor you use (a container's, supervisord, ...)")


def manager_for(platform: str = sys.platform) -> str:
    """Which service manager this platform has: systemd or launchd."""
    if platform == "darwin":
        return "launchd"
    if platform.startswith("linux"):
        return "systemd"
    raise SwampError(f"swamp daemons need systemd (Linux) or launchd (macOS), not {platform}",
                     code="no_service_manager", hint=_HINT.format(kind="serve", command="swamp serve"))


def service_name(kind: str, root: Path) -> str:
    """swamp-KIND-<folder>-<8 hex of the path>: stable, and one per repository."""
    folder = re.sub(r"[^a-z0-9-]+", "-", root.name.lower()).strip("-")[:32] or "repo"
    return f"swamp-{kind}-{folder}-{hashlib.sha256(str(root).encode()).hexdigest()[:8]}"


def unit_path(manager: str, name: str, environ=os.environ) -> Path:
    home = Path(environ.get("HOME") or Path.home())
    if manager == "launchd":
        return home / "Library" / "LaunchAgents" / f"club.swamp.{name}.plist"
    config = Path(environ.get("XDG_CONFIG_HOME") or home / ".config")
    return config / "systemd" / "user" / f"{name}.service"


def check_env_file(value: str | None) -> str | None:
    """The environment file's absolute path; refused unless it is a file
    only its owner can read (it holds the service's secrets)."""
    if value is None:
        return None
    path = Path(value).expanduser().absolute()
    if not path.is_file():
        raise SwampError(f"--env-file {value!r}: {path} does not exist", code="not_found",
                         hint="a file of NAME=VALUE lines, e.g. SWAMP_WEBHOOK_DEPLOY_SECRET=...")
    if path.stat().st_mode & 0o077:
        raise SwampError(f"--env-file {path} can be read by others, and it holds the service's secrets",
                         code="validation", hint=f"chmod 600 {path}")
    return str(path)


def render(kind: str, root: Path, args: list[str], env_file: str | None, manager: str) -> tuple[str, str]:
    """(service name, unit text) for ``swamp --repo-dir ROOT KIND ARGS``."""
    name = service_name(kind, root)
    command = ["serve"] if kind == "serve" else ["worker", "start"]
    argv = [sys.executable, "-m", "swamp", "--repo-dir", str(root), *command, *args]
    description = f"{KINDS[kind]} for {root}"
    if manager == "launchd":
        log = str(root / ".swamp" / "cache" / f"{name}.log")
        return name, service_units.launchd_plist(label=f"club.swamp.{name}", argv=argv, working_dir=str(root),
                                                 env_file=env_file, log=log)
    try:
        return name, service_units.systemd_unit(description=description, argv=argv, working_dir=str(root),
                                                env_file=env_file)
    except ValueError as e:
        raise UsageError(str(e)) from None


# ------------------------------------------------------ the service manager
def _run(argv: list[str], environ) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(argv, capture_output=True, text=True, env=dict(environ), timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return subprocess.CompletedProcess(argv, 1, "", str(e))


def _first_line(p: subprocess.CompletedProcess) -> str:
    return ((p.stderr or p.stdout or "").strip().splitlines() or [f"exit {p.returncode}"])[0]


def _tool(manager: str, kind: str, environ) -> str:
    """The service manager's command, checked to answer; else the clear
    error that there is none here."""
    name = "launchctl" if manager == "launchd" else "systemctl"
    hint = _HINT.format(kind=kind, command=KINDS[kind])
    path = shutil.which(name, path=environ.get("PATH", ""))
    if path is None:
        raise SwampError(f"{manager} is not available here: no {name} on PATH", code="no_service_manager", hint=hint)
    if manager == "systemd":
        probe = _run([path, "--user", "show-environment"], environ)
        if probe.returncode != 0:
            raise SwampError(f"systemd's user manager is not running here ({_first_line(probe)})",
                             code="no_service_manager", hint=hint)
    return path


def _must(p: subprocess.CompletedProcess, what: str, unit: Path) -> None:
    if p.returncode != 0:
        raise SwampError(f"{what} failed: {_first_line(p)}", code="service_manager",
                         hint=f"the unit is {unit}; 'daemon status' shows its state, 'daemon disable' removes it")


def _launchd_domain() -> str:
    return f"gui/{os.getuid()}"


def enable(kind: str, root: Path, args: list[str], *, env_file: str | None = None, dry_run: bool = False,
           environ=os.environ) -> dict:
    """Write the unit and start it now and at every login (``dry_run``:
    only give its text)."""
    manager = manager_for()
    env_file = check_env_file(env_file)
    name, text = render(kind, root, args, env_file, manager)
    unit = unit_path(manager, name, environ)
    out = {"name": name, "manager": manager, "unit": str(unit), "text": text, "dryRun": dry_run, "enabled": False}
    if dry_run:
        return out
    tool = _tool(manager, kind, environ)
    atomic_write(unit, text)
    os.chmod(unit, 0o644)  # no secret in it: readable, as service managers expect
    if manager == "systemd":
        _must(_run([tool, "--user", "daemon-reload"], environ), "systemctl --user daemon-reload", unit)
        _must(_run([tool, "--user", "enable", "--now", f"{name}.service"], environ),
              f"systemctl --user enable --now {name}.service", unit)
    else:
        _run([tool, "bootout", f"{_launchd_domain()}/club.swamp.{name}"], environ)  # an older one, if loaded
        _must(_run([tool, "bootstrap", _launchd_domain(), str(unit)], environ), "launchctl bootstrap", unit)
    return {**out, "enabled": True}


def disable(kind: str, root: Path, *, environ=os.environ) -> dict:
    """Stop the service and remove its unit (nothing to do when there is none)."""
    manager = manager_for()
    name = service_name(kind, root)
    unit = unit_path(manager, name, environ)
    tool = _tool(manager, kind, environ)
    out = {"name": name, "manager": manager, "unit": str(unit), "removed": False}
    if not unit.exists():
        return out
    if manager == "systemd":
        _run([tool, "--user", "disable", "--now", f"{name}.service"], environ)  # not loaded: nothing to stop
        unit.unlink()
        _must(_run([tool, "--user", "daemon-reload"], environ), "systemctl --user daemon-reload", unit)
    else:
        _run([tool, "bootout", f"{_launchd_domain()}/club.swamp.{name}"], environ)
        unit.unlink()
    return {**out, "removed": True}


def status(kind: str, root: Path, *, environ=os.environ) -> dict:
    """Whether the unit is installed, enabled and running, and the command it runs."""
    manager = manager_for()
    name = service_name(kind, root)
    unit = unit_path(manager, name, environ)
    tool = _tool(manager, kind, environ)
    installed = unit.is_file()
    out = {"name": name, "manager": manager, "unit": str(unit), "installed": installed, "enabled": False,
           "active": False, "state": "not installed", "command": None}
    if not installed:
        return out
    text = unit.read_text(errors="replace")
    if manager == "systemd":
        enabled = _run([tool, "--user", "is-enabled", f"{name}.service"], environ)
        active = _run([tool, "--user", "is-active", f"{name}.service"], environ)
        state = (active.stdout or "").strip() or _first_line(active)
        command = next((line[len("ExecStart="):] for line in text.splitlines() if line.startswith("ExecStart=")),
                       None)
        return {**out, "enabled": enabled.returncode == 0, "active": active.returncode == 0, "state": state,
                "command": command}
    loaded = _run([tool, "print", f"{_launchd_domain()}/club.swamp.{name}"], environ)
    running = loaded.returncode == 0 and "state = running" in loaded.stdout
    return {**out, "enabled": loaded.returncode == 0, "active": running,
            "state": "running" if running else ("loaded" if loaded.returncode == 0 else "not loaded")}
