"""The server and credentials a kubeconfig names, read the way kubectl reads them.

kubectl's rules (client-go's loading rules): files in `$KUBECONFIG` order; for clusters, users
and contexts the first file to name an entry wins, and so does the first file to set
`current-context`; a relative path is relative to the file that holds it. Users that need the
kubernetes client's own machinery (`exec` credential plugins, `auth-provider`) are handed to
it as one merged document with those rules already applied, so every kubeconfig is merged the
same way.

Pure: the documents come in parsed, with the directory each came from.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import field
from pathlib import Path
from typing import Any

from reconcile.records import dataclass

SECTIONS = (("clusters", "cluster"), ("users", "user"), ("contexts", "context"))
# Users whose credentials come from the client's plugins, not from the file itself
CLIENT_AUTH_FIELDS = ("exec", "auth-provider")


class KubeconfigError(ValueError):
    """A kubeconfig that names what it lacks (the caller adds which file set it came from)."""


@dataclass(frozen=True)
class Entry:
    body: Mapping[str, Any]
    directory: Path  # of the file that holds it: relative paths start there


@dataclass
class Merged:
    entries: dict[str, dict[str, Entry]] = field(
        default_factory=lambda: {section: {} for section, _ in SECTIONS}
    )
    current_context: str | None = None


@dataclass(frozen=True)
class Settings:
    """What a connection needs; file paths absolute, inline data decoded."""

    server: str
    insecure: bool = False
    ca_file: str | None = None
    ca_data: str | None = None  # PEM text
    tls_server_name: str | None = None
    proxy: str | None = None
    token: str | None = None
    basic_auth: tuple[str, str] | None = None
    client_cert_file: str | None = None
    client_cert_data: bytes | None = None
    client_key_file: str | None = None
    client_key_data: bytes | None = None


def merge(documents: list[tuple[Path, Any]]) -> Merged:
    """`documents`: each file's parsed content with the directory it came from."""
    merged = Merged()
    for directory, document in documents:
        if not isinstance(document, Mapping):
            raise KubeconfigError("is not a mapping (apiVersion, kind, clusters...)")
        for section, _ in SECTIONS:
            items = document.get(section) or []
            if not isinstance(items, list):
                raise KubeconfigError(f"{section} must be a list")
            for index, item in enumerate(items):
                name = item.get("name") if isinstance(item, Mapping) else None
                if not isinstance(name, str):
                    raise KubeconfigError(f"{section}[{index}].name is missing")
                merged.entries[section].setdefault(name, Entry(item, directory))
        current = document.get("current-context")
        if merged.current_context is None and isinstance(current, str) and current:
            merged.current_context = current
    return merged


def needs_client(merged: Merged, context: str | None) -> bool:
    """Whether the selected user's credentials come from a plugin the client runs."""
    user = _selected(merged, context)[2]
    return user is not None and any(key in user.body["user"] for key in CLIENT_AUTH_FIELDS)


def settings(merged: Merged, context: str | None) -> Settings:
    context_name, named_cluster, named_user = _selected(merged, context)
    cluster = Entry(named_cluster.body["cluster"], named_cluster.directory)
    cluster_body = cluster.body
    server = cluster_body.get("server")
    if not isinstance(server, str) or not server:
        raise KubeconfigError(f"cluster of context {context_name!r} has no server")
    base = _Resolver(cluster)
    found: dict[str, Any] = {
        "server": server.rstrip("/"),
        "insecure": cluster_body.get("insecure-skip-tls-verify") is True,
        "tls_server_name": _text(cluster_body, "tls-server-name"),
        "proxy": _text(cluster_body, "proxy-url"),
    }
    if server.startswith("https"):
        found["ca_file"] = base.path("certificate-authority")
        ca = base.data("certificate-authority-data")
        found["ca_data"] = ca.decode("utf-8", "replace") if ca is not None else None
    if named_user is not None:
        found.update(_credentials(_Resolver(Entry(named_user.body["user"], named_user.directory))))
    return Settings(**found)


def single_document(merged: Merged, context: str | None) -> dict[str, Any]:
    """The selected context as one kubeconfig with absolute paths, for the client's loader."""
    context_name, cluster, user = _selected(merged, context)
    entries = [("clusters", cluster), ("users", user), ("contexts", _context(merged, context))]
    document: dict[str, Any] = {"apiVersion": "v1", "kind": "Config"}
    for section, entry in entries:
        document[section] = [] if entry is None else [_absolute(section, entry)]
    document["current-context"] = context_name
    return document


