"""A file a command line names, found where swamp finds every repository
path: a relative path is relative to the repository's root (as upstream
resolves them), so `swamp --repo-dir R serve --cert-file tls/cert.pem`
means R/tls/cert.pem wherever it is started."""

from __future__ import annotations

from pathlib import Path

from swamp.errors import SwampError


def existing_file(value: str, root: Path | None, option: str) -> str:
    """``value`` as an absolute path (relative ones under ``root``); an
    error naming the option and the path looked at when it is no file."""
    path = Path(value).expanduser()
    if not path.is_absolute():
        path = root / path
    if not path.is_file():
        why = "is a directory" if path.is_dir() else "does not exist"
        raise SwampError(f"{option} {value!r}: {path} {why}",
                         hint="a relative path is relative to the repository's root" if not Path(value).is_absolute()
                         else None, code="not_found")
    return str(path)
