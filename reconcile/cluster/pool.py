"""The live backend's connection pool, built from the client's Configuration as the client's
own (`kubernetes.client.rest`) builds it, without loading the rest of that module.

urllib3 reads the CA, the client certificate and key when it opens each connection, as it
always did for the client: a bad, encrypted or endless file is then the first request's error,
within the run's budget and its signals, named in its report. One thing differs: with
`insecure-skip-tls-verify` (and no client certificate) every connection shares one context
that verifies nothing, rather than a new one per connection into which urllib3 would load the
system's whole certificate store (tens of milliseconds of CPU a connection, for a store it then
does not use).
"""

from __future__ import annotations

import ssl
from typing import TYPE_CHECKING, Any

import urllib3
from urllib3.util.ssl_ import create_urllib3_context

if TYPE_CHECKING:
    from kubernetes.client.configuration import Configuration


def connection_pool(configuration: Configuration, maxsize: int) -> urllib3.PoolManager:
    """A pool of up to `maxsize` connections per host, through the kubeconfig's proxy (or
    the environment's, as the client reads it) unless its no-proxy list names the server."""
    verify = bool(configuration.verify_ssl)
    args: dict[str, Any] = {
        "maxsize": maxsize,
        # retries are the caller's, bounded by its budget: urllib3's would sleep out any
        # Retry-After
        "retries": False,
        "cert_reqs": ssl.CERT_REQUIRED if verify else ssl.CERT_NONE,
        "ca_certs": configuration.ssl_ca_cert,
        "ca_cert_data": configuration.ca_cert_data,
        "cert_file": configuration.cert_file,
        "key_file": configuration.key_file,
    }
    if not verify and not configuration.cert_file:
        # (a context with a client certificate is left to urllib3, which loads it into each
        # connection's own: loading it into a shared one as connections open would race)
        args["ssl_context"] = create_urllib3_context(cert_reqs=ssl.CERT_NONE)
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
