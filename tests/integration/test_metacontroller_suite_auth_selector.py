"""Metacontroller's own integration tests of webhook authentication and of
`--target-label-selector` (`test/integration/composite_with_auth/composite_test.go`,
`decorator_with_auth/decorator_test.go`, `composite_with_target_label_selector/
composite_test.go` and `decorator_with_target_label_selector/decorator_test.go` of
metacontroller/metacontroller), ported: the same objects, hooks and checks, on both backends,
with `reconcile` in place of Metacontroller. Each test names the Go test it ports.

Metacontroller's tests wait until the cluster shows the result (a child, or a SyncError
Event); a `reconcile` run ends converged, so the result is checked when it returns. Where a
Go test waits out its 30 s timeout to show that something never happens, the run's return
is that moment: whatever it did not do by then, it will not do.

Each case runs with its controller created in the cluster under Metacontroller's own CRDs, as
the Go framework creates it (what a user switching from Metacontroller has);
`RECONCILE_METACONTROLLER_PORT=full` adds the controller read from a file (`port_sources`).

Differences the one-shot tool imposes: Metacontroller's namespaces are fixed names
(`test-bearer-correcttoken`, ...); here the namespace is the test's own (the live cluster is
shared, and a namespace deleted by an earlier test may still be terminating), and the Go
names are kept for the parent, the controller and the labels. Metacontroller is started once
per suite with `--target-label-selector foo=bar` (`TestMainWithTargetLabelSelector`); here
each run of those suites is given `target_label_selector="foo=bar"`, and (from the cluster) is
not limited to its controller by name, so the selector alone chooses what runs."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from reconcile.cluster import NotFound
from reconcile.cluster.types import Obj, ResourceInfo
from reconcile.results import RunResult
from tests.support.backends import Backend
from tests.support.events import sync_errors
from tests.support.mc_examples import port_sources
from tests.support.mc_suite import (
    Body,
    CheckingHookServer,
    composite_controller,
    create_secret,
    decorator_controller,
    run_controller,
    serve_webhook,
    serve_webhook_tls_with_basic_auth,
    serve_webhook_tls_with_bearer_auth,
)

TEST_BEARER_TOKEN = "test-integration-token"
TEST_USERNAME = "testuser"
TEST_PASSWORD = "testpass"
TOKEN_SECRET_KEY = "token"
USERNAME_KEY = "username"
PASSWORD_KEY = "password"

SOURCES = port_sources()
TARGET_LABEL_SELECTOR = "foo=bar"  # TestMainWithTargetLabelSelector

# (case name, the Secret's token, whether the hook accepts it): the Go tests' table
BEARER_CASES = [("CorrectToken", TEST_BEARER_TOKEN, True), ("WrongToken", "wrong-token", False)]
BASIC_CASES = [("CorrectCreds", TEST_PASSWORD, True), ("WrongPassword", "wrongpass", False)]


def crd_object(resource: ResourceInfo, name: str) -> Obj:
    """`framework.UnstructuredCRD`: an object of the resource, named."""
    return {"apiVersion": resource.api_version, "kind": resource.kind, "metadata": {"name": name}}


def create_parent(
    backend: Backend, crd: ResourceInfo, name: str, ns: str, labels: dict[str, str]
) -> None:
    """The Go tests' parent: `spec.selector.matchLabels` set to the test's labels."""
    parent = crd_object(crd, name)
    parent["metadata"]["namespace"] = ns
    parent["spec"] = {"selector": {"matchLabels": labels}}
    backend.admin.create(crd, parent)


def composite_sync(child_crd: ResourceInfo, labels: dict[str, str]) -> Body:
    """The composite suites' hook: one child named after the parent, with the labels."""

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        child = crd_object(child_crd, request["parent"]["metadata"]["name"])
        child["metadata"]["labels"] = labels
        return {"children": [child]}

    return sync


def decorator_sync(child_crd: ResourceInfo, labels: dict[str, str]) -> Body:
    """The decorator suites' hook: one attachment named after the object, with the labels."""

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        child = crd_object(child_crd, request["object"]["metadata"]["name"])
        child["metadata"]["labels"] = labels
        return {"attachments": [child]}

    return sync


def child_exists(backend: Backend, child_crd: ResourceInfo, name: str, ns: str) -> bool:
    try:
        backend.admin.get(child_crd, name, namespace=ns)
    except NotFound:
        return False
    return True


