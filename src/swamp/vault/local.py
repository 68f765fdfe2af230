"""The local_encryption vault: AES-256-GCM with a random 32-byte key kept
next to the ciphertexts, never in git.

    .swamp/secrets/local_encryption/<vault>/.key        32 random bytes, 0600
    .swamp/secrets/local_encryption/<vault>/<key>.enc   version, nonce, ciphertext+tag

The additional authenticated data binds each ciphertext to its vault and
key name: a file copied or renamed to another name does not decrypt."""

from __future__ import annotations

import json
import os
from pathlib import Path

from swamp.errors import ConflictError, NotFoundError, VaultError
from swamp.util.atomic import atomic_write, fsync_dir
from swamp.vault.names import KEY_RE, check_key_name, check_vault_name
from swamp.vault.types import VaultType

TYPE = "local_encryption"
FORMAT_VERSION = 1
KEY_FILE = ".key"
KEY_BYTES = 32
SUFFIX = ".enc"
META_SUFFIX = ".meta.json"
NONCE_BYTES = 12
TAG_BYTES = 16
AAD_PREFIX = b"swamp-vault-v1\0"


class LocalEncryptionVault:
    def __init__(self, name: str, secrets_dir: Path):
        self.name = check_vault_name(name)
        self.dir = Path(secrets_dir) / TYPE / name

    @property
    def key_path(self) -> Path:
        return self.dir / KEY_FILE

    def create(self) -> None:
        """Make the directory and the key; an existing key is kept, so the
        secrets already encrypted with it stay readable."""
        secrets_dir = self.dir.parent.parent
        secrets_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        for d in (self.dir.parent, self.dir):
            d.mkdir(mode=0o700, exist_ok=True)
        if not self.key_path.exists():
            atomic_write(self.key_path, os.urandom(KEY_BYTES), mode=0o600)

    def check(self) -> None:
        self._key()

    def location(self) -> str:
        return str(self.dir)

    def put(self, key: str, value: str) -> bool:
        """Store ``value`` under ``key``; True when it replaced a value."""
        path = self._path(key)
        clash = [k for k in self.list_keys() if k.lower() == key.lower() and k != key]
        if clash:
            # Keys become file names, and some file systems ignore case.
            raise ConflictError(f"vault {self.name!r} already has {clash[0]!r}, which differs from {key!r} only in case")
        if not self.key_path.exists():
            self.create()
        nonce = os.urandom(NONCE_BYTES)
        sealed = _aesgcm(self._key()).encrypt(nonce, value.encode("utf-8"), self._aad(key))
        existed = path.exists()
        atomic_write(path, bytes([FORMAT_VERSION]) + nonce + sealed, mode=0o600)
        return existed

    def get(self, key: str) -> str:
        path = self._path(key)
        try:
            blob = path.read_bytes()
        except FileNotFoundError:
            raise NotFoundError(f"vault {self.name!r} has no secret {key!r}",
                                hint=f"swamp vault put {self.name} {key}") from None
        if len(blob) < 1 + NONCE_BYTES + TAG_BYTES or blob[0] != FORMAT_VERSION:
            raise VaultError(f"{path} is not a swamp vault secret (format version {FORMAT_VERSION})")
        from cryptography.exceptions import InvalidTag

        nonce, sealed = blob[1:1 + NONCE_BYTES], blob[1 + NONCE_BYTES:]
        try:
            return _aesgcm(self._key()).decrypt(nonce, sealed, self._aad(key)).decode("utf-8")
        except InvalidTag:
            raise VaultError(
                f"secret {key!r} in vault {self.name!r} does not decrypt",
                hint="it was written under another name or vault, with another key, or was altered",
            ) from None

    def exists(self, key: str) -> bool:
        return self._path(key).is_file()

    def list_keys(self) -> list[str]:
        try:
            names = os.listdir(self.dir)
        except FileNotFoundError:
            return []
        keys = (n[: -len(SUFFIX)] for n in names if n.endswith(SUFFIX))
        return sorted(k for k in keys if KEY_RE.match(k) and ".." not in k)

    def delete(self, key: str) -> None:
        path = self._path(key)
        try:
            path.unlink()
        except FileNotFoundError:
            raise NotFoundError(f"vault {self.name!r} has no secret {key!r}") from None
        try:
            self._meta_path(key).unlink()
        except FileNotFoundError:
            pass
        fsync_dir(self.dir)

    def read_meta(self, key: str) -> dict:
        """Metadata kept beside the ciphertext, in clear (never a value)."""
        try:
            doc = json.loads(self._meta_path(key).read_text())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as e:
            raise VaultError(f"{self._meta_path(key)} is not readable metadata: {e}") from None
        return doc if isinstance(doc, dict) else {}

    def write_meta(self, key: str, meta: dict) -> None:
        atomic_write(self._meta_path(key), json.dumps(meta, indent=2, sort_keys=True) + "\n", mode=0o600)

    def _meta_path(self, key: str) -> Path:
        return self.dir / (check_key_name(key) + META_SUFFIX)

    def _path(self, key: str) -> Path:
        return self.dir / (check_key_name(key) + SUFFIX)

    def _aad(self, key: str) -> bytes:
        return AAD_PREFIX + self.name.encode() + b"\0" + key.encode()

    def _key(self) -> bytes:
        try:
            key = self.key_path.read_bytes()
        except FileNotFoundError:
            raise VaultError(
                f"vault {self.name!r} has no key file at {self.key_path}",
                hint="secrets live on the machine where they were put; put them again here",
            ) from None
        if len(key) != KEY_BYTES:
            raise VaultError(f"{self.key_path} is not a {KEY_BYTES}-byte key")
        return key


class LocalEncryptionType(VaultType):
    name = TYPE
    description = ("AES-256-GCM ciphertexts under .swamp/secrets on this machine, with a random key "
                   "beside them; never in git and never synced")
    settings = ()

    def open(self, name: str, settings: dict, secrets_dir: Path) -> LocalEncryptionVault:
        return LocalEncryptionVault(name, secrets_dir)


VAULT_TYPE = LocalEncryptionType()


def _aesgcm(key: bytes):
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    return AESGCM(key)
