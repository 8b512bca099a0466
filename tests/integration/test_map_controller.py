"""MapController on both backends, with real HTTP hooks: outputs per input (created, updated in
place, left alone by OnDelete), detached outputs decided by the tombstone hook (and asked about
again on every run), a selector change, the aggregated status with a condition count, a name
two inputs claim, failure isolation per map key, a cluster-scoped parent, a dry run, deletion
through the garbage collector, and converged runs that send no writes."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from reconcile.cluster.errors import NotFound
from reconcile.cluster.types import ResourceInfo
from reconcile.engine.map_controller.inputs import MAP_INPUT_ANNOTATION, MAP_KEY_LABEL
from reconcile.objects.meta import labels_of, metadata
from reconcile.report.json_report import report_dict
from reconcile.report.text import render_text
from tests.support.backends import Backend
from tests.support.controllers import run, webhook, write_controllers
from tests.support.hookserver import serve
from tests.support.poll import eventually

CONFIGMAPS = "ConfigMap.v1"


def map_controller(
    name: str,
    parent: ResourceInfo,
    inputs: list[tuple[str, str]],
    outputs: list[tuple[str, str, str]],
    hooks: dict[str, Any],
) -> dict[str, Any]:
    return {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": "MapController",
        "metadata": {"name": name},
        "spec": {
            "parentResource": {"apiVersion": parent.api_version, "resource": parent.resource},
            "inputResources": [{"apiVersion": a, "resource": r} for a, r in inputs],
            "outputResources": [
                {"apiVersion": a, "resource": r, "updateStrategy": {"method": m}}
                for a, r, m in outputs
            ],
            "hooks": hooks,
        },
    }


def service(name: str, namespace: str, port: int, **labels: str) -> dict[str, Any]:
    """A Service as people write it: ports as numbers, the rest left to server defaults."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {"selector": {"app": name}, "ports": [{"port": port, "targetPort": port}]},
    }


def mapper(resource: ResourceInfo, name: str, namespace: str | None, **selector: str) -> Any:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {
        "apiVersion": resource.api_version,
        "kind": resource.kind,
        "metadata": meta,
        "spec": {"selector": {"matchLabels": selector}} if selector else {},
    }


def endpoints_for(request: dict[str, Any]) -> dict[str, Any]:
    """The map hook: for a Service, a ConfigMap of its ports and a Gadget."""
    svc = request["input"]
    name = svc["metadata"]["name"]
    ports = ",".join(str(p["port"]) for p in svc["spec"]["ports"])
    gadget = request["parent"]["spec"].get("gadgetApiVersion")
    outputs: list[dict[str, Any]] = [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": f"{name}-ports"},
            "data": {"ports": ports},
        }
    ]
    if gadget:
        outputs.append(
            {
                "apiVersion": gadget,
                "kind": "Gadget",
                "metadata": {"name": name},
                "spec": {"size": "0.5", "ports": ports},
            }
        )
    return {"outputs": outputs}


@pytest.fixture
def mappers(backend: Backend) -> ResourceInfo:
    return backend.apply_crd("Mapper")


@pytest.fixture
def gadgets(backend: Backend) -> ResourceInfo:
    return backend.apply_crd("Gadget")


def names(backend: Backend, resource: ResourceInfo, namespace: str) -> set[str]:
    return {metadata(o)["name"] for o in backend.admin.list(resource, namespace=namespace).items}


