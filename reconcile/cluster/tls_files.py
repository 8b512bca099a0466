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

from reconcile.cluster.kubeconfig_files import KubeconfigError, Settings
from reconcile.secret_values import remember_credential

if TYPE_CHECKING:
    from kubernetes.client.configuration import Configuration

_private_directory: list[str] = []


def apply_settings(configuration: Configuration, settings: Settings) -> None:
    for secret in (settings.token, settings.basic_auth and settings.basic_auth[1]):
        if secret:
            remember_credential(secret)  # scrubbed from every error, log and report
    configuration.host = settings.server
    configuration.verify_ssl = not settings.insecure
    configuration.ssl_ca_cert = settings.ca_file
    configuration.ca_cert_data = settings.ca_data
    configuration.tls_server_name = settings.tls_server_name
    if settings.proxy:
        configuration.proxy = checked_proxy(settings.proxy)
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


def checked_proxy(url: str) -> str:
    """`proxy-url` as the client's pool can use it, or a KubeconfigError naming the field
    (its password never shown)."""
    import urllib3

    try:
        parsed = urllib3.util.parse_url(url)
    except ValueError:  # urllib3's LocationParseError
        parsed = None
    if parsed is not None and parsed.auth:
        remember_credential(parsed.auth.partition(":")[2])
    if parsed is None or parsed.scheme not in ("http", "https") or not parsed.host:
        shown = url.rpartition("@")[2] if "@" in url else url
        raise KubeconfigError(
            f"proxy-url: {shown!r} is not an http:// or https:// proxy URL "
            "(SOCKS proxies are not supported)"
        )
    return url


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
