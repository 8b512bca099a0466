"""The live backend's connection pool, built from the client's Configuration with one TLS
context for all its connections.

The client's own pool (`kubernetes.client.rest`) hands urllib3 paths and flags, and urllib3
then builds a context for every new connection: it reads the CA and the client certificate
and key again each time, and, when the kubeconfig names no CA, loads the system's whole
certificate store (tens of milliseconds of CPU a connection, for a pool of twenty). Here they
are read once, when the run connects, so a bad file is named then rather than at the first
request.
"""

from __future__ import annotations

import ssl
from typing import TYPE_CHECKING, Any

import urllib3
from urllib3.util.ssl_ import create_urllib3_context

from reconcile.cluster.kubeconfig_files import KubeconfigError

if TYPE_CHECKING:
    from kubernetes.client.configuration import Configuration


def tls_context(configuration: Configuration) -> ssl.SSLContext:
    """The context every connection to the API server uses: verification as the kubeconfig
    asks (its CA, else the system's store), and its client certificate."""
    verify = bool(configuration.verify_ssl)
    context = create_urllib3_context(cert_reqs=ssl.CERT_REQUIRED if verify else ssl.CERT_NONE)
    if verify:
        ca_file, ca_data = configuration.ssl_ca_cert, configuration.ca_cert_data
        try:
            if ca_file or ca_data:
                context.load_verify_locations(cafile=ca_file or None, cadata=ca_data or None)
            else:
                context.load_default_certs()
        except (ssl.SSLError, OSError, ValueError) as exc:
            reason = _reason(exc)
            raise KubeconfigError(f"certificate-authority: cannot be used: {reason}") from None
    if configuration.cert_file:
        try:
            context.load_cert_chain(configuration.cert_file, configuration.key_file or None)
        except (ssl.SSLError, OSError, ValueError) as exc:
            raise KubeconfigError(
                f"client-certificate/client-key: cannot be used: {_reason(exc)}"
            ) from None
    return context


def connection_pool(configuration: Configuration, maxsize: int) -> urllib3.PoolManager:
    """A pool of up to `maxsize` connections per host, through the kubeconfig's proxy (or
    the environment's, as the client reads it) unless its no-proxy list names the server."""
    args: dict[str, Any] = {
        "maxsize": maxsize,
        # retries are the caller's, bounded by its budget: urllib3's would sleep out any
        # Retry-After
        "retries": False,
    }
    if str(configuration.host).lower().startswith("https:"):  # plain HTTP needs no context
        context = tls_context(configuration)
        args |= {"ssl_context": context, "cert_reqs": context.verify_mode}
    if configuration.assert_hostname is not None:
        args["assert_hostname"] = configuration.assert_hostname
    if configuration.tls_server_name:
        args["server_hostname"] = configuration.tls_server_name
    if configuration.socket_options is not None:
        args["socket_options"] = configuration.socket_options
    if not configuration.proxy:
        return urllib3.PoolManager(**args)
    # The proxy rules are the client's own (no-proxy entries, SOCKS): loaded only when needed.
    from kubernetes.client.rest import is_socks_proxy_url, should_bypass_proxies

    if should_bypass_proxies(configuration.host, configuration.no_proxy or ""):
        return urllib3.PoolManager(**args)
    if is_socks_proxy_url(configuration.proxy):
        from urllib3.contrib.socks import SOCKSProxyManager

        return SOCKSProxyManager(configuration.proxy, headers=configuration.proxy_headers, **args)
    if configuration.proxy_ssl_context is not None:
        args["proxy_ssl_context"] = configuration.proxy_ssl_context
    return urllib3.ProxyManager(
        configuration.proxy, proxy_headers=configuration.proxy_headers, **args
    )


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror and not isinstance(exc, ssl.SSLError):
        return exc.strerror
    return str(exc) or type(exc).__name__