@pytest.mark.parametrize("server_side", [False, True], ids=["client-side", "server-side"])
def test_outputs_follow_inputs_and_the_tombstone_hook_decides(
    backend: Backend,
    namespace: str,
    mappers: ResourceInfo,
    gadgets: ResourceInfo,
    tmp_path: Path,
    server_side: bool,
) -> None:
    services = backend.admin.discover("v1", "services")
    cms = backend.admin.discover("v1", "configmaps")
    for svc in (
        service("web-a", namespace, 80, tier="web"),
        service("web-b", namespace, 81, tier="web"),
        service("db", namespace, 5432, tier="data"),
    ):
        backend.admin.create(services, svc)
    parent = mapper(mappers, "m", namespace, tier="web")
    parent["spec"]["gadgetApiVersion"] = gadgets.api_version
    backend.admin.create(mappers, parent)

    def keep_gadgets(request: dict[str, Any]) -> dict[str, Any]:
        kept = request["outputs"].get(f"Gadget.{gadgets.api_version}", {})
        return {"outputs": list(kept.values())}

    with serve(endpoints_for) as map_hook, serve(keep_gadgets) as tombstone:
        path = write_controllers(
            tmp_path,
            map_controller(
                "ports",
                mappers,
                [("v1", "services")],
                [("v1", "configmaps", "InPlace"), (gadgets.api_version, "gadgets", "OnDelete")],
                {"map": webhook(map_hook.url), "tombstone": webhook(tombstone.url)},
            ),
        )
        first = run(backend, path, server_side_apply=server_side)
        assert first.errors == [] and first.converged, first.errors
        called = {r["input"]["metadata"]["name"] for r in map_hook.requests}
        assert called == {"web-a", "web-b"}  # db is not selected
        request = next(r for r in map_hook.requests if r["input"]["metadata"]["name"] == "web-a")
        assert set(request) == {"controller", "parent", "mapKey", "input", "outputs"}
        assert request["outputs"] == {CONFIGMAPS: {}, f"Gadget.{gadgets.api_version}": {}}
        web_a = backend.admin.get(cms, "web-a-ports", namespace=namespace)
        assert web_a["data"] == {"ports": "80"}
        assert labels_of(web_a)[MAP_KEY_LABEL] == request["mapKey"]
        assert metadata(web_a)["annotations"][MAP_INPUT_ANNOTATION] == f"Service {namespace}/web-a"
        owner = backend.admin.get(mappers, "m", namespace=namespace)
        assert metadata(web_a)["ownerReferences"][0]["uid"] == metadata(owner)["uid"]
        assert names(backend, gadgets, namespace) == {"web-a", "web-b"}
        assert owner["status"] == {
            "services": {"total": 2},
            "configmaps": {"total": 2},
            "gadgets": {"total": 2},
            "observedGeneration": 1,
        }

        # a condition on an output is counted; the request carries the observed outputs
        gadget = backend.admin.get(gadgets, "web-a", namespace=namespace)
        gadget["status"] = {"conditions": [{"type": "Ready", "status": "True"}]}
        backend.admin.update_status(gadgets, gadget)
        map_hook.requests.clear()
        assert run(backend, path, server_side_apply=server_side).errors == []
        owner = backend.admin.get(mappers, "m", namespace=namespace)
        assert owner["status"]["gadgets"] == {"total": 2, "ready": 1}
        request = next(r for r in map_hook.requests if r["input"]["metadata"]["name"] == "web-a")
        assert set(request["outputs"][CONFIGMAPS]) == {"web-a-ports"}
        mark = backend.mark()
        again = run(backend, path, server_side_apply=server_side)
        assert again.converged and again.errors == [] and len(again.passes) == 1
        assert backend.mutations_since(mark) == {}
        # one LIST per resource type (mappers, services, configmaps, gadgets), and one of each
        # custom kind's CRD (mappers, gadgets), once a run, for what the server keeps of its
        # objects; no per-input reads
        sent = backend.requests_since(mark)
        assert sent["list"] == 6 and sent["get"] == 0, sent

        # an input changes: InPlace updates the ConfigMap, OnDelete leaves the Gadget
        svc = backend.admin.get(services, "web-a", namespace=namespace)
        svc["spec"]["ports"][0]["port"] = 8080
        backend.admin.update(services, svc)
        assert run(backend, path, server_side_apply=server_side).errors == []
        updated = backend.admin.get(cms, "web-a-ports", namespace=namespace)
        assert updated["data"] == {"ports": "8080"}
        assert metadata(updated)["uid"] == metadata(web_a)["uid"]
        assert backend.admin.get(gadgets, "web-a", namespace=namespace)["spec"]["ports"] == "80"

        # an input goes: the tombstone hook keeps the Gadget, the ConfigMap is deleted
        backend.admin.delete(services, "web-b", namespace=namespace)
        eventually(lambda: "web-b" not in names(backend, services, namespace), what="web-b gone")
        gone = run(backend, path, server_side_apply=server_side)
        assert gone.errors == [] and gone.converged, gone.errors
        assert "web-b-ports" not in names(backend, cms, namespace)
        assert names(backend, gadgets, namespace) == {"web-a", "web-b"}
        asked = [r for r in tombstone.requests if r["mapKey"] == labels_of(web_a)[MAP_KEY_LABEL]]
        assert asked == []  # web-a is live
        last = tombstone.requests[-1]
        assert set(last) == {"controller", "parent", "mapKey", "outputs"}
        assert set(last["outputs"][f"Gadget.{gadgets.api_version}"]) == {"web-b"}
        owner = backend.admin.get(mappers, "m", namespace=namespace)
        assert owner["status"]["services"] == {"total": 1}
        assert owner["status"]["gadgets"]["total"] == 2
        # kept outputs are asked about again on every run
        before = len(tombstone.requests)
        mark = backend.mark()
        assert run(backend, path, server_side_apply=server_side).converged
        assert len(tombstone.requests) > before
        assert backend.mutations_since(mark) == {}

        # the selector changes: web-a leaves the selection and is detached too
        owner["spec"]["selector"] = {"matchLabels": {"tier": "data"}}
        backend.admin.update(mappers, owner)
        moved = run(backend, path, server_side_apply=server_side)
        assert moved.errors == [] and moved.converged, moved.errors
        assert names(backend, cms, namespace) >= {"db-ports"}
        assert "web-a-ports" not in names(backend, cms, namespace)
        assert names(backend, gadgets, namespace) == {"web-a", "web-b", "db"}
        owner = backend.admin.get(mappers, "m", namespace=namespace)
        assert owner["status"]["observedGeneration"] == metadata(owner)["generation"]

    # the parent goes: its outputs go with it (garbage collector). A real collector learns
    # of a CRD created moments ago (this test's gadgets) at its 30-second discovery resync
    # only, so on the real server the references it follows are checked; the memory backend's
    # collector deletes them at once.
    owner_uid = metadata(backend.admin.get(mappers, "m", namespace=namespace))["uid"]
    outputs = [
        *backend.admin.list(gadgets, namespace=namespace).items,
        backend.admin.get(cms, "db-ports", namespace=namespace),
    ]
    for output in outputs:
        (ref,) = metadata(output)["ownerReferences"]
        assert (ref["uid"], ref["controller"], ref["blockOwnerDeletion"]) == (owner_uid, True, True)
    backend.admin.delete(mappers, "m", namespace=namespace)
    if backend.plane is None:
        assert not names(backend, gadgets, namespace)
        assert not names(backend, cms, namespace) & {"db-ports"}


