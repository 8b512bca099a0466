"""What the ports of Metacontroller's integration suites with webhook authentication and
`--target-label-selector` need of Metacontroller's Go test framework
(`test/integration/framework`): TLS webhook servers that check the request's credentials
(`ServeWebhookTLSWithBearerAuth`, `ServeWebhookTLSWithBasicAuth`), `CreateSecret`, the
controllers `Create*Controller*` builds, and running one such controller read from a file or
created in the cluster under Metacontroller's own CRDs."""

from __future__ import annotations

import base64
import binascii
import json
import ssl
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from reconcile.cluster.types import Obj, ResourceInfo
from reconcile.results import RunResult
from tests.support.backends import Backend
from tests.support.hookserver import serving
from tests.support.mc_crds import run_from
from tests.support.tlsserver import authority

Body = Callable[[dict[str, Any]], dict[str, Any]]


class CheckingHookServer(ThreadingHTTPServer):
    """A hook server on loopback: with `tls`, behind a self-signed CA (as
    `httptest.NewTLSServer`; `ca_pem` is what a caBundle names), else plain HTTP (as
    `httptest.NewServer`). It answers 403 "unauthorized" to a request whose Authorization
    header `allowed` refuses, and `handler(body)` to the others; it keeps each request's body
    and Authorization header, and which were refused."""

    daemon_threads = True

    def __init__(
        self, handler: Body, allowed: Callable[[str | None], bool], *, tls: bool = True
    ) -> None:
        super().__init__(("127.0.0.1", 0), _CheckingHandler)
        self.scheme = "http"
        self.ca_pem = ""
        if tls:
            issued = authority()
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            issued.server.configure_cert(context)
            self.socket = context.wrap_socket(self.socket, server_side=True)
            self.scheme, self.ca_pem = "https", issued.ca_pem
        self.handler = handler
        self.allowed = allowed
        self.requests: list[dict[str, Any]] = []
        self.authorizations: list[str | None] = []
        self.refused: list[str | None] = []
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        """`srv.URL`: the scheme and host, no path."""
        return f"{self.scheme}://{self.host}"

    @property
    def host(self) -> str:
        """`url.Parse(srv.URL).Host`: what an endpointConfigs entry matches."""
        return f"127.0.0.1:{self.server_address[1]}"

    def check(self, authorization: str | None, request: dict[str, Any]) -> bool:
        ok = self.allowed(authorization)
        with self._lock:
            self.requests.append(request)
            self.authorizations.append(authorization)
            if not ok:
                self.refused.append(authorization)
        return ok


class _CheckingHandler(BaseHTTPRequestHandler):
    server: CheckingHookServer

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        if not self.server.check(self.headers.get("Authorization"), request):
            self._answer(403, b"unauthorized\n", "text/plain; charset=utf-8")
            return
        answer = json.dumps(self.server.handler(request)).encode()
        self._answer(200, answer, "application/json")

    def _answer(self, status: int, data: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serve_webhook(handler: Body) -> Iterator[CheckingHookServer]:
    """`ServeWebhook`: plain HTTP, no credentials asked."""
    with serving(CheckingHookServer(handler, lambda got: True, tls=False)) as server:
        yield server


@contextmanager
def serve_webhook_tls_with_bearer_auth(
    want_token: str, handler: Body
) -> Iterator[CheckingHookServer]:
    """`ServeWebhookTLSWithBearerAuth`: the Authorization header must be `Bearer <token>`."""
    want = f"Bearer {want_token}"
    with serving(CheckingHookServer(handler, lambda got: got == want)) as server:
        yield server


@contextmanager
def serve_webhook_tls_with_basic_auth(
    want_user: str, want_password: str, handler: Body
) -> Iterator[CheckingHookServer]:
    """`ServeWebhookTLSWithBasicAuth`: HTTP Basic credentials (as Go's `r.BasicAuth()` reads
    them) must be these."""

    def allowed(got: str | None) -> bool:
        scheme, _, encoded = (got or "").partition(" ")
        if scheme.lower() != "basic":
            return False
        try:
            decoded = base64.b64decode(encoded, validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            return False
        user, colon, password = decoded.partition(":")
        return bool(colon) and (user, password) == (want_user, want_password)

    with serving(CheckingHookServer(handler, allowed)) as server:
        yield server


def create_secret(backend: Backend, namespace: str, name: str, data: dict[str, str]) -> Obj:
    """`CreateSecret`: a Secret of these keys and values (in the cluster, on both backends);
    the test's namespace takes it away."""
    secrets = backend.admin.discover("v1", "secrets")
    encoded = {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}
    return backend.admin.create(
        secrets,
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": name, "namespace": namespace},
            "data": encoded,
        },
    )


def resource_rule(crd: ResourceInfo) -> dict[str, str]:
    """`CRDResourceRule`."""
    return {"apiVersion": crd.api_version, "resource": crd.resource}


def _meta(name: str, labels: dict[str, str] | None) -> dict[str, Any]:
    # the Go framework also sets `namespace: default`: the controllers are cluster-scoped, so
    # the API server drops it
    return {"name": name, **({"labels": dict(labels)} if labels else {})}


def composite_controller(
    name: str,
    sync_webhook: dict[str, Any],
    parent: ResourceInfo,
    child: ResourceInfo,
    *,
    labels: dict[str, str] | None = None,
    endpoint_configs: list[dict[str, Any]] | None = None,
) -> Obj:
    """`CreateCompositeController` (and its `WithBearerAuth`, `WithBasicAuth` and
    `WithEndpointConfigs` forms): the webhook is given whole."""
    spec: dict[str, Any] = {
        "resyncPeriodSeconds": 3600,
        "parentResource": resource_rule(parent),
        "childResources": [resource_rule(child)],
        "hooks": {"sync": {"webhook": sync_webhook}},
    }
    if endpoint_configs is not None:
        spec["endpointConfigs"] = endpoint_configs
    return {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": "CompositeController",
        "metadata": _meta(name, labels),
        "spec": spec,
    }


def decorator_controller(
    name: str,
    sync_webhook: dict[str, Any],
    target: ResourceInfo,
    attachment: ResourceInfo,
    *,
    labels: dict[str, str] | None = None,
    endpoint_configs: list[dict[str, Any]] | None = None,
) -> Obj:
    """`CreateDecoratorController` (and its `WithBearerAuth`, `WithBasicAuth` and
    `WithEndpointConfigs` forms)."""
    spec: dict[str, Any] = {
        "resyncPeriodSeconds": 3600,
        "resources": [resource_rule(target)],
        "attachments": [resource_rule(attachment)],
        "hooks": {"sync": {"webhook": sync_webhook}},
    }
    if endpoint_configs is not None:
        spec["endpointConfigs"] = endpoint_configs
    return {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": "DecoratorController",
        "metadata": _meta(name, labels),
        "spec": spec,
    }


def run_controller(
    backend: Backend,
    tmp_path: Path,
    source: str,
    controller: Obj,
    *,
    stored: str = "spec.hooks.sync",
    only: bool = True,
    **settings: Any,
) -> RunResult:
    """One run of `controller`: read from a file (`source` "files"), or ("cluster") created
    in the cluster under Metacontroller's own CRDs, as Metacontroller's framework creates it,
    once the server keeps its field `stored` (dotted), and deleted afterwards. `only`: the
    run is limited to this controller by name (`--controller`); without it, every controller
    in the cluster is loaded and `settings` (such as `target_label_selector`) choose."""
    return run_from(backend, tmp_path, source, [controller], stored=stored, only=only, **settings)
