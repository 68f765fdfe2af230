"""The team's certificates: one certificate authority (CA) that enrols the
scheduler, the workers and the dispatching machines of a team, and the
certificates it signs, one per party (docs/workers.md, "Enrolling").

Every link between those parties is mutual TLS against this CA
(swamp.workers.links): a process that holds no certificate signed by it
cannot connect to the scheduler, so it can neither join as a worker nor
submit code, and never sees a step or its secrets.

One folder holds them, outside any checkout (a key must never reach git):
``$SWAMP_TEAM_CERTS``, or ``$XDG_CONFIG_HOME/swamp/team-certs``
(``~/.config/swamp/team-certs``)::

    ca.pem          the CA's certificate: every party needs it
    ca-key.pem      the CA's key (0600): only where certificates are issued
    NAME.pem        a party's certificate
    NAME-key.pem    its key (0600): only on that party's machine

Keys are EC P-256; the folder is made 0700 and keys are created 0600
(whatever the umask), never overwritten in place."""

from __future__ import annotations

import datetime as dt
import os
import re
from pathlib import Path

from swamp.errors import ConflictError, NotFoundError, UsageError

CA_NAME = "ca"
#: days a CA and a party's certificate are valid, unless told otherwise
CA_DAYS = 3650
CERT_DAYS = 365
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
_TEAM = "swamp team"


def default_dir() -> Path:
    """Where the team's certificates are when no folder is given."""
    given = os.environ.get("SWAMP_TEAM_CERTS")
    if given:
        return Path(given).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "swamp" / "team-certs"


def cert_path(folder: Path, name: str) -> Path:
    return Path(folder) / f"{name}.pem"


def key_path(folder: Path, name: str) -> Path:
    return Path(folder) / f"{name}-key.pem"


def check_name(name: str) -> str:
    if not _NAME_RE.match(name or "") or name == CA_NAME or name.endswith("-key"):
        raise UsageError(f"{name!r} is not a certificate name swamp takes",
                         hint="letters, digits, '_', '.', '-' (at most 63; not 'ca', not ending in '-key'); "
                              "for example the worker's --name")
    return name


def create_ca(folder: Path, *, days: int = CA_DAYS) -> dict:
    """Make the team's CA in ``folder``; refused when it has one."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    folder = _folder(folder)
    if cert_path(folder, CA_NAME).exists() or key_path(folder, CA_NAME).exists():
        raise ConflictError(f"{folder} already has a team CA",
                            hint="issue certificates with it ('swamp worker cert issue NAME'), or give "
                                 "another folder (--dir)")
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, _TEAM),
                         x509.NameAttribute(NameOID.COMMON_NAME, "swamp team CA")])
    now = _now()
    ski = x509.SubjectKeyIdentifier.from_public_key(key.public_key())
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=days))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                         crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(ski, critical=False)
            .sign(key, hashes.SHA256()))
    _write_key(key_path(folder, CA_NAME), key)
    _write_cert(cert_path(folder, CA_NAME), cert)
    return _describe(CA_NAME, cert, folder, cert)


def issue(folder: Path, name: str, *, days: int = CERT_DAYS, replace: bool = False) -> dict:
    """A certificate for the party ``name`` (a worker, the scheduler, a
    dispatching machine), signed by the team's CA in ``folder``."""
    check_name(name)
    folder = _folder(folder)
    ca_cert, ca_key = _load_ca(folder)
    cert_file, key_file = cert_path(folder, name), key_path(folder, name)
    if (cert_file.exists() or key_file.exists()) and not replace:
        raise ConflictError(f"{folder} already has a certificate {name!r}",
                            hint="pass --replace to issue a new one (the old one stays valid until it expires)")
    cert, key = _sign(ca_cert, ca_key, name, days)
    for path in (cert_file, key_file):
        path.unlink(missing_ok=True)
    _write_key(key_file, key)
    _write_cert(cert_file, cert)
    return _describe(name, cert, folder, ca_cert)


def issue_pems(folder: Path, name: str, *, days: int = CERT_DAYS) -> dict:
    """A certificate for ``name`` signed by the team's CA in ``folder``,
    returned as PEM text and written nowhere: what an enrolment token seals
    for the machine that redeems it (``swamp worker token create``).
    ``{"name", "ca", "certificate", "key", "caSha256", "sha256"}``."""
    from cryptography.hazmat.primitives import hashes, serialization

    check_name(name)
    ca_cert, ca_key = _load_ca(Path(folder).expanduser())
    cert, key = _sign(ca_cert, ca_key, name, days)
    pem = serialization.Encoding.PEM
    return {"name": name, "ca": ca_cert.public_bytes(pem).decode(), "certificate": cert.public_bytes(pem).decode(),
            "key": key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                     serialization.NoEncryption()).decode(),
            "caSha256": ca_cert.fingerprint(hashes.SHA256()).hex(), "sha256": cert.fingerprint(hashes.SHA256()).hex()}


