"""Metacontroller's own examples (tests/data/metacontroller/examples, vendored unchanged) run
with `reconcile` in place of Metacontroller, on both backends, with their controllers created
in the cluster under Metacontroller's own CRDs (and read from their files too when
scripts/metacontroller_port.py runs the whole port). Each hook server is the example's own,
unchanged, on a loopback port; the checks are those of the example's `test.sh` (which polls
until they hold; a `reconcile` run ends converged, so they hold at its end)."""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Callable
from pathlib import Path

import pytest
import trustme
import yaml

from reconcile.cluster import NotFound
from reconcile.cluster.types import Obj
from tests.support.backends import Backend
from tests.support.events import sync_errors
from tests.support.mc_examples import (
    EXAMPLES,
    Example,
    hook_server,
    port_sources,
    ran,
    run_example,
)
from tests.support.poll import eventually

PORTED = (
    "configmap-list-v2",
    "namespace-list-v2",
    "secretpropagation",
    "configmappropagation",
    "clusteredparent",
    "crd-roles",
    "globalconfigmap",
    "update-strategy",
    "webhook-auth",
    "target-label-selector",
)


@pytest.mark.parametrize("source", port_sources())
def test_configmap_list_v2(
    backend: Backend, mc_example: Callable[[str], Example], tmp_path: Path, source: str
) -> None:
    """A v2 hook of a namespaced parent reads ConfigMaps of another namespace
    (examples/configmap-list-v2/test.sh)."""
    ported = mc_example("configmap-list-v2")
    (result,) = ran(ported, "example.yaml", backend, tmp_path, source)
    assert result.errors == [] and result.converged, result.errors
    child = ported.get("v1", "configmaps", "my-config-list-list", "target-ns")
    assert child["data"]["configmaps"] == "source-ns/cm-1\nsource-ns/cm-2"
    parent = ported.get(
        "examples.metacontroller.io/v1alpha1", "configmaplists", "my-config-list", "target-ns"
    )
    assert parent["status"]["count"] == 2


@pytest.mark.parametrize("source", port_sources())
def test_namespace_list_v2(
    backend: Backend, mc_example: Callable[[str], Example], tmp_path: Path, source: str
) -> None:
    """A v2 hook of a namespaced parent reads cluster-scoped Namespaces, keyed by name alone
    (examples/namespace-list-v2/test.sh)."""
    ported = mc_example("namespace-list-v2")
    (result,) = ran(ported, "example.yaml", backend, tmp_path, source)
    assert result.errors == [] and result.converged, result.errors
    child = ported.get("v1", "configmaps", "filtered-namespaces-list", "test-ns")
    assert child["data"]["namespaces"] == "test-ns"
    parent = ported.get(
        "examples.metacontroller.io/v1alpha1", "namespacelists", "filtered-namespaces", "test-ns"
    )
    assert parent["status"]["count"] >= 1


@pytest.mark.parametrize("source", port_sources())
def test_secretpropagation(
    backend: Backend, mc_example: Callable[[str], Example], tmp_path: Path, source: str
) -> None:
    """A cluster-scoped parent copies a Secret into the namespaces its selector picks; its
    CRD's status schema has no observedGeneration, which must not make a loop
    (examples/secretpropagation/test.sh)."""
    ported = mc_example("secretpropagation")
    result, again = ran(ported, "example-secret.yaml", backend, tmp_path, source, runs=2)
    assert result.errors == [] and result.converged and not result.not_converging
    assert again.errors == [] and again.actions_by_kind() == {}, again.actions_by_kind()
    for namespace in ("alpha", "beta"):
        assert ported.get("v1", "secrets", "shareable", namespace)["data"]["some"] == "dmFsdWUK"
    with pytest.raises(NotFound):
        ported.get("v1", "secrets", "shareable", "gamma")
    parent = ported.get(
        "examples.metacontroller.io/v1alpha1", "secretpropagations", "secret-propagation"
    )
    assert parent["status"]["working"] == "fine"