def check_auth_outcome(
    backend: Backend,
    result: RunResult,
    server: CheckingHookServer,
    child_crd: ResourceInfo,
    name: str,
    ns: str,
    auth_succeeds: bool,
) -> None:
    """The Go tests' two endings. Accepted: the child exists. Refused: a SyncError Event in
    the namespace (which, as `WaitForSyncError` says, shows the call was attempted and
    rejected: here the server also counted the refusal), and no child."""
    if auth_succeeds:
        assert result.errors == [], result.errors
        assert server.authorizations and server.refused == [], server.refused
        assert child_exists(backend, child_crd, name, ns), "didn't find expected child"
        return
    assert server.refused, "the webhook was never called"
    # a refused call fails the parent: the run reports it (its exit code is 1)
    assert any("403" in e for e in result.errors), result.errors
    # As the Go test, only the Event's reason is checked. (Its message is scrubbed of the
    # Secret values the run saw: in WrongPassword the Go names contain the password,
    # "wrongpass", so the message reads `test-basic-<redacted>word`.)
    events = sync_errors(backend, ns)
    assert events, "expected SyncError event"
    assert not child_exists(backend, child_crd, name, ns), "child should not exist"


def controller_for(
    kind: str,
    name: str,
    sync_webhook: dict[str, Any],
    parent_crd: ResourceInfo,
    child_crd: ResourceInfo,
    **extra: Any,
) -> Obj:
    build = composite_controller if kind == "composite" else decorator_controller
    return build(name, sync_webhook, parent_crd, child_crd, **extra)


def bearer_token_auth(
    backend: Backend,
    namespace: str,
    tmp_path: Path,
    source: str,
    kind: str,
    case: tuple[str, str, bool],
) -> None:
    """TestBearerTokenAuth of the composite (`kind` "composite") or decorator suite: the
    hook's caBundle is the server's CA, inline, and its authorization a Bearer token read
    from a Secret; the server answers 403 unless the token is `TEST_BEARER_TOKEN`."""
    case_name, secret_token, auth_succeeds = case
    prefix = "test-bearer-" if kind == "composite" else "test-dec-bearer-"
    kinds = "TestBearer" if kind == "composite" else "TestDecBearer"
    parent_name = prefix + case_name.lower()
    labels = {"test": parent_name}
    parent_crd = backend.apply_crd(f"{kinds}Parent{case_name}")
    child_crd = backend.apply_crd(f"{kinds}Child{case_name}")
    sync = (composite_sync if kind == "composite" else decorator_sync)(child_crd, labels)
    with serve_webhook_tls_with_bearer_auth(TEST_BEARER_TOKEN, sync) as srv:
        secret = create_secret(
            backend, namespace, "bearer-token-secret", {TOKEN_SECRET_KEY: secret_token}
        )
        hook = {
            "url": srv.url + "/sync",
            "caBundle": {"inline": srv.ca_pem},
            "authorization": {
                "type": "Bearer",
                "secretRef": {
                    "namespace": secret["metadata"]["namespace"],
                    "name": secret["metadata"]["name"],
                    "key": TOKEN_SECRET_KEY,
                },
            },
        }
        controller = controller_for(kind, parent_name, hook, parent_crd, child_crd)
        create_parent(backend, parent_crd, parent_name, namespace, labels)
        result = run_controller(
            backend, tmp_path, source, controller, stored="spec.hooks.sync.webhook.authorization"
        )
        check_auth_outcome(backend, result, srv, child_crd, parent_name, namespace, auth_succeeds)


def basic_auth(
    backend: Backend,
    namespace: str,
    tmp_path: Path,
    source: str,
    kind: str,
    case: tuple[str, str, bool],
) -> None:
    """TestBasicAuth of the composite or decorator suite: basicAuth from a Secret of keys
    `username` and `password`; the server answers 403 unless they are testuser/testpass."""
    case_name, secret_password, auth_succeeds = case
    prefix = "test-basic-" if kind == "composite" else "test-dec-basic-"
    kinds = "TestBasic" if kind == "composite" else "TestDecBasic"
    parent_name = prefix + case_name.lower()
    labels = {"test": parent_name}
    parent_crd = backend.apply_crd(f"{kinds}Parent{case_name}")
    child_crd = backend.apply_crd(f"{kinds}Child{case_name}")
    sync = (composite_sync if kind == "composite" else decorator_sync)(child_crd, labels)
    with serve_webhook_tls_with_basic_auth(TEST_USERNAME, TEST_PASSWORD, sync) as srv:
        secret = create_secret(
            backend,
            namespace,
            "basic-auth-secret",
            {USERNAME_KEY: TEST_USERNAME, PASSWORD_KEY: secret_password},
        )
        hook = {
            "url": srv.url + "/sync",
            "caBundle": {"inline": srv.ca_pem},
            "basicAuth": {
                "secretRef": {
                    "namespace": secret["metadata"]["namespace"],
                    "name": secret["metadata"]["name"],
                }
            },
        }
        controller = controller_for(kind, parent_name, hook, parent_crd, child_crd)
        create_parent(backend, parent_crd, parent_name, namespace, labels)
        result = run_controller(
            backend, tmp_path, source, controller, stored="spec.hooks.sync.webhook.basicAuth"
        )
        check_auth_outcome(backend, result, srv, child_crd, parent_name, namespace, auth_succeeds)
    if auth_succeeds:  # what went over the wire is Go's r.BasicAuth() pair
        pair = base64.b64encode(f"{TEST_USERNAME}:{TEST_PASSWORD}".encode()).decode()
        assert set(srv.authorizations) == {f"Basic {pair}"}


