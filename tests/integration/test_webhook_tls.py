"""Webhook TLS and authentication end to end, on both backends, with a real HTTPS server on
loopback (a self-signed CA): caBundle (inline, Secret, ConfigMap), authorization (Bearer from a
Secret), basicAuth, clientTLS (the server requires the client's certificate), endpointConfigs.
A wrong token (401), a wrong CA, a missing Secret: the call fails, the parent changes nothing
and gets a SyncError Event naming why, the other parents go on, and no credential appears in
any message."""

from __future__ import annotations

import base64
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reconcile.cluster import NotFound
from reconcile.cluster.types import Obj, ResourceInfo
from reconcile.results import RunResult
from tests.support.backends import Backend
from tests.support.controllers import composite, run, write_controllers
from tests.support.events import sync_errors
from tests.support.tlsserver import Authority, authority, serve_tls

TOKEN = "s3cr3t-token-value-42"
USER, PASSWORD = "hook-user", "hook-password-99"
CM = [("v1", "configmaps", "InPlace")]


@pytest.fixture(scope="module")
def issued() -> Authority:
    return authority()


@pytest.fixture
def credentials(backend: Backend, namespace: str, issued: Authority) -> Iterator[str]:
    """Secrets and a ConfigMap holding the settings, in the test's namespace."""
    secrets = backend.admin.discover("v1", "secrets")
    configmaps = backend.admin.discover("v1", "configmaps")

    def secret(name: str, data: dict[str, str]) -> None:
        encoded = {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}
        backend.admin.create(
            secrets,
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": name, "namespace": namespace},
                "data": encoded,
            },
        )

    secret("token", {"token": TOKEN})
    secret("basic", {"username": USER, "password": PASSWORD})
    secret("ca", {"ca.crt": issued.ca_pem})
    secret("client", {"tls.crt": issued.client_cert_pem, "tls.key": issued.client_key_pem})
    backend.admin.create(
        configmaps,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "ca-bundle", "namespace": namespace},
            "data": {"ca.crt": issued.ca_pem},
        },
    )
    yield namespace


def parent(widgets: ResourceInfo, name: str, namespace: str) -> Obj:
    return {
        "apiVersion": widgets.api_version,
        "kind": widgets.kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": {"matchLabels": {"app": name}}},
    }


def sync(request: dict[str, Any]) -> dict[str, Any]:
    name = request["parent"]["metadata"]["name"]
    child = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"{name}-child", "labels": {"app": name}},
        "data": {"over": "tls"},
    }
    return {"children": [child]}


def child_of(backend: Backend, cms: ResourceInfo, name: str, namespace: str) -> Obj | None:
    try:
        return backend.admin.get(cms, f"{name}-child", namespace=namespace)
    except NotFound:
        return None


def leaks(result: RunResult, messages: list[str]) -> list[str]:
    encoded = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    texts = [*result.errors, *messages]
    return [t for t in texts if any(v in t for v in (TOKEN, PASSWORD, encoded))]


def settings(namespace: str, issued: Authority, case: str) -> dict[str, Any]:
    ca_secret = {"secretRef": {"name": "ca", "namespace": namespace}}
    ca_map = {"configMapRef": {"name": "ca-bundle", "namespace": namespace}}
    token = {"secretRef": {"name": "token", "namespace": namespace, "key": "token"}}
    basic = {"secretRef": {"name": "basic", "namespace": namespace}}
    client = {"secretRef": {"name": "client", "namespace": namespace}}
    cases: dict[str, dict[str, Any]] = {
        "bearer-ca-configmap": {"caBundle": ca_map, "authorization": token},
        "basic-ca-secret": {"caBundle": ca_secret, "basicAuth": basic},
        "mutual-tls-ca-inline": {"caBundle": {"inline": issued.ca_pem}, "clientTLS": client},
    }
    return cases[case]


EXPECTED_AUTHORIZATION = {
    "bearer-ca-configmap": f"Bearer {TOKEN}",
    "basic-ca-secret": "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode(),
    "mutual-tls-ca-inline": None,
}