def test_a_name_two_inputs_claim_and_failures_stay_with_their_key(
    backend: Backend, namespace: str, mappers: ResourceInfo, tmp_path: Path
) -> None:
    services = backend.admin.discover("v1", "services")
    cms = backend.admin.discover("v1", "configmaps")
    events = backend.admin.discover("v1", "events")
    for name, port in (("one", 1001), ("two", 1002), ("three", 1003), ("broken", 1004)):
        backend.admin.create(services, service(name, namespace, port, tier="web"))
    backend.admin.create(mappers, mapper(mappers, "m", namespace, tier="web"))
    mode = {"clash": False, "fail": False}

    def hook(request: dict[str, Any]) -> dict[str, Any] | tuple[int, Any]:
        name = request["input"]["metadata"]["name"]
        if name == "broken" and mode["fail"]:
            return 500, {"error": "boom"}
        answer = endpoints_for(request)
        if mode["clash"] and name in ("one", "two"):
            answer["outputs"][0]["metadata"]["name"] = "shared"
        return answer

    with serve(hook) as server:
        path = write_controllers(
            tmp_path,
            map_controller(
                "ports",
                mappers,
                [("v1", "services")],
                [("v1", "configmaps", "InPlace")],
                {"map": webhook(server.url)},
            ),
        )
        assert run(backend, path).errors == []
        before = {
            n: backend.admin.get(cms, f"{n}-ports", namespace=namespace)
            for n in ("one", "two", "broken")
        }
        mode.update(clash=True, fail=True)
        svc = backend.admin.get(services, "three", namespace=namespace)
        svc["spec"]["ports"][0]["port"] = 3333
        backend.admin.update(services, svc)
        result = run(backend, path)
    errors = "\n".join(result.errors)
    assert f"is an output of both Service {namespace}/one and Service {namespace}/two" in errors
    assert f"map hook for Service {namespace}/broken" in errors
    # nothing of the failed keys changed: no delete, no create of the contested name
    for name, cm in before.items():
        now = backend.admin.get(cms, f"{name}-ports", namespace=namespace)
        assert metadata(now)["resourceVersion"] == metadata(cm)["resourceVersion"]
    with pytest.raises(NotFound):
        backend.admin.get(cms, "shared", namespace=namespace)
    # the other key went on
    assert backend.admin.get(cms, "three-ports", namespace=namespace)["data"] == {"ports": "3333"}
    warnings = [
        e
        for e in backend.admin.list(events, namespace=namespace).items
        if e["reason"] == "SyncError" and e["involvedObject"]["name"] == "m"
    ]
    assert any(f"Service {namespace}/broken" in e["message"] for e in warnings)


