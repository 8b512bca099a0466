"""The live backend's pool: one TLS context for every connection, built from the kubeconfig's
settings when the run connects (a bad file is named then), and the proxy rules."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest
import trustme
import urllib3
from kubernetes.client.configuration import Configuration

from reconcile.cluster.kubeconfig_files import KubeconfigError
from reconcile.cluster.pool import connection_pool, tls_context


def configuration(**settings: object) -> Configuration:
    config = Configuration()
    config.host = "https://127.0.0.1:6443"
    for key, value in settings.items():
        setattr(config, key, value)
    return config


def test_an_insecure_server_loads_no_certificate_store() -> None:
    context = tls_context(configuration(verify_ssl=False))
    assert context.verify_mode == ssl.CERT_NONE
    assert context.cert_store_stats()["x509_ca"] == 0


def test_the_kubeconfigs_authority_is_the_only_one_trusted() -> None:
    ca = trustme.CA()
    context = tls_context(configuration(ca_cert_data=ca.cert_pem.bytes().decode()))
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname
    assert context.cert_store_stats()["x509_ca"] == 1


def test_every_connection_shares_the_one_context(tmp_path: Path) -> None:
    ca = trustme.CA()
    leaf = ca.issue_cert("client@example.com")
    cert, key = tmp_path / "client.crt", tmp_path / "client.key"
    cert.write_bytes(leaf.cert_chain_pems[0].bytes())
    key.write_bytes(leaf.private_key_pem.bytes())
    config = configuration(
        ca_cert_data=ca.cert_pem.bytes().decode(), cert_file=str(cert), key_file=str(key)
    )
    pool = connection_pool(config, maxsize=20)
    first = pool.connection_from_url("https://127.0.0.1:6443/")
    again = pool.connection_from_url("https://127.0.0.1:6443/api")
    assert first is again
    assert first.pool is not None and first.pool.maxsize == 20
    connections = [first._new_conn(), first._new_conn()]
    assert all(isinstance(c, urllib3.connection.HTTPSConnection) for c in connections)
    shared = pool.connection_pool_kw["ssl_context"]
    assert all(c.ssl_context is shared for c in connections)  # type: ignore[attr-defined]
    # the certificate and key were read into the context: urllib3 is handed no path to read
    # again for each connection
    for connection in connections:
        assert isinstance(connection, urllib3.connection.HTTPSConnection)
        assert connection.cert_file is None and connection.key_file is None
        assert connection.ca_certs is None and connection.ca_cert_data is None


def test_an_unreadable_client_key_is_named_when_the_run_connects(tmp_path: Path) -> None:
    ca = trustme.CA()
    leaf = ca.issue_cert("client@example.com")
    cert = tmp_path / "client.crt"
    cert.write_bytes(leaf.cert_chain_pems[0].bytes())
    config = configuration(
        ca_cert_data=ca.cert_pem.bytes().decode(),
        cert_file=str(cert),
        key_file=str(tmp_path / "missing.key"),
    )
    with pytest.raises(KubeconfigError, match=r"client-certificate/client-key: .*No such file"):
        connection_pool(config, maxsize=4)


def test_a_broken_authority_is_named() -> None:
    with pytest.raises(KubeconfigError, match="certificate-authority: cannot be used"):
        tls_context(configuration(ca_cert_data="-----BEGIN CERTIFICATE-----\nnot one\n"))


def test_the_proxy_unless_no_proxy_names_the_server() -> None:
    proxied = connection_pool(configuration(proxy="http://proxy.example:3128"), maxsize=4)
    assert isinstance(proxied, urllib3.ProxyManager)
    assert proxied.proxy is not None and proxied.proxy.host == "proxy.example"
    bypassed = connection_pool(
        configuration(proxy="http://proxy.example:3128", no_proxy="127.0.0.1"), maxsize=4
    )
    assert not isinstance(bypassed, urllib3.ProxyManager)


def test_a_plain_http_server_needs_no_tls_context() -> None:
    config = configuration()
    config.host = "http://127.0.0.1:8080"
    pool = connection_pool(config, maxsize=4)
    assert "ssl_context" not in pool.connection_pool_kw