@pytest.mark.parametrize("case", sorted(EXPECTED_AUTHORIZATION))
def test_a_hook_behind_tls_and_authentication_is_called(
    backend: Backend,
    credentials: str,
    widgets: ResourceInfo,
    cms: ResourceInfo,
    issued: Authority,
    tmp_path: Path,
    case: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    namespace = credentials
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    backend.admin.create(widgets, parent(widgets, "secured", namespace))
    mutual = case.startswith("mutual")
    with serve_tls(sync, issued, require_client_cert=mutual) as server:
        hook = {"webhook": {"url": server.url, **settings(namespace, issued, case)}}
        controller = composite(f"tls-{case}", widgets, CM, {"sync": hook})
        result = run(backend, write_controllers(tmp_path, controller))
        seen = list(server.authorizations)
    assert result.errors == [] and result.converged, result.errors
    assert child_of(backend, cms, "secured", namespace) is not None
    assert seen and set(seen) == {EXPECTED_AUTHORIZATION[case]}
    # the certificates and the client's key taken from Secrets went to files for OpenSSL:
    # gone with the run
    assert list(scratch.iterdir()) == []


def test_endpoint_configs_apply_to_every_hook_of_their_host(
    backend: Backend,
    credentials: str,
    widgets: ResourceInfo,
    cms: ResourceInfo,
    issued: Authority,
    tmp_path: Path,
) -> None:
    namespace = credentials
    backend.admin.create(widgets, parent(widgets, "by-host", namespace))
    with serve_tls(sync, issued) as server:
        host = server.url.removeprefix("https://").rstrip("/")
        controller = composite(
            "tls-endpoints",
            widgets,
            CM,
            {"sync": {"webhook": {"url": server.url}}},
            endpointConfigs=[{"host": host, **settings(namespace, issued, "bearer-ca-configmap")}],
        )
        result = run(backend, write_controllers(tmp_path, controller))
        seen = list(server.authorizations)
    assert result.errors == [], result.errors
    assert set(seen) == {f"Bearer {TOKEN}"}
    assert child_of(backend, cms, "by-host", namespace) is not None


@pytest.mark.parametrize(
    ("case", "named"),
    [
        ("wrong-token", "HTTP 401"),
        ("wrong-ca", "TLS failed"),
        ("missing-secret", "Secret {ns}/absent not found"),
        ("missing-key", "has no key 'nope'"),
        ("no-client-certificate", "TLS failed"),
    ],
)
def test_a_refused_or_unverifiable_call_changes_nothing_and_says_why(
    backend: Backend,
    credentials: str,
    widgets: ResourceInfo,
    cms: ResourceInfo,
    issued: Authority,
    tmp_path: Path,
    case: str,
    named: str,
) -> None:
    namespace = credentials
    backend.admin.create(widgets, parent(widgets, "denied", namespace))
    other = authority()  # a CA the server's certificate is not from

    def guarded(request: dict[str, Any]) -> dict[str, Any] | tuple[int, Any]:
        return sync(request)

    token = {"secretRef": {"name": "token", "namespace": namespace, "key": "token"}}
    ca = {"configMapRef": {"name": "ca-bundle", "namespace": namespace}}
    absent = {"secretRef": {"name": "absent", "namespace": namespace, "key": "t"}}
    no_key = {"secretRef": {"name": "token", "namespace": namespace, "key": "nope"}}
    cases: dict[str, dict[str, Any]] = {
        "wrong-token": {"caBundle": ca, "authorization": token},
        "wrong-ca": {"caBundle": {"inline": other.ca_pem}, "authorization": token},
        "missing-secret": {"caBundle": ca, "authorization": absent},
        "missing-key": {"caBundle": ca, "authorization": no_key},
        "no-client-certificate": {"caBundle": ca},
    }
    security = cases[case]
    mutual = case == "no-client-certificate"
    with serve_tls(guarded, issued, require_client_cert=mutual) as server:
        if case == "wrong-token":
            server.handler = lambda request: (401, {"message": "bad token"})
        controller = composite(
            f"denied-{case}", widgets, CM, {"sync": {"webhook": {"url": server.url, **security}}}
        )
        result = run(backend, write_controllers(tmp_path, controller))
    expected = named.format(ns=namespace)
    assert any(expected in e for e in result.errors), result.errors
    assert child_of(backend, cms, "denied", namespace) is None
    events = sync_errors(backend, namespace, "denied")
    assert any(expected in m for m in events), events
    assert leaks(result, events) == []
