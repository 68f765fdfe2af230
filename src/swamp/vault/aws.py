"""The aws_secrets_manager vault: secrets kept in AWS Secrets Manager, read
and written through its API (boto3, the ``aws`` extra).

Key KEY of a vault is the secret named ``<prefix><KEY>`` (the prefix is
``swamp/<vault>/`` unless the config says otherwise); its value is the
secret's SecretString. The key's metadata (who put it, notes, the length
class; never the value) is a JSON document in the secret's Description.
Credentials come from the standard AWS chain (environment, profile,
instance role), never from the vault config, which is in git.

A delete schedules the secret's deletion with a recovery window (7 days
unless ``recovery_window_days`` says otherwise; 0 deletes at once); a put
to a key whose secret is scheduled for deletion restores it first."""

from __future__ import annotations

import json
from pathlib import Path

from swamp.errors import AwsVaultError, NotFoundError, ValidationError
from swamp.vault.names import KEY_RE, check_key_name, check_vault_name
from swamp.vault.types import Setting, VaultType

TYPE = "aws_secrets_manager"
#: AWS limits a secret's Description to this many characters
DESCRIPTION_MAX = 2048


class AwsSecretsManagerVault:
    def __init__(self, name: str, settings: dict):
        self.name = check_vault_name(name)
        self.settings = settings
        self.prefix = settings.get("prefix") or f"swamp/{name}/"
        self._client = None

    # ------------------------------------------------------------ contract
    def create(self) -> None:
        """Nothing to prepare: secrets are created on their first put."""

    def check(self) -> None:
        self._call("list_secrets", MaxResults=1)

    def location(self) -> str:
        region = self.settings.get("region") or "the default region"
        where = f" at {self.settings['endpoint_url']}" if self.settings.get("endpoint_url") else ""
        return f"AWS Secrets Manager in {region}{where}, secrets named {self.prefix}KEY"

    def put(self, key: str, value: str) -> bool:
        secret_id = self._id(key)
        described = self._describe(key)
        if described is None:
            self._call("create_secret", Name=secret_id, SecretString=value,
                       Tags=[{"Key": "swamp:vault", "Value": self.name}])
            return False
        if described.get("DeletedDate"):
            self._call("restore_secret", SecretId=secret_id)
            self._call("put_secret_value", SecretId=secret_id, SecretString=value)
            return False
        self._call("put_secret_value", SecretId=secret_id, SecretString=value)
        return True

    def get(self, key: str) -> str:
        try:
            out = self._call("get_secret_value", SecretId=self._id(key))
        except _Missing:
            raise self._not_found(key) from None
        if "SecretString" not in out:
            raise AwsVaultError(f"secret {self._id(key)!r} holds binary data, not a string",
                                hint="swamp vaults keep strings; store it base64-encoded")
        return out["SecretString"]

    def exists(self, key: str) -> bool:
        described = self._describe(key)
        return described is not None and not described.get("DeletedDate")

    def list_keys(self) -> list[str]:
        keys, token = [], None
        while True:
            kwargs = {"Filters": [{"Key": "name", "Values": [self.prefix]}], "MaxResults": 100}
            if token:
                kwargs["NextToken"] = token
            out = self._call("list_secrets", **kwargs)
            for s in out.get("SecretList", []):
                name = s.get("Name", "")
                if name.startswith(self.prefix) and not s.get("DeletedDate"):
                    key = name[len(self.prefix):]
                    if KEY_RE.match(key) and ".." not in key:
                        keys.append(key)
            token = out.get("NextToken")
            if not token:
                return sorted(set(keys))

    def delete(self, key: str) -> None:
        if not self.exists(key):
            raise self._not_found(key)
        days = int(self.settings.get("recovery_window_days") or 0)
        kwargs = {"ForceDeleteWithoutRecovery": True} if days == 0 else {"RecoveryWindowInDays": days}
        self._call("delete_secret", SecretId=self._id(key), **kwargs)

    def read_meta(self, key: str) -> dict:
        described = self._describe(key)
        if described is None or described.get("DeletedDate"):
            raise self._not_found(key)
        try:
            meta = json.loads(described.get("Description") or "{}")
        except ValueError:
            meta = {"description": described.get("Description")}
        if not isinstance(meta, dict):
            meta = {}
        for field, aws_field in (("createdAt", "CreatedDate"), ("updatedAt", "LastChangedDate")):
            if field not in meta and described.get(aws_field) is not None:
                meta[field] = described[aws_field].isoformat()
        return meta

    def write_meta(self, key: str, meta: dict) -> None:
        text = json.dumps(meta, sort_keys=True, separators=(",", ":"))
        if len(text) > DESCRIPTION_MAX:
            raise ValidationError(f"the metadata of {key!r} would exceed the {DESCRIPTION_MAX} characters "
                                  "AWS allows in a secret's description", hint="shorten or remove a note")
        self._call("update_secret", SecretId=self._id(key), Description=text)

    # ------------------------------------------------------------ helpers
    def _id(self, key: str) -> str:
        return self.prefix + check_key_name(key)

    def _not_found(self, key: str) -> NotFoundError:
        return NotFoundError(f"vault {self.name!r} has no secret {key!r}", hint=f"swamp vault put {self.name} {key}")

    def _describe(self, key: str) -> dict | None:
        try:
            return self._call("describe_secret", SecretId=self._id(key))
        except _Missing:
            return None

    def client(self):
        if self._client is None:
            try:
                import boto3
                from botocore.config import Config
            except ImportError:
                raise AwsVaultError(f"the {TYPE} vault type needs boto3, which is not installed",
                                    hint="pip install 'swamp[aws]'") from None
            kwargs = {"config": Config(retries={"max_attempts": 3, "mode": "standard"},
                                       connect_timeout=5, read_timeout=30)}
            if self.settings.get("region"):
                kwargs["region_name"] = self.settings["region"]
            if self.settings.get("endpoint_url"):
                kwargs["endpoint_url"] = self.settings["endpoint_url"]
            try:
                session = boto3.session.Session(profile_name=self.settings.get("profile") or None)
                self._client = session.client("secretsmanager", **kwargs)
            except Exception as e:
                raise self._error(e, "connect") from None
        return self._client

    def _call(self, op: str, **kwargs):
        client = self.client()
        try:
            return getattr(client, op)(**kwargs)
        except Exception as e:
            code = _error_code(e)
            if code == "ResourceNotFoundException":
                raise _Missing() from None
            raise self._error(e, op) from None

    def _error(self, e: Exception, op: str) -> AwsVaultError:
        code = _error_code(e)
        name = type(e).__name__
        if name in ("NoCredentialsError", "PartialCredentialsError", "ProfileNotFound"):
            return AwsVaultError(f"vault {self.name!r}: no usable AWS credentials ({name})",
                                 hint="set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE")
        if name == "NoRegionError":
            return AwsVaultError(f"vault {self.name!r}: no AWS region",
                                 hint=f"set AWS_REGION, or 'region' in the vault config (swamp vault edit {self.name})")
        if name in ("EndpointConnectionError", "ConnectTimeoutError", "ReadTimeoutError", "ConnectionClosedError"):
            return AwsVaultError(f"vault {self.name!r}: cannot reach AWS Secrets Manager ({name})",
                                 hint="check the network, and 'endpoint_url' and 'region' in the vault config")
        if code in ("AccessDeniedException", "UnrecognizedClientException", "InvalidSignatureException",
                    "ExpiredTokenException"):
            return AwsVaultError(f"vault {self.name!r}: AWS refused {op} ({code})",
                                 hint="the credentials lack secretsmanager permissions on "
                                      f"{self.prefix}*, or are wrong or expired")
        message = _error_message(e)
        return AwsVaultError(f"vault {self.name!r}: AWS Secrets Manager {op} failed: {code or name}"
                             + (f": {message}" if message else ""))