def endpoint_configs_bearer_token(
    backend: Backend,
    namespace: str,
    tmp_path: Path,
    source: str,
    kind: str,
    case: tuple[str, str, bool],
) -> None:
    """TestEndpointConfigsBearerToken of the composite or decorator suite: the webhook names
    only its URL; an endpointConfigs entry for the server's host (`host:port`) gives the CA
    (inline) and the Bearer token's Secret."""
    case_name, secret_token, auth_succeeds = case
    prefix = "test-conn-bearer-" if kind == "composite" else "test-dec-conn-bearer-"
    kinds = "TestConn" if kind == "composite" else "TestDecConn"
    parent_name = prefix + case_name.lower()
    labels = {"test": parent_name}
    parent_crd = backend.apply_crd(f"{kinds}Parent{case_name}")
    child_crd = backend.apply_crd(f"{kinds}Child{case_name}")
    sync = (composite_sync if kind == "composite" else decorator_sync)(child_crd, labels)
    with serve_webhook_tls_with_bearer_auth(TEST_BEARER_TOKEN, sync) as srv:
        secret = create_secret(
            backend, namespace, "conn-bearer-token-secret", {TOKEN_SECRET_KEY: secret_token}
        )
        endpoint_configs = [
            {
                "host": srv.host,
                "caBundle": {"inline": srv.ca_pem},
                "authorization": {
                    "type": "Bearer",
                    "secretRef": {
                        "namespace": secret["metadata"]["namespace"],
                        "name": secret["metadata"]["name"],
                        "key": TOKEN_SECRET_KEY,
                    },
                },
            }
        ]
        hook = {"url": srv.url + "/sync"}
        controller = controller_for(
            kind, parent_name, hook, parent_crd, child_crd, endpoint_configs=endpoint_configs
        )
        create_parent(backend, parent_crd, parent_name, namespace, labels)
        result = run_controller(
            backend, tmp_path, source, controller, stored="spec.endpointConfigs"
        )
        check_auth_outcome(backend, result, srv, child_crd, parent_name, namespace, auth_succeeds)


# -- composite_with_auth/composite_test.go ---------------------------------------------------


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("case", BEARER_CASES, ids=[c[0] for c in BEARER_CASES])
def test_composite_bearer_token_auth(
    backend: Backend, namespace: str, tmp_path: Path, source: str, case: tuple[str, str, bool]
) -> None:
    """composite_with_auth TestBearerTokenAuth (CorrectToken, WrongToken)."""
    bearer_token_auth(backend, namespace, tmp_path, source, "composite", case)


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("case", BASIC_CASES, ids=[c[0] for c in BASIC_CASES])
def test_composite_basic_auth(
    backend: Backend, namespace: str, tmp_path: Path, source: str, case: tuple[str, str, bool]
) -> None:
    """composite_with_auth TestBasicAuth (CorrectCreds, WrongPassword)."""
    basic_auth(backend, namespace, tmp_path, source, "composite", case)


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("case", BEARER_CASES, ids=[c[0] for c in BEARER_CASES])
def test_composite_endpoint_configs_bearer_token(
    backend: Backend, namespace: str, tmp_path: Path, source: str, case: tuple[str, str, bool]
) -> None:
    """composite_with_auth TestEndpointConfigsBearerToken (CorrectToken, WrongToken)."""
    endpoint_configs_bearer_token(backend, namespace, tmp_path, source, "composite", case)


# -- decorator_with_auth/decorator_test.go ---------------------------------------------------


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("case", BEARER_CASES, ids=[c[0] for c in BEARER_CASES])
def test_decorator_bearer_token_auth(
    backend: Backend, namespace: str, tmp_path: Path, source: str, case: tuple[str, str, bool]
) -> None:
    """decorator_with_auth TestBearerTokenAuth (CorrectToken, WrongToken)."""
    bearer_token_auth(backend, namespace, tmp_path, source, "decorator", case)


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("case", BASIC_CASES, ids=[c[0] for c in BASIC_CASES])
def test_decorator_basic_auth(
    backend: Backend, namespace: str, tmp_path: Path, source: str, case: tuple[str, str, bool]
) -> None:
    """decorator_with_auth TestBasicAuth (CorrectCreds, WrongPassword)."""
    basic_auth(backend, namespace, tmp_path, source, "decorator", case)


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("case", BEARER_CASES, ids=[c[0] for c in BEARER_CASES])
def test_decorator_endpoint_configs_bearer_token(
    backend: Backend, namespace: str, tmp_path: Path, source: str, case: tuple[str, str, bool]
) -> None:
    """decorator_with_auth TestEndpointConfigsBearerToken (CorrectToken, WrongToken)."""
    endpoint_configs_bearer_token(backend, namespace, tmp_path, source, "decorator", case)