@pytest.mark.parametrize("source", port_sources())
def test_configmappropagation(
    backend: Backend, mc_example: Callable[[str], Example], tmp_path: Path, source: str
) -> None:
    """A ConfigMap copied to the namespaces a parent names, `actual_copies` counted; a parent
    the controller's labelSelector does not select is left alone
    (examples/configmappropagation/test.sh)."""
    ported = mc_example("configmappropagation")
    (result,) = ran(ported, "example-configmap.yaml", backend, tmp_path, source)
    assert result.errors == [] and result.converged, result.errors
    for namespace in ("one", "two", "three"):
        assert ported.get("v1", "configmaps", "settings", namespace)
    parent = ported.get(
        "examples.metacontroller.io/v1alpha1", "configmappropagations", "settings-propagation"
    )
    assert parent["status"]["actual_copies"] == 3
    with pytest.raises(NotFound):  # the unmanaged parent's namespaces
        ported.get("v1", "configmaps", "settings", "four")


def test_the_ported_examples_are_metacontrollers_files_unchanged() -> None:
    """Nothing of an example is edited for the port: every vendored file has the checksum
    of Metacontroller's own (SHA256SUMS, taken from its repository at the vendored commit),
    and each controller still names the Service of its hook server in the `metacontroller`
    namespace (pointed at loopback only when a test runs it)."""
    sums = EXAMPLES / "SHA256SUMS"
    listed = {}
    for line in sums.read_text().splitlines():
        digest, name = line.split("  ", 1)
        listed[name] = digest
    vendored = {
        str(p.relative_to(EXAMPLES))
        for p in EXAMPLES.rglob("*")
        if p.is_file() and p.name not in ("README.md", "SHA256SUMS")
    }
    assert vendored == set(listed), vendored ^ set(listed)
    for name, digest in listed.items():
        assert hashlib.sha256((EXAMPLES / name).read_bytes()).hexdigest() == digest, name
    for name in PORTED:
        ported = Example(name, backend=None)  # type: ignore[arg-type]
        urls = [
            hook["webhook"]["url"]
            for controller in ported.controllers()
            for hook in controller["spec"]["hooks"].values()
        ]
        assert urls and all(".metacontroller/" in u for u in urls), urls


@pytest.mark.parametrize("source", port_sources())
def test_clusteredparent(
    backend: Backend, mc_example: Callable[[str], Example], tmp_path: Path, source: str
) -> None:
    """A DecoratorController on cluster-scoped ClusterRoles attaches a RoleBinding in
    `default`; a deleted attachment comes back; deleting the ClusterRole takes the RoleBinding
    with it (examples/clusteredparent/test.sh)."""
    ported = mc_example("clusteredparent")
    bindings = backend.admin.discover("rbac.authorization.k8s.io/v1", "rolebindings")
    rbac = "rbac.authorization.k8s.io/v1"
    with hook_server(ported.directory / "manifest" / "sync.py") as url:
        ported.apply("my-clusterrole.yaml")
        first = run_example(ported, backend, tmp_path / "1", source, url)
        assert first.errors == [] and first.converged, first.errors
        binding = ported.get(rbac, "rolebindings", "my-clusterrole", "default")
        assert binding["roleRef"]["name"] == "my-clusterrole"
        owner = binding["metadata"]["ownerReferences"][0]
        assert (owner["kind"], owner["name"]) == ("ClusterRole", "my-clusterrole")

        backend.admin.delete(bindings, "my-clusterrole", namespace="default")
        again = run_example(ported, backend, tmp_path / "2", source, url)
        assert again.errors == [] and again.converged, again.errors
        assert ported.get(rbac, "rolebindings", "my-clusterrole", "default")

    roles = backend.admin.discover(rbac, "clusterroles")
    backend.admin.delete(roles, "my-clusterrole")
    with pytest.raises(NotFound):
        ported.get(rbac, "clusterroles", "my-clusterrole")
    # test.sh stops at the ClusterRole; the cascade across scopes is what it is there for
    eventually(
        lambda: _absent(ported, rbac, "rolebindings", "my-clusterrole", "default"),
        what="the RoleBinding garbage-collected with its ClusterRole",
        timeout=30,
    )


@pytest.mark.parametrize("source", port_sources())
def test_crd_roles(
    backend: Backend, mc_example: Callable[[str], Example], tmp_path: Path, source: str
) -> None:
    """A DecoratorController on CustomResourceDefinitions with an annotation attaches a
    ClusterRole named after the CRD (examples/crd-roles/test.sh)."""
    ported = mc_example("crd-roles")
    with hook_server(ported.directory / "manifest" / "sync.py") as url:
        ported.apply("v1/my-crd.yaml")
        result = run_example(ported, backend, tmp_path, source, url)
    assert result.errors == [] and result.converged, result.errors
    role = ported.get("rbac.authorization.k8s.io/v1", "clusterroles", "my-tests.ctl.rlg.io-reader")
    assert role["metadata"]["name"] == "my-tests.ctl.rlg.io-reader"
    assert role["metadata"]["ownerReferences"][0]["kind"] == "CustomResourceDefinition"


