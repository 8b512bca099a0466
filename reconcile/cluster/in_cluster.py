"""The Pod's service account as a connection (a run as a CronJob, without a kubeconfig).

The token is read again when it is a minute old: the kubelet rotates a projected token
before it expires, and a long run must not keep sending the old one.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from reconcile.cluster.kubeconfig_files import KubeconfigError

if TYPE_CHECKING:
    from kubernetes.client.configuration import Configuration

TOKEN_REREAD_SECONDS = 60.0


def configure(configuration: Configuration, service_account_dir: Path) -> None:
    host = os.environ.get("KUBERNETES_SERVICE_HOST", "")
    port = os.environ.get("KUBERNETES_SERVICE_PORT", "")
    if not host or not port:
        raise KubeconfigError("KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set")
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    ca = service_account_dir / "ca.crt"
    if not ca.is_file():
        raise KubeconfigError(f"{ca}: no such file")
    configuration.host = f"https://{host}:{port}"
    configuration.ssl_ca_cert = str(ca)
    token = _TokenFile(service_account_dir / "token")
    configuration.api_key["BearerToken"] = token.header()
    # the client declares the hook as None in its constructor, the type of its default
    configuration.refresh_api_key_hook = token.refresh  # type: ignore[assignment]


class _TokenFile:
    def __init__(self, path: Path) -> None:
        self._path = path
        self._read_at = 0.0
        self._header = ""

    def header(self) -> str:
        now = time.monotonic()
        if not self._header or now - self._read_at >= TOKEN_REREAD_SECONDS:
            try:
                token = self._path.read_text(encoding="utf-8").strip()
            except OSError as exc:
                if self._header:
                    return self._header  # keep the last one; the server says if it expired
                raise KubeconfigError(f"{self._path}: {exc.strerror or exc}") from None
            if not token:
                raise KubeconfigError(f"{self._path} is empty")
            self._header, self._read_at = f"Bearer {token}", now
        return self._header

    def refresh(self, configuration: Configuration) -> None:
        configuration.api_key["BearerToken"] = self.header()