def _selected(merged: Merged, context: str | None) -> tuple[str, Entry, Entry | None]:
    entry = _context(merged, context)
    name = context or merged.current_context or ""
    body = entry.body.get("context")
    if not isinstance(body, Mapping):
        raise KubeconfigError(f"context {name!r} has no context: cluster and user")
    cluster_name = body.get("cluster")
    cluster = merged.entries["clusters"].get(str(cluster_name))
    if cluster is None or not isinstance(cluster.body.get("cluster"), Mapping):
        raise KubeconfigError(f"context {name!r} names cluster {cluster_name!r}, not defined")
    _check_insecure(str(cluster_name), cluster.body["cluster"])
    user_name = body.get("user")
    user = merged.entries["users"].get(str(user_name)) if user_name else None
    if user is not None and not isinstance(user.body.get("user"), Mapping):
        user = None
    return name, cluster, user


def _context(merged: Merged, context: str | None) -> Entry:
    name = context or merged.current_context
    if not name:
        raise KubeconfigError("no context: set current-context or pass --context")
    entry = merged.entries["contexts"].get(name)
    if entry is None:
        known = ", ".join(sorted(merged.entries["contexts"])) or "none"
        raise KubeconfigError(f"context {name!r} is not defined (contexts: {known})")
    return entry


def _credentials(user: _Resolver) -> dict[str, Any]:
    found: dict[str, Any] = {
        "client_cert_file": user.path("client-certificate"),
        "client_cert_data": user.data("client-certificate-data"),
        "client_key_file": user.path("client-key"),
        "client_key_data": user.data("client-key-data"),
    }
    token = _text(user.body, "token")
    token_file = user.path("tokenFile")
    if token:
        found["token"] = token
    elif token_file:
        found["token"] = _read_token(token_file)
    elif isinstance(user.body.get("username"), str) and isinstance(user.body.get("password"), str):
        found["basic_auth"] = (user.body["username"], user.body["password"])
    return found


def _read_token(path: str) -> str | None:
    try:
        # kubectl trims the file's whitespace: a trailing newline is not part of the token
        return Path(path).read_text(encoding="utf-8").strip() or None
    except OSError as exc:
        raise KubeconfigError(f"tokenFile {path}: {exc.strerror or exc}") from None


class _Resolver:
    """Paths and inline data of one entry: `x-data` wins over `x` as in the client."""

    def __init__(self, entry: Entry) -> None:
        self.body = entry.body
        self._directory = entry.directory

    def path(self, key: str) -> str | None:
        if f"{key}-data" in self.body and key != "tokenFile":
            return None
        value = _text(self.body, key)
        return str(self._directory / Path(value).expanduser()) if value else None

    def data(self, key: str) -> bytes | None:
        value = _text(self.body, key)
        if not value:
            return None
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise KubeconfigError(f"{key} is not base64") from None


def _absolute(section: str, entry: Entry) -> dict[str, Any]:
    body = dict(entry.body)
    if section == "contexts":
        return body
    inner = dict(body[section[:-1]])
    for key in ("certificate-authority", "client-certificate", "client-key", "tokenFile"):
        value = inner.get(key)
        if isinstance(value, str) and value:
            inner[key] = str(entry.directory / Path(value).expanduser())
    plugin = inner.get("exec")
    command = plugin.get("command") if isinstance(plugin, Mapping) else None
    if isinstance(plugin, Mapping) and isinstance(command, str) and "/" in command:
        # a command named by a path runs from beside the kubeconfig, as kubectl runs it; only
        # a bare name is looked up on PATH (never the working directory, which may be a
        # pull request's checkout)
        inner["exec"] = {**plugin, "command": str(entry.directory / Path(command).expanduser())}
    body[section[:-1]] = inner
    return body


def _check_insecure(name: str, cluster: Mapping[str, Any]) -> None:
    """kubectl's refusals, for every user (the client's loader, which runs plugin users,
    would read the string "false" as true): `insecure-skip-tls-verify` is a boolean, and not
    beside a certificate authority."""
    insecure = cluster.get("insecure-skip-tls-verify")
    if insecure is not None and not isinstance(insecure, bool):
        raise KubeconfigError(
            f"cluster {name!r}: insecure-skip-tls-verify must be true or false, not {insecure!r}"
        )
    if insecure and (
        cluster.get("certificate-authority") or cluster.get("certificate-authority-data")
    ):
        raise KubeconfigError(
            f"cluster {name!r}: insecure-skip-tls-verify is not allowed with a "
            "certificate-authority (kubectl refuses the two together)"
        )


def _text(body: Mapping[str, Any], key: str) -> str | None:
    value = body.get(key)
    return value if isinstance(value, str) and value else None