def ca_fingerprint(folder: Path, *, with_key: bool = False) -> str:
    """The SHA-256 of the team CA's certificate in ``folder``; with
    ``with_key``, only where its key is too (the CA holder's folder)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes

    folder = Path(folder).expanduser()
    if with_key:
        cert, _ = _load_ca(folder)
    elif cert_path(folder, CA_NAME).exists():
        cert = x509.load_pem_x509_certificate(cert_path(folder, CA_NAME).read_bytes())
    else:
        raise NotFoundError(f"no team CA certificate in {folder}",
                            hint="create one with 'swamp worker ca create', or give its folder")
    return cert.fingerprint(hashes.SHA256()).hex()


def cert_sha256(folder: Path, name: str) -> str | None:
    """The SHA-256 of the certificate ``name`` in ``folder``, when both it
    and its key are there (None otherwise)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes

    path = cert_path(Path(folder).expanduser(), name)
    if not path.exists() or not key_path(Path(folder).expanduser(), name).exists():
        return None
    return x509.load_pem_x509_certificate(path.read_bytes()).fingerprint(hashes.SHA256()).hex()


def install(folder: Path, pems: dict, *, replace: bool = False) -> dict:
    """Write a party's certificate and key (from ``issue_pems``, after an
    enrolment) into this machine's folder, and the CA's certificate when the
    folder has none. Refused when the certificate is not signed by that CA,
    or when the folder already trusts another CA: a bundle must never
    swap the root this machine trusts."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    name = check_name(pems["name"])
    folder = _folder(folder)
    ca_cert = x509.load_pem_x509_certificate(pems["ca"].encode())
    cert = x509.load_pem_x509_certificate(pems["certificate"].encode())
    key = serialization.load_pem_private_key(pems["key"].encode(), password=None)
    try:
        cert.verify_directly_issued_by(ca_cert)
    except Exception:  # noqa: BLE001 - any failure: not signed by that CA
        raise ConflictError(f"the certificate {name!r} is not signed by the CA it came with") from None
    ca_file = cert_path(folder, CA_NAME)
    if ca_file.exists() and x509.load_pem_x509_certificate(ca_file.read_bytes()) != ca_cert:
        raise ConflictError(f"{folder} already trusts another team CA than the one that signed {name!r}",
                            hint="enrol into an empty folder (--team-certs DIR), or remove the old ca.pem "
                                 "if that team is gone")
    cert_file, key_file = cert_path(folder, name), key_path(folder, name)
    if (cert_file.exists() or key_file.exists()) and not replace:
        raise ConflictError(f"{folder} already has a certificate {name!r}",
                            hint="enrol under another name, or remove the old certificate first")
    for path in (cert_file, key_file):
        path.unlink(missing_ok=True)
    _write_key(key_file, key)
    _write_cert(cert_file, cert)
    if not ca_file.exists():
        _write_cert(ca_file, ca_cert)
    return _describe(name, cert, folder, ca_cert)


def _sign(ca_cert, ca_key, name: str, days: int):
    """(certificate, key) of a new party ``name``, signed by the CA."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    now = _now()
    builder = (x509.CertificateBuilder()
               .subject_name(x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, _TEAM),
                                        x509.NameAttribute(NameOID.COMMON_NAME, name)]))
               .issuer_name(ca_cert.subject).public_key(key.public_key())
               .serial_number(x509.random_serial_number())
               .not_valid_before(now - dt.timedelta(minutes=5))
               .not_valid_after(min(now + dt.timedelta(days=days), ca_cert.not_valid_after_utc))
               .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
               # each party both listens (scheduler, worker) and connects: server and client auth
               .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH,
                                                     ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
               .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
               .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                              critical=False))
    if re.match(r"^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$", name):
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
    return builder.sign(ca_key, hashes.SHA256()), key


