"""Vault and secret key names. Both become path segments, so they are
checked before anything is read or written."""

from __future__ import annotations

import re

from swamp.errors import ValidationError
from swamp.util.names import check_name

# Key names are wider than other names: secrets are often named like the
# environment variables they feed (AWS_SECRET_ACCESS_KEY, api.token). No
# slash, no NUL, no leading dot, and never "..".
KEY_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
KEY_MAX = 128


def check_vault_name(name: str) -> str:
    return check_name(name, "vault name")


def check_key_name(key: str) -> str:
    if not isinstance(key, str) or not KEY_RE.match(key) or len(key) > KEY_MAX or ".." in key:
        raise ValidationError(
            f"invalid secret key {key!r}",
            hint=f"a key matches {KEY_RE.pattern}, has at most {KEY_MAX} characters and no '..'",
        )
    return key
