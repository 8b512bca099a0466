"""Kubeconfig settings onto the client's Configuration (the pool it builds reads them).

Inline client certificates and keys reach OpenSSL as paths of anonymous memory files (see
`secret_files`): none is left on a disk, however the process ends.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reconcile.cluster.kubeconfig_files import KubeconfigError, Settings
from reconcile.secret_files import SecretFiles
from reconcile.secret_values import remember_credential

if TYPE_CHECKING:
    from kubernetes.client.configuration import Configuration


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


_FILES = SecretFiles()  # the connection's, for the life of the process


def _written(content: bytes | None, name: str) -> str | None:
    return None if content is None else _FILES.path_of(content, name)
