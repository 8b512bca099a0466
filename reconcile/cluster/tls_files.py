"""Kubeconfig settings onto the client's Configuration (the pool it builds reads them).

Inline client certificates and keys must reach OpenSSL as files: they are written once, owner
only, into a private directory removed when the process ends (as the kubernetes client does
with its own temporary files).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from typing import TYPE_CHECKING

from reconcile.cluster.kubeconfig_files import Settings

if TYPE_CHECKING:
    from kubernetes.client.configuration import Configuration

_private_directory: list[str] = []


def apply_settings(configuration: Configuration, settings: Settings) -> None:
    configuration.host = settings.server
    configuration.verify_ssl = not settings.insecure
    configuration.ssl_ca_cert = settings.ca_file
    configuration.ca_cert_data = settings.ca_data
    configuration.tls_server_name = settings.tls_server_name
    if settings.proxy:
        configuration.proxy = settings.proxy
    configuration.cert_file = settings.client_cert_file or _written(
        settings.client_cert_data, "client.crt"
    )
    configuration.key_file = settings.client_key_file or _written(
        settings.client_key_data, "client.key"
    )
    if settings.token:
        configuration.api_key["BearerToken"] = f"Bearer {settings.token}"
    elif settings.basic_auth:
        import urllib3

        user, password = settings.basic_auth
        header = urllib3.util.make_headers(basic_auth=f"{user}:{password}")
        configuration.api_key["BearerToken"] = header["authorization"]


def _written(content: bytes | None, name: str) -> str | None:
    if content is None:
        return None
    if not _private_directory:
        directory = tempfile.mkdtemp(prefix="reconcile-tls-")  # mode 0700
        atexit.register(shutil.rmtree, directory, ignore_errors=True)
        _private_directory.append(directory)
    path = os.path.join(_private_directory[0], name)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "wb") as stream:
        stream.write(content)
    return path