def list_certs(folder: Path) -> list[dict]:
    """Every certificate in ``folder``, the CA's first: its name, validity,
    whether the team CA signed it and whether its key is here."""
    from cryptography import x509

    folder = Path(folder)
    if not cert_path(folder, CA_NAME).exists():
        raise NotFoundError(f"no team CA in {folder}",
                            hint="create one with 'swamp worker ca create', or give its folder (--dir)")
    ca_cert = x509.load_pem_x509_certificate(cert_path(folder, CA_NAME).read_bytes())
    rows = [_describe(CA_NAME, ca_cert, folder, ca_cert)]
    for path in sorted(folder.glob("*.pem")):
        name = path.name[: -len(".pem")]
        if name == CA_NAME or name.endswith("-key"):
            continue
        try:
            cert = x509.load_pem_x509_certificate(path.read_bytes())
        except ValueError:
            continue  # not a certificate: not ours
        rows.append(_describe(name, cert, folder, ca_cert))
    return rows


def party_files(folder: Path, name: str) -> tuple[Path, Path, Path]:
    """(CA certificate, certificate, key) a process presents as ``name``;
    a clear error when one is missing or its key is readable by others."""
    folder = Path(folder)
    ca, cert, key = cert_path(folder, CA_NAME), cert_path(folder, name), key_path(folder, name)
    if not ca.exists():
        raise NotFoundError(f"no team CA certificate ({ca})",
                            hint="create the team's CA with 'swamp worker ca create', or copy its ca.pem here "
                                 "(--team-certs DIR or $SWAMP_TEAM_CERTS say where; docs/workers.md)")
    if not cert.exists() or not key.exists():
        raise NotFoundError(f"no certificate {name!r} in {folder} ({cert.name} and {key.name})",
                            hint=f"issue it where the team CA is, with 'swamp worker cert issue {name}', and "
                                 f"copy ca.pem, {cert.name} and {key.name} here; or choose another with "
                                 "--cert-name NAME")
    if key.stat().st_mode & 0o077:
        raise ConflictError(f"{key} can be read by other users of this machine",
                            hint=f"chmod 600 {key}")
    return ca, cert, key


# ------------------------------------------------------------------ helpers
def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0)


def _folder(folder: Path) -> Path:
    """The folder keys are written to, made 0700; refused inside a git
    checkout unless git ignores it (a key there would be one commit away
    from everyone who clones the repository)."""
    folder = Path(folder).expanduser().absolute()
    _not_tracked(folder)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return folder


def _not_tracked(folder: Path) -> None:
    import subprocess

    checkout = next((p for p in (folder, *folder.parents) if (p / ".git").exists()), None)
    if checkout is None:
        return
    probe = folder / key_path(folder, CA_NAME).name  # what git would say of a key written there
    try:
        ignored = subprocess.run(["git", "-C", str(checkout), "check-ignore", "-q", str(probe)],
                                 capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        ignored = False  # cannot ask git: assume the worst
    if not ignored:
        raise ConflictError(f"{folder} is inside the git checkout {checkout} and git does not ignore it: "
                            "a key written there could be committed",
                            hint="keep the team's certificates outside checkouts (the default is "
                                 "~/.config/swamp/team-certs), or add the folder to .gitignore")


def _load_ca(folder: Path):
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    cert_file, key_file = cert_path(folder, CA_NAME), key_path(folder, CA_NAME)
    if not key_file.exists() or not cert_file.exists():
        raise NotFoundError(f"no team CA (with its key) in {folder}",
                            hint="create one with 'swamp worker ca create', or run this where it is (--dir)")
    cert = x509.load_pem_x509_certificate(cert_file.read_bytes())
    key = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
    return cert, key


def _write_key(path: Path, key) -> None:
    from cryptography.hazmat.primitives import serialization

    data = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # never a moment readable by others
    try:
        os.fchmod(fd, 0o600)  # the umask can only take bits away; this says it outright
        os.write(fd, data)
    finally:
        os.close(fd)


def _write_cert(path: Path, cert) -> None:
    from cryptography.hazmat.primitives import serialization

    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def _describe(name: str, cert, folder: Path, ca_cert) -> dict:
    from cryptography.hazmat.primitives import hashes

    try:
        cert.verify_directly_issued_by(ca_cert)
        signed = True
    except Exception:  # noqa: BLE001 - any failure: not signed by this CA
        signed = False
    not_after = cert.not_valid_after_utc
    return {"name": name, "certificate": str(cert_path(folder, name)),
            "key": str(key_path(folder, name)) if key_path(folder, name).exists() else None,
            "notAfter": not_after.isoformat().replace("+00:00", "Z"), "expired": not_after <= _now(),
            "signedByTeamCa": signed, "sha256": cert.fingerprint(hashes.SHA256()).hex()}
