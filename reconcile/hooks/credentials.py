"""The TLS and authentication settings of webhooks, resolved at run time: the Secrets and
ConfigMaps they name are read once per run (through the reader the runner gives: the cluster,
or the seeded objects with --local), their values remembered by the secret scrubber, PEM files
written into a private directory of the run's own (removed at the end). Nothing read here ever
appears in a message: an error names the object, the key and the spec field."""

from __future__ import annotations

import base64
import binascii
import threading
from collections.abc import Callable
from dataclasses import field
from typing import Any

from reconcile.objects.secrets import fold_string_data
from reconcile.records import dataclass
from reconcile.secret_files import SecretFiles
from reconcile.secret_values import remember_credential
from reconcile.specs.hooks import KeyRef, WebhookSecurity

# Reads an object: (kind "Secret" or "ConfigMap", namespace, name) -> the object, or None when
# there is none. May raise an exception whose text says why it could not be read.
ObjectReader = Callable[[str, str, str], dict[str, Any] | None]


class CredentialError(Exception):
    """A setting that cannot be resolved; the message names what, never a value."""


@dataclass(frozen=True)
class ResolvedSecurity:
    """What a request needs: headers to add, the CA file to verify against (None: the
    defaults), the client certificate and key files (None: none)."""

    headers: dict[str, str] = field(default_factory=dict)
    ca_file: str | None = None
    client_cert: tuple[str, str] | None = None


class Credentials:
    """Thread-safe; one per run."""

    def __init__(self, read: ObjectReader | None = None) -> None:
        self._read = read
        self._lock = threading.Lock()
        self._objects: dict[tuple[str, str, str], dict[str, Any] | None] = {}
        self._resolved: dict[WebhookSecurity, ResolvedSecurity] = {}
        self._files = SecretFiles()

    def resolve(self, security: WebhookSecurity) -> ResolvedSecurity:
        """The settings of `security`; CredentialError naming what is missing."""
        if security.empty:
            return ResolvedSecurity()
        with self._lock:
            found = self._resolved.get(security)
            if found is None:
                found = self._resolved[security] = self._resolve(security)
            return found

    def close(self) -> None:
        with self._lock:
            self._files.close()
            self._resolved.clear()
            self._objects.clear()

    def _resolve(self, security: WebhookSecurity) -> ResolvedSecurity:
        headers: dict[str, str] = {}
        if security.auth_token is not None:
            token = self._value(security.auth_token).decode("utf-8", "replace").strip()
            headers["Authorization"] = f"{security.auth_scheme} {token}"
        if security.basic_username is not None and security.basic_password is not None:
            user = self._value(security.basic_username)
            password = self._value(security.basic_password)
            encoded = base64.b64encode(user + b":" + password).decode("ascii")
            remember_credential(encoded)
            headers["Authorization"] = f"Basic {encoded}"
        ca_file = None
        if security.ca_inline is not None:
            ca_file = self._file(security.ca_inline.encode())
        elif security.ca_ref is not None:
            ca_file = self._file(self._value(security.ca_ref))
        client = None
        if security.client_cert is not None and security.client_key is not None:
            client = (
                self._file(self._value(security.client_cert)),
                self._file(self._value(security.client_key)),
            )
        return ResolvedSecurity(headers, ca_file, client)

    def _value(self, ref: KeyRef) -> bytes:
        obj = self._object(ref)
        if obj is None:
            raise CredentialError(f"{ref.field}: {ref.kind} {ref.namespace}/{ref.name} not found")
        value = _key_value(obj, ref)
        if value is None:
            raise CredentialError(
                f"{ref.field}: {ref.kind} {ref.namespace}/{ref.name} has no key {ref.key!r}"
            )
        remember_credential(value.decode("utf-8", "replace"))
        return value

    def _object(self, ref: KeyRef) -> dict[str, Any] | None:
        key = (ref.kind, ref.namespace, ref.name)
        if key not in self._objects:
            if self._read is None:
                raise CredentialError(f"{ref.field}: no cluster to read {ref.kind}s from")
            try:
                self._objects[key] = self._read(*key)
            except Exception as exc:  # the reader's own error (forbidden, unreachable, ...)
                raise CredentialError(
                    f"{ref.field}: {ref.kind} {ref.namespace}/{ref.name} cannot be read: {exc}"
                ) from None
        return self._objects[key]

    def _file(self, content: bytes) -> str:
        return self._files.path_of(content, "webhook.pem")


def _key_value(obj: dict[str, Any], ref: KeyRef) -> bytes | None:
    """A Secret's key as the API server stores it (`stringData` folded into `data`); a
    ConfigMap's `data`, or else its `binaryData`."""
    if ref.kind == "Secret":
        encoded = (fold_string_data(obj).get("data") or {}).get(ref.key)
    else:
        text = (obj.get("data") or {}).get(ref.key)
        if isinstance(text, str):
            return text.encode()
        encoded = (obj.get("binaryData") or {}).get(ref.key)
    if not isinstance(encoded, str):
        return None
    try:
        return base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        return None