def test_a_cluster_scoped_parent_maps_every_namespace_and_a_dry_run_writes_nothing(
    backend: Backend, tmp_path: Path
) -> None:
    mappers = backend.apply_crd("Mapper", scope="Cluster")
    namespaces = backend.admin.discover("v1", "namespaces")
    services = backend.admin.discover("v1", "services")
    cms = backend.admin.discover("v1", "configmaps")
    backend.admin.create(mappers, mapper(mappers, "p1", None, tier="selected"))
    suffix = uuid.uuid4().hex[:6]
    spaces = [f"m-a-{suffix}", f"m-b-{suffix}"]
    for ns in spaces:
        backend.admin.create(
            namespaces, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
        )
        backend.admin.create(services, service("api", ns, 443, tier="selected"))
    with serve(endpoints_for) as server:
        path = write_controllers(
            tmp_path,
            map_controller(
                "ports",
                mappers,
                [("v1", "services")],
                [("v1", "configmaps", "InPlace")],
                {"map": webhook(server.url)},
            ),
        )
        mark = backend.mark()
        dry = run(backend, path, dry_run=True)
        assert backend.mutations_since(mark) == {}
        text = render_text(dry)
        for ns in spaces:
            assert f"for Service {ns}/api" in text
        report = report_dict(dry)
        actions = [
            a
            for c in report["passes"][0]["controllers"]
            for p in c["parents"]
            for a in p["actions"]
        ]
        assert {a["for"] for a in actions if a["action"] == "create"} == {
            f"Service {ns}/api" for ns in spaces
        }
        json.dumps(report)
        result = run(backend, path)
        assert result.errors == [] and result.converged, result.errors
    for ns in spaces:
        # an output under a cluster-scoped parent goes to its input's namespace
        assert backend.admin.get(cms, "api-ports", namespace=ns)["data"] == {"ports": "443"}
    parent = backend.admin.get(mappers, "p1")
    assert parent["status"]["services"] == {"total": 2}
    backend.admin.delete(mappers, "p1")
    for ns in spaces:
        backend.admin.delete(namespaces, ns)