@pytest.mark.parametrize("source", port_sources())
def test_globalconfigmap(
    backend: Backend, mc_example: Callable[[str], Example], tmp_path: Path, source: str
) -> None:
    """A cluster-scoped parent copies a ConfigMap into every other namespace through its
    customize hook's related objects; its status schema has no observedGeneration
    (examples/globalconfigmap/test.sh)."""
    ported = mc_example("globalconfigmap")
    result, again = ran(ported, "example-globalconfigmap.yaml", backend, tmp_path, source, runs=2)
    # It copies into every namespace there is, and earlier tests leave namespaces being deleted
    # behind them, which refuse new objects: Metacontroller meets the same refusal there. Those
    # are the only errors allowed; the example's own namespaces get their copies.
    assert _beyond_terminating(result.errors) == [] and not result.not_converging
    assert _beyond_terminating(again.errors) == []
    assert again.actions_by_kind(applied=True) == {}, again.actions_by_kind()
    for namespace in ("first", "second", "third"):
        copied = ported.get("v1", "configmaps", "globalsettings", namespace)
        assert copied["data"] == {"some": "value", "other": "value"}
    parent = ported.get("examples.metacontroller.io/v1alpha1", "globalconfigmaps", "globalsettings")
    assert parent["status"]["working"] == "fine"


def _beyond_terminating(errors: list[str]) -> list[str]:
    """The errors but those of copies into namespaces going away: being deleted, or gone
    between the run's LIST and its create."""
    return [
        e
        for e in errors
        if "because it is being terminated" not in e
        and not re.search(r'NotFound \(404\): namespaces "[^"]+" not found', e)
    ]


def _absent(example: Example, api_version: str, resource: str, name: str, namespace: str) -> bool:
    try:
        example.get(api_version, resource, name, namespace)
    except NotFound:
        return True
    return False


