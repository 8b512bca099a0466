"""Controllers as a cluster running Metacontroller stores them: its own CRDs installed (vendored
in tests/data/metacontroller), the controllers created in the cluster, `reconcile` reading them
from there. Its CRDs default `version: v1` on every hook; such a controller runs. A hook its
schema lists and no Metacontroller release calls (`postUpdateChild`) is not called either, and a
warning names it. With our CRDs, the fields we read are kept by the API server (not pruned), so
none is dropped in silence."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
import yaml

from reconcile.cluster import ApiError
from reconcile.cluster.types import Obj, ResourceInfo
from reconcile.crds import CRD_FILES
from reconcile.specs.composite import parse_composite_controller
from reconcile.specs.map_controller import parse_map_controller
from tests.support.backends import Backend
from tests.support.controllers import composite, run, webhook
from tests.support.controlplane import CURRENT_RELEASE, OLDEST_RELEASE
from tests.support.hookserver import serve
from tests.support.mc_crds import OURS, THEIRS, crds_installed, created_as_stored
from tests.support.poll import eventually

pytestmark = pytest.mark.releases(
    CURRENT_RELEASE,
    OLDEST_RELEASE,
    why="Metacontroller's own CRDs, as clusters of its era (1.20) and today's store them",
)

CM = [("v1", "configmaps", "InPlace")]
MAP_CRD = next(
    doc
    for path in CRD_FILES
    for doc in yaml.safe_load_all(path.read_text())
    if doc and doc["spec"]["names"]["kind"] == "MapController"
)


def parent(widgets: ResourceInfo, name: str, namespace: str) -> Obj:
    return {
        "apiVersion": widgets.api_version,
        "kind": widgets.kind,
        "metadata": {"name": name, "namespace": namespace, "labels": {"controller": name}},
        "spec": {"selector": {"matchLabels": {"app": name}}},
    }


def configmap(name: str, app: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"app": app}},
        "data": {"from": "hook"},
    }


def test_a_controller_stored_under_metacontrollers_crds_runs(
    backend: Backend, namespace: str, widgets: ResourceInfo, cms: ResourceInfo
) -> None:
    backend.admin.create(widgets, parent(widgets, "stored", namespace))
    backend.admin.create(widgets, parent(widgets, "ignored", namespace))

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        name = request["parent"]["metadata"]["name"]
        return {"children": [configmap(f"{name}-child", name)]}

    with serve(sync) as hook, crds_installed(backend, THEIRS) as controllers:
        stored_name = f"stored-{namespace}"
        wanted = composite(stored_name, widgets, CM, {"sync": webhook(hook.url)})
        wanted["spec"]["parentResource"]["labelSelector"] = {
            "matchLabels": {"controller": "stored"}
        }
        stored = created_as_stored(backend, controllers, wanted, "spec.hooks.sync.version")
        assert stored["spec"]["hooks"]["sync"]["version"] == "v1"  # Metacontroller's default

        ignored_name = f"ignored-{namespace}"
        ignored = composite(ignored_name, widgets, CM, {"sync": webhook(hook.url)})
        ignored["spec"]["hooks"]["postUpdateChild"] = webhook(hook.url)  # called by no release
        ignored["spec"]["parentResource"]["labelSelector"] = {
            "matchLabels": {"controller": "ignored"}
        }
        created_as_stored(backend, controllers, ignored, "spec.hooks.postUpdateChild")
        try:
            result = run(
                backend,
                controllers_from_cluster=True,
                only_controllers=frozenset({stored_name, ignored_name}),
            )
        finally:
            for name in (stored_name, ignored_name):
                backend.delete_quietly(controllers, name, None)
        assert {r["parent"]["metadata"]["name"] for r in hook.requests} == {"stored", "ignored"}
    assert backend.admin.get(cms, "stored-child", namespace=namespace)
    assert backend.admin.get(cms, "ignored-child", namespace=namespace)
    assert result.errors == []
    assert [w for w in result.warnings if ignored_name in w] == [
        f"CompositeController {ignored_name}: spec.hooks.postUpdateChild: ignored: no "
        "Metacontroller release calls it, and reconcile does not either"
    ]


def test_a_command_hook_stored_under_metacontrollers_crds_is_refused_naming_the_cause(
    backend: Backend, widgets: ResourceInfo
) -> None:
    """Metacontroller's CRDs do not declare our command hook, so the API server drops it: the
    controller read back has no hook, and the error says why and what to install."""
    with crds_installed(backend, THEIRS) as controllers:
        name = "command-under-theirs"
        wanted = composite(name, widgets, CM, {"sync": {"command": {"argv": ["true"]}}})
        stored = backend.admin.create(controllers, wanted)
        try:
            assert stored["spec"]["hooks"]["sync"] == {"version": "v1"}  # command dropped
            result = run(backend, controllers_from_cluster=True, only_controllers=frozenset({name}))
        finally:
            backend.delete_quietly(controllers, name, None)
    assert result.errors == [
        f"CompositeController {name}: spec.hooks.sync.webhook: exactly one of webhook and "
        "command must be set, and neither is (read from a cluster, a command hook is dropped "
        "by a CRD that does not declare it, as Metacontroller's own do not: install "
        "reconcile's CRDs, `kubectl apply -k manifests/crds`)"
    ]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        (
            "spec.hooks.sync.webhook.authorization",
            {"type": "Token", "secretRef": {"name": "t", "namespace": "n", "key": "token"}},
        ),
        ("spec.endpointConfigs", [{"host": "hooks.example", "caBundle": {"inline": "PEM"}}]),
        ("spec.hooks.sync.version", "v2"),
        ("spec.hooks.sync.webhook.responseUnMarshallMode", "strict"),
    ],
)
def test_our_crds_keep_every_field_we_read(
    backend: Backend, widgets: ResourceInfo, field: str, value: Any
) -> None:
    """Not pruned by the API server on the way in, so a controller read from the cluster is
    the one its author wrote."""
    with crds_installed(backend, OURS) as controllers:
        name = f"kept-{abs(hash(field)) % 10**8}"
        obj = composite(name, widgets, CM, {"sync": webhook("https://hooks.example/")})
        node = obj
        *parents, last = field.split(".")
        for step in parents:
            node = node.setdefault(step, {})
        node[last] = value
        try:
            stored = created_as_stored(backend, controllers, obj, field)
        finally:
            with contextlib.suppress(ApiError):
                backend.admin.delete(controllers, name)
    read = parse_composite_controller(stored)
    sync = read.hooks.sync
    assert sync.webhook is not None
    kept = {
        "spec.hooks.sync.webhook.authorization": sync.webhook.security.auth_scheme == "Token",
        "spec.endpointConfigs": sync.webhook.security.ca_inline == "PEM",
        "spec.hooks.sync.version": sync.uniform_keys,
        "spec.hooks.sync.webhook.responseUnMarshallMode": sync.strict,
    }
    assert kept[field]


def test_our_mapcontroller_crd_keeps_the_tls_settings_per_host(backend: Backend) -> None:
    """`spec.endpointConfigs`, which MapControllers read as the other kinds do: not pruned."""
    name = "kept-endpoint-configs"
    obj = {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": "MapController",
        "metadata": {"name": name},
        "spec": {
            "parentResource": {"apiVersion": "example.com/v1", "resource": "schedules"},
            "inputResources": [{"apiVersion": "v1", "resource": "persistentvolumeclaims"}],
            "outputResources": [{"apiVersion": "v1", "resource": "configmaps"}],
            "hooks": {"map": {"webhook": {"url": "https://hooks.example/map"}}},
            "endpointConfigs": [{"host": "hooks.example", "caBundle": {"inline": "PEM"}}],
        },
    }
    with crds_installed(backend, {**OURS, "mapcontrollers": MAP_CRD}):
        maps = eventually(
            lambda: backend.cluster.discover("metacontroller.k8s.io/v1alpha1", "mapcontrollers"),
            what="mapcontrollers served",
        )
        try:
            stored = created_as_stored(backend, maps, obj, "spec.endpointConfigs")
        finally:
            with contextlib.suppress(ApiError):
                backend.admin.delete(maps, name)
    webhook_spec = parse_map_controller(stored).hooks.map.webhook
    assert webhook_spec is not None and webhook_spec.security.ca_inline == "PEM"


def test_a_controller_error_is_an_event_on_the_controller_object(
    backend: Backend, widgets: ResourceInfo
) -> None:
    """As Metacontroller records them: a controller that cannot run (here, its parent resource
    is unknown) gets a Warning SyncError Event on its own object, besides the report."""
    with crds_installed(backend, OURS) as controllers:
        name = f"unknown-parent-{abs(hash(widgets.group)) % 10**8}"
        obj = composite(name, widgets, CM, {"sync": webhook("http://hooks.example/")})
        obj["spec"]["parentResource"]["resource"] = "nosuchthings"
        stored = created_as_stored(backend, controllers, obj, "spec.parentResource")
        try:
            result = run(backend, controllers_from_cluster=True, only_controllers=frozenset({name}))
        finally:
            with contextlib.suppress(ApiError):
                backend.admin.delete(controllers, name)
    assert any("nosuchthings" in e for e in result.errors), result.errors
    events = backend.admin.discover("v1", "events")
    recorded = [
        e
        for e in backend.admin.list(events, namespace="default").items
        if e["involvedObject"].get("uid") == stored["metadata"]["uid"]
    ]
    assert [(e["type"], e["reason"]) for e in recorded] == [("Warning", "SyncError")]
    assert "nosuchthings" in recorded[0]["message"]
    assert recorded[0]["involvedObject"]["kind"] == "CompositeController"
