"""The one conversion the API server makes to every Secret: `stringData` folded into `data`."""

from __future__ import annotations

import base64
import binascii
import copy
import json
from typing import Any

from reconcile.objects.meta import Obj


def is_secret(obj: Any) -> bool:
    """True for a core v1 Secret (`kind: Secret`, `apiVersion: v1`)."""
    return isinstance(obj, dict) and obj.get("kind") == "Secret" and obj.get("apiVersion") == "v1"


def text_may_hold_secret(text: bytes | bytearray) -> bool:
    """Whether the JSON text may decode to something holding a Secret: its `kind` is spelled
    `Secret` in the text, or written with `\\u` escapes (JSON's only escapes that make
    letters). False lets a caller skip walking the decoded value for Secrets."""
    return b"Secret" in text or b"\\u" in text


def fold_string_data(obj: Obj) -> Obj:
    """A copy of a Secret with `stringData` base64-encoded into `data` (stringData wins on a
    shared key) and removed, as the API server stores it; other objects are returned as is.

    The engine compares desired children with observed ones in this form, so a hook may use
    `stringData` without every pass seeing a difference."""
    if not is_secret(obj) or not isinstance(obj.get("stringData"), dict):
        return obj
    folded = copy.deepcopy(obj)
    string_data = folded.pop("stringData")
    data = dict(folded.get("data") or {})
    for key, value in string_data.items():
        data[key] = base64.b64encode(str(value).encode()).decode()
    folded["data"] = data
    return folded


def undecodable_data(obj: Obj) -> str | None:
    """The API server's refusal of a Secret whose `data` holds a value that is not base64
    (a 400, worded as kube-apiserver words it, raw bytes quoted), or None."""
    data = obj.get("data") if is_secret(obj) else None
    if not isinstance(data, dict):
        return None
    for key, value in data.items():
        text = value if isinstance(value, str) else json.dumps(value)
        try:
            base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            position = next((i for i, c in enumerate(text) if c not in _BASE64), len(text))
            return (
                'Secret in version "v1" cannot be handled as a Secret: v1.Secret.Data: decode '
                f"base64: illegal base64 data at input byte {position}, error found in #10 byte "
                f'of ...|"{key}":"{text[:10]}|..., bigger context ...|{{"data":{{"{key}":'
                f'"{text[:40]}|...'
            )
    return None


_BASE64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