def _hook_from_configmap(example: Example, directory: Path) -> Path:
    """The example's hook, kept in its controller ConfigMap's `sync.py` (mounted in a Pod in
    Metacontroller's setup), as a file."""
    for path in sorted((example.directory / "manifest").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc.get("kind") == "ConfigMap" and "sync.py" in doc.get("data", {}):
                directory.mkdir(parents=True, exist_ok=True)
                script = directory / "sync.py"
                script.write_text(doc["data"]["sync.py"])
                return script
    raise LookupError(f"{example.name}: no ConfigMap holds sync.py")


@pytest.mark.parametrize("source", port_sources())
def test_update_strategy(
    backend: Backend, mc_example: Callable[[str], Example], tmp_path: Path, source: str
) -> None:
    """OnDelete keeps a child as it is when the parent changes, until someone deletes it;
    Recreate deletes and recreates a child only when a field the controller manages
    changes: a field another manager added changes nothing, and is gone after a recreation
    (examples/update-strategy/test.sh). Its waits of 30 s and 10 s (three sync cycles) are
    each two runs here: a run ends converged, and the second sends no writes."""
    ported = mc_example("update-strategy")
    ported.install_crds()
    configmaps = backend.admin.discover("v1", "configmaps")
    kubectl = backend.as_manager("kubectl-patch")
    odd_cm, rcd_cm = "odd-instance-data", "rcd-instance-data"

    def cm(name: str) -> Obj:
        return ported.get("v1", "configmaps", name, "default")

    def patch_cm(name: str) -> None:
        current = cm(name)
        current["data"]["side-effect"] = "injected"
        kubectl.update(configmaps, current)

    def set_config(resource: str, name: str, value: str) -> None:
        parents = backend.admin.discover("ctl.example.com/v1", resource)
        parent = backend.admin.get(parents, name, namespace="default")
        parent["spec"]["configData"] = value
        backend.admin.update(parents, parent)

    def settled(step: str) -> None:
        for i in range(2):
            result = run_example(ported, backend, tmp_path / f"{step}{i}", source, url)
            assert result.errors == [] and result.converged, result.errors
        assert result.actions_by_kind() == {}, (step, result.actions_by_kind())

    with hook_server(_hook_from_configmap(ported, tmp_path / "hook")) as url:
        # Phase 1: both parents at v1
        ported.apply("my-ondeletedemo.yaml")
        ported.apply("my-recreatedemo.yaml")
        settled("phase1-")
        assert cm(odd_cm)["data"]["value"] == "v1" and cm(rcd_cm)["data"]["value"] == "v1"

        # Phase 2: a field of another manager in both children
        patch_cm(odd_cm)
        patch_cm(rcd_cm)
        assert cm(odd_cm)["data"]["side-effect"] == cm(rcd_cm)["data"]["side-effect"]
        rcd_uid, odd_uid = cm(rcd_cm)["metadata"]["uid"], cm(odd_cm)["metadata"]["uid"]

        # Phase 2b: it makes no recreation
        settled("phase2-")
        assert cm(rcd_cm)["metadata"]["uid"] == rcd_uid
        assert cm(rcd_cm)["data"]["side-effect"] == "injected"

        # Phase 3: both parents at v2
        set_config("ondeletedemos", "odd-instance", "v2")
        set_config("recreatedemos", "rcd-instance", "v2")
        settled("phase3-")
        recreated = cm(rcd_cm)
        assert recreated["data"]["value"] == "v2"
        assert "side-effect" not in recreated["data"]  # deleted and created again
        assert recreated["metadata"]["uid"] != rcd_uid

        # ... and no recreation loop once settled, with the other manager's field back
        patch_cm(rcd_cm)
        settled("phase3b-")
        assert cm(rcd_cm)["metadata"]["uid"] == recreated["metadata"]["uid"]
        assert cm(rcd_cm)["data"] == {"value": "v2", "side-effect": "injected"}
        # OnDelete: not updated, the other manager's field kept
        assert cm(odd_cm)["data"] == {"value": "v1", "side-effect": "injected"}
        assert cm(odd_cm)["metadata"]["uid"] == odd_uid

        # Phase 4: deleted by hand, the OnDelete child comes back at v2, fresh
        backend.admin.delete(configmaps, odd_cm, namespace="default")
        settled("phase4-")
        assert cm(odd_cm)["data"] == {"value": "v2"}


def _webhook_auth_credentials(example: Example, directory: Path) -> dict[str, Path]:
    """What test.sh makes with openssl: a CA, the server's certificate for the hook
    Service's names (and 127.0.0.1, the loopback address standing for that Service), a
    client certificate; the Secrets and ConfigMap it creates from them; the files the hook
    server's Pod would mount (`/certs`, `/token`)."""
    ca = trustme.CA()
    service = "webhook-auth-controller.metacontroller"
    server = ca.issue_cert(service, f"{service}.svc", f"{service}.svc.cluster.local", "127.0.0.1")
    client = ca.issue_cert("metacontroller")
    ca_pem = ca.cert_pem.bytes().decode()
    server_crt = server.cert_chain_pems[0].bytes().decode()
    server_key = server.private_key_pem.bytes().decode()

    def secret(name: str, data: dict[str, str]) -> Obj:
        encoded = {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}
        meta = {"name": name, "namespace": "metacontroller"}
        return {"apiVersion": "v1", "kind": "Secret", "metadata": meta, "data": encoded}

    example.create(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "metacontroller"}},
        secret("webhook-auth-server", {"tls.crt": server_crt, "tls.key": server_key}),
        secret(
            "webhook-auth-client",
            {
                "tls.crt": client.cert_chain_pems[0].bytes().decode(),
                "tls.key": client.private_key_pem.bytes().decode(),
            },
        ),
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "webhook-auth-ca", "namespace": "metacontroller"},
            "data": {"ca.crt": ca_pem},
        },
    )
    certs, token = directory / "certs", directory / "token"
    certs.mkdir(parents=True)
    token.mkdir()
    (certs / "tls.crt").write_text(server_crt)
    (certs / "tls.key").write_text(server_key)
    (certs / "ca.crt").write_text(ca_pem)
    # the token Secret of controller-with-good-auth.yaml, as the server's Pod mounts it
    (token / "token").write_text("e2e-integration-bearer-token")
    return {"CERT_DIR": certs, "TOKEN_FILE": token / "token"}


