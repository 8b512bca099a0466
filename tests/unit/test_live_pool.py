"""The live backend's pool: built as the client builds its own (urllib3 reads the CA and the
client certificate when a connection opens, so a bad file is the first request's error, in the
report), but for an insecure server, whose connections share one context that loads no
certificate store."""

from __future__ import annotations

import ssl

import urllib3
from kubernetes.client.configuration import Configuration

from reconcile.cluster.pool import connection_pool


def configuration(**settings: object) -> Configuration:
    config = Configuration()
    config.host = "https://127.0.0.1:6443"
    for key, value in settings.items():
        setattr(config, key, value)
    return config


def test_an_insecure_servers_connections_share_a_context_with_no_certificate_store() -> None:
    pool = connection_pool(configuration(verify_ssl=False), maxsize=20)
    context = pool.connection_pool_kw["ssl_context"]
    assert context.verify_mode == ssl.CERT_NONE and not context.check_hostname
    assert context.cert_store_stats()["x509_ca"] == 0
    connections = pool.connection_from_url("https://127.0.0.1:6443/")
    assert connections.pool is not None and connections.pool.maxsize == 20
    opened = [connections._new_conn(), connections._new_conn()]
    assert all(getattr(c, "ssl_context", None) is context for c in opened)


def test_files_are_handed_to_urllib3_to_read_when_a_connection_opens() -> None:
    config = configuration(
        ssl_ca_cert="/nonexistent/ca.crt", cert_file="/nonexistent/c.crt", key_file="/k.key"
    )
    pool = connection_pool(config, maxsize=4)  # nothing read yet: nothing to fail here
    assert pool.connection_pool_kw["ca_certs"] == "/nonexistent/ca.crt"
    assert pool.connection_pool_kw["cert_file"] == "/nonexistent/c.crt"
    assert pool.connection_pool_kw["cert_reqs"] == ssl.CERT_REQUIRED
    assert "ssl_context" not in pool.connection_pool_kw


def test_an_insecure_server_with_a_client_certificate_gets_a_context_per_connection() -> None:
    config = configuration(verify_ssl=False, cert_file="/c.crt", key_file="/k.key")
    pool = connection_pool(config, maxsize=4)
    assert "ssl_context" not in pool.connection_pool_kw
    assert pool.connection_pool_kw["cert_reqs"] == ssl.CERT_NONE


def test_the_proxy_unless_no_proxy_names_the_server() -> None:
    proxied = connection_pool(configuration(proxy="http://proxy.example:3128"), maxsize=4)
    assert isinstance(proxied, urllib3.ProxyManager)
    assert proxied.proxy is not None and proxied.proxy.host == "proxy.example"
    bypassed = connection_pool(
        configuration(proxy="http://proxy.example:3128", no_proxy="127.0.0.1"), maxsize=4
    )
    assert not isinstance(bypassed, urllib3.ProxyManager)