# -- composite_with_target_label_selector, decorator_with_target_label_selector --------------


def target_label_selector_case(
    backend: Backend,
    namespace: str,
    tmp_path: Path,
    source: str,
    kind: str,
    names: tuple[str, str, str, str],  # controller, parent (and child), label value, CRD prefix
    controller_labels: dict[str, str],
) -> tuple[bool, int, RunResult]:
    """One Go case: the controller labelled `controller_labels`, a plain HTTP hook
    (`ServeWebhook`), the parent; a run with `--target-label-selector foo=bar`. Whether the
    child exists afterwards, and how many times the hook was called."""
    controller_name, parent_name, label_value, crd_prefix = names
    labels = {"test": label_value}
    parent_crd = backend.apply_crd(f"{crd_prefix}Parent")
    child_crd = backend.apply_crd(f"{crd_prefix}Child")
    sync = (composite_sync if kind == "composite" else decorator_sync)(child_crd, labels)
    with serve_webhook(sync) as hook:
        controller = controller_for(
            kind,
            controller_name,
            {"url": hook.url},  # srv.URL: no path
            parent_crd,
            child_crd,
            labels=controller_labels,
        )
        create_parent(backend, parent_crd, parent_name, namespace, labels)
        result = run_controller(
            backend,
            tmp_path,
            source,
            controller,
            only=False,
            target_label_selector=TARGET_LABEL_SELECTOR,
        )
        calls = len(hook.requests)
    return child_exists(backend, child_crd, parent_name, namespace), calls, result


@pytest.mark.parametrize("source", SOURCES)
def test_composite_with_matching_controller(
    backend: Backend, namespace: str, tmp_path: Path, source: str
) -> None:
    """composite_with_target_label_selector TestWithMatchingController: a controller labelled
    foo=bar is this run's; its child is created."""
    name = "test-cc-target-sync-webhook"
    found, calls, result = target_label_selector_case(
        backend,
        namespace,
        tmp_path,
        source,
        "composite",
        (name, name, name, "TestCCTargetSyncWebhook"),
        {"foo": "bar"},
    )
    assert result.errors == [], result.errors
    assert calls >= 1
    assert found, "didn't find expected child"


@pytest.mark.parametrize("source", SOURCES)
def test_composite_with_non_matching_controller(
    backend: Backend, namespace: str, tmp_path: Path, source: str
) -> None:
    """composite_with_target_label_selector TestWithNonMatchingController: a controller
    labelled baz=caz is not this run's. The Go test waits out its 30 s timeout to see no
    child; the run's return is that moment (and its hook was never called)."""
    name = "test-cc-target-f-sync-webhook"
    found, calls, result = target_label_selector_case(
        backend,
        namespace,
        tmp_path,
        source,
        "composite",
        (name, name, name, "TestCCTargetFSyncWebhook"),
        {"baz": "caz"},
    )
    assert result.errors == [], result.errors
    assert calls == 0
    assert not found, "didn't expected to find child, controller should not be managed"


@pytest.mark.parametrize("source", SOURCES)
def test_decorator_with_matching_controller(
    backend: Backend, namespace: str, tmp_path: Path, source: str
) -> None:
    """decorator_with_target_label_selector TestWithMatchingController: a DecoratorController
    labelled foo=bar is this run's; its attachment is created."""
    found, calls, result = target_label_selector_case(
        backend,
        namespace,
        tmp_path,
        source,
        "decorator",
        ("dc-target", "test-dc-target-sync-webhook", "test-target", "TestDCTarget"),
        {"foo": "bar"},
    )
    assert result.errors == [], result.errors
    assert calls >= 1
    assert found, "didn't find expected child"


@pytest.mark.parametrize("source", SOURCES)
def test_decorator_with_non_matching_controller(
    backend: Backend, namespace: str, tmp_path: Path, source: str
) -> None:
    """decorator_with_target_label_selector TestWithNonMatchingController: a
    DecoratorController labelled baz=caz is not this run's: no attachment, no hook call."""
    found, calls, result = target_label_selector_case(
        backend,
        namespace,
        tmp_path,
        source,
        "decorator",
        ("dc-target-f", "test-dc-target-f-sync-webhook", "test-target-f", "TestDCTargetF"),
        {"baz": "caz"},
    )
    assert result.errors == [], result.errors
    assert calls == 0
    assert not found, "didn't expected to find child, controller should not be managed"
