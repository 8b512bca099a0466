"""Each way a kubeconfig gives the server and credentials, against a real TLS server: the
control plane (certificate authority by path and inline, token files, an exec plugin) and a
server that requires a client certificate."""

from __future__ import annotations

import base64
import json
import shutil
import ssl
import sys
import tempfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from reconcile.cluster.errors import ApiError
from reconcile.cluster.kubeconfig import load_connection
from reconcile.cluster.live import LiveCluster
from tests.support.controlplane import TESTED_USER, ControlPlane
from tests.support.tlsserver import authority


def kubeconfig(path: Path, cluster: dict[str, Any], user: dict[str, Any]) -> str:
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": cluster}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    path.write_text(json.dumps(document))
    return str(path)


def namespaces_found(config_path: str) -> bool:
    cluster = LiveCluster(load_connection(config_path).configuration)
    try:
        return cluster.discover("v1", "namespaces").kind == "Namespace"
    finally:
        cluster.close()


@pytest.mark.controlplane
def test_the_servers_certificate_is_verified_by_path_or_inline(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    certificate = control_plane.workdir / "certs" / "apiserver.crt"
    (tmp_path / "certs").mkdir()
    shutil.copy(certificate, tmp_path / "certs" / "ca.crt")
    (tmp_path / "token").write_text(control_plane.tokens[TESTED_USER] + "\n")
    by_path = {"server": control_plane.server, "certificate-authority": "certs/ca.crt"}
    # relative to the kubeconfig's own directory, not the working directory
    assert namespaces_found(kubeconfig(tmp_path / "by-path", by_path, {"tokenFile": "token"}))
    inline = {
        "server": control_plane.server,
        "certificate-authority-data": base64.b64encode(certificate.read_bytes()).decode(),
    }
    token = {"token": control_plane.tokens[TESTED_USER]}
    assert namespaces_found(kubeconfig(tmp_path / "inline", inline, token))
    other = {
        "server": control_plane.server,
        "certificate-authority-data": base64.b64encode(authority().ca_pem.encode()).decode(),
    }
    with pytest.raises(ApiError, match="CERTIFICATE_VERIFY_FAILED"):
        namespaces_found(kubeconfig(tmp_path / "other", other, token))


@pytest.mark.controlplane
def test_an_exec_plugins_token_is_used(control_plane: ControlPlane, tmp_path: Path) -> None:
    plugin = tmp_path / "plugin.py"
    credential = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "kind": "ExecCredential",
        "status": {"token": control_plane.tokens[TESTED_USER]},
    }
    plugin.write_text(f"import json\nprint(json.dumps({credential!r}))\n")
    user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": sys.executable,
            "args": [str(plugin)],
            "interactiveMode": "Never",
        }
    }
    cluster = {"server": control_plane.server, "insecure-skip-tls-verify": True}
    assert namespaces_found(kubeconfig(tmp_path / "exec", cluster, user))


class _Discovery(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps(
            {
                "kind": "APIResourceList",
                "groupVersion": "v1",
                "resources": [
                    {"name": "namespaces", "kind": "Namespace", "namespaced": False, "verbs": []}
                ],
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def mutual_tls_server() -> Iterator[tuple[str, Any]]:
    issued = authority()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    issued.server.configure_cert(context)
    context.verify_mode = ssl.CERT_REQUIRED
    issued.ca.configure_trust(context)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Discovery)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    yield f"https://127.0.0.1:{server.server_address[1]}", issued
    server.shutdown()
    server.server_close()


def test_a_client_certificate_inline_or_by_path(
    mutual_tls_server: tuple[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, issued = mutual_tls_server
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))

    def data(text: str) -> str:
        return base64.b64encode(text.encode()).decode()

    cluster = {"server": url, "certificate-authority-data": data(issued.ca_pem)}
    inline = {
        "client-certificate-data": data(issued.client_cert_pem),
        "client-key-data": data(issued.client_key_pem),
    }
    assert namespaces_found(kubeconfig(tmp_path / "inline", cluster, inline))
    assert list(scratch.iterdir()) == []  # the key went to OpenSSL without reaching a disk
    (tmp_path / "client.crt").write_text(issued.client_cert_pem)
    (tmp_path / "client.key").write_text(issued.client_key_pem)
    by_path = {"client-certificate": "client.crt", "client-key": "client.key"}
    assert namespaces_found(kubeconfig(tmp_path / "by-path", cluster, by_path))
    with pytest.raises(ApiError):  # the server requires one: without it, no handshake
        namespaces_found(kubeconfig(tmp_path / "none", cluster, {}))
