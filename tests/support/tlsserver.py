"""A real HTTPS hook server on loopback: a self-signed CA (trustme), an optional client CA whose
certificates the server requires (mutual TLS), and the Authorization header each request
carried."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import trustme

from tests.support.hookserver import Handler, HookServer, serving


@dataclass
class Authority:
    """A CA and what it issued: the server's certificate (for 127.0.0.1 and localhost) and a
    client certificate, all as PEM text."""

    ca: trustme.CA
    ca_pem: str
    server: trustme.LeafCert
    client_cert_pem: str
    client_key_pem: str


def authority() -> Authority:
    ca = trustme.CA()
    server = ca.issue_cert("127.0.0.1", "localhost")
    client = ca.issue_cert("reconcile-client@example.com")
    return Authority(
        ca=ca,
        ca_pem=ca.cert_pem.bytes().decode(),
        server=server,
        client_cert_pem=client.cert_chain_pems[0].bytes().decode(),
        client_key_pem=client.private_key_pem.bytes().decode(),
    )


@contextmanager
def serve_tls(
    handler: Handler, issued: Authority, *, require_client_cert: bool = False
) -> Iterator[HookServer]:
    """`handler` behind TLS with `issued.server`'s certificate; `url` is https://127.0.0.1."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    issued.server.configure_cert(context)
    if require_client_cert:
        context.verify_mode = ssl.CERT_REQUIRED
        issued.ca.configure_trust(context)
    server = HookServer(handler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    server.scheme = "https"
    with serving(server):
        yield server