class _Missing(Exception):
    pass


def _error_code(e: Exception) -> str | None:
    response = getattr(e, "response", None)
    if isinstance(response, dict):
        return (response.get("Error") or {}).get("Code")
    return None


def _error_message(e: Exception) -> str:
    response = getattr(e, "response", None)
    if isinstance(response, dict):
        return str((response.get("Error") or {}).get("Message") or "")
    return ""


class AwsSecretsManagerType(VaultType):
    name = TYPE
    description = "Secrets in AWS Secrets Manager, through its API (needs boto3: the 'aws' extra)"
    settings = (
        Setting("region", "the AWS region (default: AWS_REGION or the profile's)"),
        Setting("prefix", "the start of every secret's name (default: swamp/<vault>/)"),
        Setting("endpoint_url", "another endpoint (a VPC endpoint, or a local emulator)"),
        Setting("profile", "the AWS profile to use (default: the standard chain)"),
        Setting("recovery_window_days", "days a deleted secret can be restored (7-30, or 0: at once)",
                default="7"),
    )

    def check_settings(self, settings: dict) -> dict:
        out = super().check_settings(settings)
        days = out.get("recovery_window_days", "7")
        if not days.isdigit() or not (int(days) == 0 or 7 <= int(days) <= 30):
            raise ValidationError(f"recovery_window_days must be 0 or 7 to 30, not {days!r}")
        prefix = out.get("prefix")
        if prefix is not None and (not prefix or not all(c.isalnum() or c in "/_+=.@-" for c in prefix)):
            raise ValidationError(f"prefix {prefix!r} has characters AWS does not allow in a secret name",
                                  hint="letters, digits and /_+=.@-")
        return out

    def open(self, name: str, settings: dict, secrets_dir: Path) -> AwsSecretsManagerVault:
        return AwsSecretsManagerVault(name, settings)


VAULT_TYPE = AwsSecretsManagerType()