@pytest.mark.parametrize("source", port_sources())
def test_webhook_auth(
    backend: Backend, mc_example: Callable[[str], Example], tmp_path: Path, source: str
) -> None:
    """Hooks called over mutual TLS with a bearer token, all from `spec.endpointConfigs`
    (a CA from a ConfigMap, the token and the client certificate from Secrets): the secret
    is propagated; the controller whose token is wrong gets 401, which is a SyncError Event
    on its parent (in `default`, the parent being cluster-scoped) and no child, while the
    other parent carries on (examples/webhook-auth/test.sh)."""
    ported = mc_example("webhook-auth")
    paths = _webhook_auth_credentials(ported, tmp_path / "pod")
    ported.install_crds("manifest/crd.yaml")
    ported.apply("manifest/namespaces.yaml")
    ported.apply("manifest/controller-with-good-auth.yaml")  # the token Secrets
    ported.apply("manifest/controller-with-wrong-auth.yaml")
    script = ported.directory / "manifest" / "sync.py"
    with hook_server(script, scheme="https", paths=paths) as url:
        ported.apply("manifest/example-with-good-auth.yaml")
        result = run_example(ported, backend, tmp_path / "good", source, url)
        assert result.errors == [] and result.converged, result.errors
        for namespace in ("secure-alpha", "secure-beta"):
            assert ported.get("v1", "secrets", "shareable", namespace)["data"]["some"]
        with pytest.raises(NotFound):  # no matching label
            ported.get("v1", "secrets", "shareable", "secure-gamma")
        parents = "securesecretpropagations"
        group = "examples.metacontroller.io/v1alpha1"
        parent = ported.get(group, parents, "secure-secret-propagation")
        assert parent["status"]["working"] == "fine"

        ported.apply("manifest/example-with-wrong-auth.yaml")
        wrong = run_example(ported, backend, tmp_path / "wrong", source, url)
    assert [e for e in wrong.errors if "secure-secret-propagation-invalid" in e], wrong.errors
    assert all("secure-secret-propagation-invalid" in e for e in wrong.errors), wrong.errors
    assert any("401" in e for e in wrong.errors), wrong.errors
    assert "e2e-integration-bearer-token" not in " ".join(wrong.errors)
    messages = sync_errors(backend, "default", "secure-secret-propagation-invalid")
    assert messages and all("wrong-token" not in m for m in messages), messages
    with pytest.raises(NotFound):
        ported.get("v1", "secrets", "shareable-invalid", "secure-alpha")
    assert ported.get("v1", "secrets", "shareable", "secure-alpha")  # the valid one kept


@pytest.mark.parametrize("source", port_sources())
def test_target_label_selector(
    backend: Backend, mc_example: Callable[[str], Example], tmp_path: Path, source: str
) -> None:
    """secretpropagation with its controller labelled `controller-group: cicd`, run with
    `--target-label-selector controller-group=cicd` (where test.sh restarts Metacontroller
    with that flag): the labelled controller runs; one the selector does not match is left
    alone (examples/target-label-selector/test.sh)."""
    ported = mc_example("target-label-selector")
    propagation = ported.directory.parent / "secretpropagation"
    ported.install_crds("../secretpropagation/v1/crdv1.yaml")
    ported.apply("../secretpropagation/example-secret.yaml")
    (labelled,) = ported.controllers()
    assert labelled["metadata"]["labels"] == {"controller-group": "cicd"}
    with hook_server(propagation / "manifest" / "sync.py") as url:
        skipped = run_example(
            ported,
            backend,
            tmp_path / "other",
            source,
            url,
            target_label_selector="controller-group=other",
        )
        assert skipped.errors == [] and skipped.actions_by_kind() == {}, skipped.actions_by_kind()
        with pytest.raises(NotFound):
            ported.get("v1", "secrets", "shareable", "alpha")

        selected = run_example(
            ported,
            backend,
            tmp_path / "cicd",
            source,
            url,
            target_label_selector="controller-group=cicd",
        )
    assert selected.errors == [] and selected.converged, selected.errors
    for namespace in ("alpha", "beta"):
        assert ported.get("v1", "secrets", "shareable", namespace)["metadata"]["name"]
    parent = ported.get(
        "examples.metacontroller.io/v1alpha1", "secretpropagations", "secret-propagation"
    )
    assert parent["status"]["working"] == "fine"
