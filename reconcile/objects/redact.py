"""Secret redaction: no Secret value ever reaches a report (or a log line that uses this).

Pure and dependency-free apart from the standard library, so any layer can reuse it.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from reconcile.objects.lazy_pattern import on_first_use
from reconcile.objects.secrets import is_secret

REDACTED = "<redacted>"
REDACTED_CHANGED = "<redacted (changed)>"
REDACTED_ADDED = "<redacted (added)>"

# Fields of a core v1 Secret whose values are secret (their keys are not).
SECRET_FIELDS: tuple[str, ...] = ("data", "stringData")

# Annotations that hold a copy of the whole object as JSON (so of its secret values too).
LAST_APPLIED_ANNOTATIONS: tuple[str, ...] = (
    "metacontroller.k8s.io/last-applied-configuration",
    "kubectl.kubernetes.io/last-applied-configuration",
)


def redact(obj: Any) -> Any:
    """A copy of `obj` with every Secret's values replaced by `<redacted>`.

    Works on any JSON-like value: a single object, a List, a hook request or response (Secrets
    nested anywhere are found by `kind: Secret` + `apiVersion: v1`). The keys under `data` and
    `stringData` stay visible; the last-applied annotations of a Secret are redacted the same
    way. Never mutates its argument; values that need no change may be shared with it.
    """
    if isinstance(obj, dict):
        if is_secret(obj):
            return redact_secret(obj)
        return {k: redact(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [redact(v) for v in obj]
    return obj


def redact_secret(obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` taken as a Secret whatever its kind says (e.g. when the resource says so)."""
    out: dict[str, Any] = {}
    for key, value in obj.items():
        if key in SECRET_FIELDS:
            out[key] = _redact_values(value)
        elif key == "metadata" and isinstance(value, dict):
            out[key] = _redact_metadata(value)
        else:
            out[key] = redact(value)
    return out


def redact_secret_pair(
    before: dict[str, Any] | None, after: dict[str, Any] | None
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """Both sides of a change to a Secret, redacted so that a diff still shows WHICH values
    change: in `after`, a value that differs from the same key's value in `before` becomes
    `<redacted (changed)>`, a key `before` lacks `<redacted (added)>`, any other value
    `<redacted>`. (Distinct markers also keep a JSON Patch from pairing unrelated values as a
    `move`, which would claim they are equal.)"""
    red_before = redact_secret(before) if before is not None else None
    red_after = redact_secret(after) if after is not None else None
    if before is None or after is None or red_after is None:
        return red_before, red_after
    for field in SECRET_FIELDS:
        old, new = before.get(field), after.get(field)
        if not isinstance(new, dict):
            if new is not None and new != old:
                red_after[field] = REDACTED_CHANGED
            continue
        old_map = old if isinstance(old, dict) else {}
        marked = red_after[field]
        for key, value in new.items():
            if key not in old_map:
                marked[key] = REDACTED_ADDED
            elif old_map[key] != value:
                marked[key] = REDACTED_CHANGED
    return red_before, red_after


def _redact_values(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): REDACTED for k in value}
    if value is None:
        return None
    return REDACTED


def _redact_metadata(meta: dict[str, Any]) -> dict[str, Any]:
    out = dict(meta)
    annotations = meta.get("annotations")
    if isinstance(annotations, dict):
        out["annotations"] = {
            k: _redact_last_applied(v) if k in LAST_APPLIED_ANNOTATIONS else v
            for k, v in annotations.items()
        }
    return out


def _redact_last_applied(text: Any) -> Any:
    if not isinstance(text, str):
        return REDACTED
    try:
        recorded = json.loads(text)
    except ValueError:
        return REDACTED
    if not isinstance(recorded, dict):
        return REDACTED
    return json.dumps(redact_secret(recorded), separators=(",", ":"), sort_keys=True)


# --- free text (error excerpts, log lines) -----------------------------------------------------

# A `"data": {` or `"stringData": {` opening, then the map's body up to its `}` or the end of the
# excerpt (excerpts are cut anywhere). Plain JSON: the body's strings may hold braces. Inside a
# JSON string (a last-applied annotation quoted in an error), quotes are escaped: `\"`.
_STRING = r'"(?:[^"\\]|\\.)*(?:"|$)'
_PLAIN_MAP = on_first_use(r'("(?:data|stringData)"\s*:\s*\{)((?:' + _STRING + r'|[^{}"])*)(\}|$)')
_PLAIN_ENTRY = on_first_use(r"(" + _STRING + r"\s*:\s*)" + _STRING)
_ESCAPED_MAP = on_first_use(r'(\\+"(?:data|stringData)\\+"\s*:\s*\{)([^{}]*)(\}|$)')
_ESCAPED_ENTRY = on_first_use(r'(\\+"[^"\\]*\\+"\s*:\s*)(\\+")(?:.*?\2(?=\s*[,}]|\s*$)|.*$)')


# The API server's JSON decoder quotes the raw request bytes around an error, e.g.
# `error found in #10 byte of ...|rd":"s3cr3t"}|..., bigger context ...|{"data":{"pa|...`: the
# bytes may be a piece of a Secret's value that no other rule can recognise.
_DECODER_CONTEXT = on_first_use(r"\.\.\.\|.*?\|\.\.\.", re.DOTALL)


# A password in a URL's userinfo (`https://user:password@host`, any scheme): the user stays.
_URL_PASSWORD = on_first_use(r"(\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s/?#@:]*):[^\s/?#@]*@")
# A user alone in an HTTP(S) URL is a token (`https://TOKEN@github.com/...`).
_URL_TOKEN = on_first_use(r"(\bhttps?://)[^\s/?#@:]+@", re.IGNORECASE)


def redact_text(text: str) -> str:
    """`text` with the values of every `data` / `stringData` map written in it as JSON replaced
    by `<redacted>`: for excerpts of hook output, webhook bodies and API errors, whose objects
    cannot be parsed (they are cut, or not quite JSON). ConfigMap data written the same way is
    redacted too: a free-text excerpt cannot tell them apart, so it errs on the safe side. And
    the password of every URL written in it (a webhook's, a Pushgateway's, a repository's)."""
    if "://" in text:
        text = _URL_PASSWORD().sub(rf"\1:{REDACTED}@", text)
        text = _URL_TOKEN().sub(rf"\1{REDACTED}@", text)
    if "...|" in text:
        text = _DECODER_CONTEXT().sub(f"...|{REDACTED}|...", text)
    if "ata" not in text:  # fast path: neither "data" nor "stringData" appears
        return text
    text = _PLAIN_MAP().sub(_redact_plain_map, text)
    return _ESCAPED_MAP().sub(_redact_escaped_map, text)


def _redact_plain_map(match: re.Match[str]) -> str:
    body = _PLAIN_ENTRY().sub(lambda e: f'{e.group(1)}"{REDACTED}"', match.group(2))
    return match.group(1) + body + match.group(3)


def _redact_escaped_map(match: re.Match[str]) -> str:
    body = _ESCAPED_ENTRY().sub(
        lambda e: f"{e.group(1)}{e.group(2)}{REDACTED}{e.group(2)}", match.group(2)
    )
    return match.group(1) + body + match.group(3)


def split_userinfo(url: str) -> tuple[str, str, str]:
    """(`url` without its user and password, the user, the password), both unquoted; `url` as
    it is, with "" and "", when it names no user (or cannot be read: a broken IPv6 literal,
    refused where it is used)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url, "", ""
    if "@" not in parts.netloc:
        return url, "", ""
    userinfo, _, host = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    return urlunsplit(parts._replace(netloc=host)), unquote(user), unquote(password)
