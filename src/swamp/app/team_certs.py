"""The use cases of the team's certificates on this machine (docs/workers.md,
"Enrolling"): the CA, the certificates it signs, and the enrolment tokens
that carry one to a new worker machine through the shared datastore.

The files and the cryptography are swamp.workers.team_certs; the tokens'
documents in the datastore are app/worker_tokens.py. What is decided here:
which folder (the one given, else $SWAMP_TEAM_CERTS or
~/.config/swamp/team-certs), and that only the CA holder (ca-key.pem in
the folder) makes or revokes a token."""

from __future__ import annotations

from pathlib import Path

from swamp.app import worker_tokens
from swamp.errors import UsageError
from swamp.util.durations import duration_seconds
from swamp.workers import team_certs


def folder_of(folder: Path | None) -> Path:
    """The team-certs folder a command works in."""
    return folder if folder is not None else team_certs.default_dir()


def create_ca(folder: Path | None = None, *, days: int = team_certs.CA_DAYS) -> dict:
    """The team's CA (ca.pem, and ca-key.pem 0600); refused where one is."""
    return team_certs.create_ca(folder_of(folder), days=days)


def issue_cert(name: str, folder: Path | None = None, *, days: int = team_certs.CERT_DAYS,
               replace: bool = False) -> dict:
    """NAME.pem and NAME-key.pem (0600), signed by the CA in the folder;
    refused where NAME has one, unless ``replace``."""
    return team_certs.issue(folder_of(folder), name, days=days, replace=replace)


def list_certs(folder: Path | None = None) -> list[dict]:
    """The certificates in the folder, the CA's first, then by name."""
    return team_certs.list_certs(folder_of(folder))


def create_token(repo, name: str, *, folder: Path | None = None, duration: str = "24h",
                 days: int = team_certs.CERT_DAYS, max_enrollments: str = "1") -> dict:
    """Issue the certificate NAME with the CA in the folder (so only its
    holder can), seal it in the shared datastore, and return the token's
    row with the token, once. A token enrols one machine."""
    if str(max_enrollments) != "1":
        raise UsageError(f"--max-enrollments {max_enrollments}: a token enrols one machine here",
                         hint="make one token per machine (each gets its own certificate and name)")
    seconds = duration_seconds(duration)  # a wrong duration fails before a certificate is made
    pems = team_certs.issue_pems(folder_of(folder), name, days=days)
    return worker_tokens.create(repo, name, pems, seconds=seconds)


def revoke_token(repo, name: str, *, folder: Path | None = None) -> dict:
    """Refuse NAME's token from now on; only the holder of the CA that
    issued it can (its key in the folder)."""
    ca = team_certs.ca_fingerprint(folder_of(folder), with_key=True)
    return worker_tokens.revoke(repo, name, ca_sha256=ca)


def enrol(repo, token: str, folder: Path | None = None) -> dict:
    """Redeem ``token`` into the folder, or, when this machine already
    holds the very certificate it enrolled (a service restarted with the
    same token), say so and use it (``installed`` None). The token's row."""
    folder = folder_of(folder)
    row = worker_tokens.lookup(repo, token) if token.startswith(worker_tokens.PREFIX) else None
    if row is not None and row["state"] == "used" and _holds(folder, row):
        return {**row, "installed": None}
    return worker_tokens.redeem(repo, token, lambda pems: team_certs.install(folder, pems))


def _holds(folder: Path, row: dict) -> bool:
    return team_certs.cert_sha256(folder, row["name"]) == row.get("certificateSha256")
