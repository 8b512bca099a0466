"""One parent of each kind through the kind's pieces, in the order a pass takes them (resolve,
select, observe, hook requests, the answers as one, plan), with plain dicts: a view of listed
objects and canned hook answers, no cluster and no hook called (engine/flow.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from reconcile.engine.actions import ActionKind
from reconcile.engine.composite.kind import REVISIONS, CompositeKind
from reconcile.engine.composite.revisions import REVISION_RESOURCE, Revision, parent_patch
from reconcile.engine.decorator.kind import DecoratorKind
from reconcile.engine.finalizers import Mode
from reconcile.engine.flow import Facts, Named, ParentKind, Resolved, Selected
from reconcile.engine.map_controller.inputs import MAP_KEY_LABEL, map_key
from reconcile.engine.map_controller.kind import MapKind
from reconcile.engine.ownership import owner_reference
from reconcile.engine.responses import SyncResponse
from reconcile.objects.meta import Obj, controller_ref, name_of, namespace_of
from reconcile.objects.resource import ResourceInfo
from reconcile.specs.composite import parse_composite_controller
from reconcile.specs.decorator import parse_decorator_controller
from reconcile.specs.map_controller import parse_map_controller

THINGS = ResourceInfo("example.com", "v1", "things", "Thing", True, has_status=True)
PODS = ResourceInfo("", "v1", "pods", "Pod", True)
CONFIGMAPS = ResourceInfo("", "v1", "configmaps", "ConfigMap", True)
SERVICES = ResourceInfo("", "v1", "services", "Service", True)
RESOURCES = {
    ("example.com/v1", "things"): THINGS,
    ("v1", "pods"): PODS,
    ("v1", "configmaps"): CONFIGMAPS,
    ("v1", "services"): SERVICES,
    ("metacontroller.k8s.io/v1alpha1", "controllerrevisions"): REVISION_RESOURCE,
}
HOOK = {"webhook": {"url": "http://hooks.example/"}}


class DictView:
    """The pass's snapshot as plain dicts."""

    def __init__(self, *objects: tuple[ResourceInfo, Obj]) -> None:
        self.by_resource: dict[ResourceInfo, list[Obj]] = {}
        for resource, obj in objects:
            self.by_resource.setdefault(resource, []).append(obj)

    def objects(self, resource: ResourceInfo) -> list[Obj]:
        return self.by_resource.get(resource, [])

    def in_namespace(self, resource: ResourceInfo, namespace: str | None) -> list[Obj]:
        objects = self.objects(resource)
        return [o for o in objects if namespace is None or namespace_of(o) == namespace]

    def controlled_by(self, resource: ResourceInfo, owner_uid: str) -> list[Obj]:
        return [
            o for o in self.objects(resource) if (controller_ref(o) or {}).get("uid") == owner_uid
        ]

    def claim_candidates(
        self, resource: ResourceInfo, owner_uid: str, namespace: str | None
    ) -> list[Obj]:
        orphans = [o for o in self.in_namespace(resource, namespace) if controller_ref(o) is None]
        return self.controlled_by(resource, owner_uid) + orphans

    def find(self, resource: ResourceInfo, namespace: str, name: str) -> Obj | None:
        found = (
            o for o in self.objects(resource) if (namespace_of(o), name_of(o)) == (namespace, name)
        )
        return next(found, None)


def resolved(named: Sequence[Named]) -> Resolved:
    return Resolved({n.field: RESOURCES[(n.api_version, n.resource)] for n in named})


def bound(kind: ParentKind[Any, Any, Any, Any]) -> ParentKind[Any, Any, Any, Any]:
    kind.bind(resolved(kind.named()))
    return kind


def controller(kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": kind,
        "metadata": {"name": "c"},
        "spec": spec,
    }


def thing(name: str, **meta: Any) -> Obj:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": {
            "name": name,
            "namespace": "ns",
            "uid": f"uid-{name}",
            "generation": 1,
            **meta,
        },
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "image": "b"},
    }


def pod(name: str, image: str, owner: Obj | None = None) -> Obj:
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "labels": {"app": "web"}}
    if owner is not None:
        meta["ownerReferences"] = [owner_reference(owner)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"image": image}}


def composite(method: str) -> CompositeKind:
    child = {"apiVersion": "v1", "resource": "pods", "updateStrategy": {"method": method}}
    spec = {
        "parentResource": {
            "apiVersion": "example.com/v1",
            "resource": "things",
            "revisionHistory": {"fieldPaths": ["spec.image"]},
        },
        "childResources": [child],
        "hooks": {"sync": HOOK},
    }
    kind = CompositeKind(parse_composite_controller(controller("CompositeController", spec)))
    bound(kind)
    return kind


def test_a_composite_parent_without_a_rolling_child_is_one_revision() -> None:
    kind = composite("InPlace")
    assert [n.field for n in kind.named()] == ["spec.parentResource", "spec.childResources[0]"]
    parent = thing("web")
    view = DictView((THINGS, parent), (PODS, pod("web-0", "a", parent)))
    (selected,) = kind.select(view)
    assert selected.mode is Mode.SYNC
    seen = kind.observe(selected, view, Facts())
    (request,) = kind.requests(seen, {})
    assert request.body["parent"] is parent and list(request.body["children"]["Pod.v1"]) == [
        "web-0"
    ]
    answer = SyncResponse(status={"ready": 1}, children=[pod("web-0", "b")])
    merged = kind.respond(seen, [answer])
    assert merged.response is answer and merged.rollout is None
    plan = kind.plan(seen, merged)
    assert plan.together and plan.rollout is None
    (part,) = plan.plans
    assert [(a.kind, a.name) for a in part.actions] == [
        (ActionKind.UPDATE, "web-0"),
        (ActionKind.STATUS, "web"),
    ]


def test_a_rolling_parent_asks_each_live_revision_and_records_the_move_first() -> None:
    kind = composite("RollingInPlace")
    revisions = kind.named()[1]
    assert (revisions.field, revisions.resource) == (REVISIONS, "controllerrevisions")
    assert revisions.needed_for.startswith("rolling updates need the ControllerRevision CRD")
    parent = thing("web")
    old_patch = {"spec": {"image": "a"}}
    old = Revision.new(THINGS, parent, old_patch).with_children({("", "Pod"): ["web-0"]})
    stored = old.to_object(parent, THINGS, {"app": "web"})
    stored["metadata"]["creationTimestamp"] = "2024-01-01T00:00:00Z"
    view = DictView(
        (THINGS, parent), (PODS, pod("web-0", "a", parent)), (REVISION_RESOURCE, stored)
    )
    (selected,) = kind.select(view)
    seen = kind.observe(selected, view, Facts())
    latest, older = kind.requests(seen, {})
    # the hook sees the parent as each revision has it
    assert latest.body["parent"]["spec"]["image"] == "b"
    assert older.body["parent"]["spec"]["image"] == "a"
    assert parent_patch(older.body["parent"], ["spec.image"]) == old_patch
    answers = [SyncResponse(status={}, children=[pod("web-0", image)]) for image in ("b", "a")]
    merged = kind.respond(seen, answers)
    assert merged.rollout is not None
    assert [m.child.name for m in merged.rollout.moves] == ["web-0"]
    plan = kind.plan(seen, merged)
    assert not plan.together and plan.rollout is not None and plan.rollout.moved == ("Pod web-0",)
    (part,) = plan.plans
    kinds = [(a.kind, a.resource.kind) for a in part.actions]
    # the revisions first: the latest created with the child, the old one left without it
    assert kinds[:2] == [
        (ActionKind.CREATE, "ControllerRevision"),
        (ActionKind.DELETE, "ControllerRevision"),
    ]
    assert (ActionKind.UPDATE, "Pod") in kinds[2:]


def test_a_decorator_target_is_synced_or_only_loses_the_finalizer() -> None:
    spec = {
        "resources": [
            {
                "apiVersion": "example.com/v1",
                "resource": "things",
                "labelSelector": {"matchLabels": {"decorate": "yes"}},
            }
        ],
        "attachments": [{"apiVersion": "v1", "resource": "configmaps"}],
        "hooks": {"sync": HOOK},
    }
    kind = bound(DecoratorKind(parse_decorator_controller(controller("DecoratorController", spec))))
    ours = "metacontroller.io/decoratorcontroller-c"
    selected_target = thing("in", labels={"decorate": "yes"})
    opted_out = thing("out", finalizers=[ours])
    view = DictView((THINGS, selected_target), (THINGS, opted_out), (THINGS, thing("never")))
    modes = {name_of(s.parent): s.mode for s in kind.select(view)}
    assert modes == {"in": Mode.SYNC, "out": Mode.REMOVE_FINALIZER}
    seen = kind.observe(Selected(opted_out, THINGS, Mode.REMOVE_FINALIZER), view, Facts())
    assert kind.requests(seen, {}) == [] and kind.related(seen) is None
    (part,) = kind.plan(seen, kind.respond(seen, [])).plans
    (action,) = part.actions
    assert action.kind is ActionKind.REMOVE_FINALIZER and action.after is not None
    assert "finalizers" not in action.after["metadata"]
    seen = kind.observe(
        Selected(selected_target, THINGS, Mode.SYNC), view, Facts(stamp_generation=True)
    )
    (request,) = kind.requests(seen, {})
    assert request.body["object"] is selected_target
    answer = request.parse({"labels": {"seen": "yes"}, "attachments": [], "status": {"ok": True}})
    (part,) = kind.plan(seen, kind.respond(seen, [answer])).plans
    update, status = part.actions
    assert update.after is not None and update.after["metadata"]["labels"]["seen"] == "yes"
    # a decorator's status gets no observedGeneration, whatever the facts say
    assert status.after is not None and status.after["status"] == {"ok": True}


def test_a_map_parent_asks_per_input_and_per_detached_key() -> None:
    spec = {
        "parentResource": {"apiVersion": "example.com/v1", "resource": "things"},
        "inputResources": [{"apiVersion": "v1", "resource": "services"}],
        "outputResources": [{"apiVersion": "v1", "resource": "configmaps"}],
        "hooks": {"map": HOOK, "tombstone": HOOK},
    }
    kind = bound(MapKind(parse_map_controller(controller("MapController", spec))))
    parent = {**thing("m"), "spec": {}}
    inputs = [
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": n, "namespace": "ns", "uid": n},
        }
        for n in ("a", "b")
    ]
    detached: Obj = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "gone-cfg",
            "namespace": "ns",
            "labels": {MAP_KEY_LABEL: "0" * 40},
            "ownerReferences": [owner_reference(parent)],
        },
    }
    view = DictView((THINGS, parent), *((SERVICES, i) for i in inputs), (CONFIGMAPS, detached))
    (selected,) = kind.select(view)
    assert kind.mode_name(selected.mode) == "map"
    seen = kind.observe(selected, view, Facts())
    requests = kind.requests(seen, {})
    assert [r.hook.name for r in requests] == ["map", "map", "tombstone"]
    assert [r.key for r in requests] == [map_key(inputs[0]), map_key(inputs[1]), "0" * 40]
    made = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a-cfg"}}
    # b's call failed (None): its key is left as it is; the tombstone keeps nothing
    response = kind.respond(seen, [[made], None, []])
    assert [k.input.obj for k in response.live] == [inputs[0]]
    plan = kind.plan(seen, response)
    by_key = {p.key: [(a.kind, a.name) for a in p.actions] for p in plan.plans}
    assert by_key == {
        map_key(inputs[0]): [(ActionKind.CREATE, "a-cfg")],
        "0" * 40: [(ActionKind.DELETE, "gone-cfg")],
    }
    assert plan.then is not None
    done = [a for p in plan.plans for a in p.actions]
    (status_part,) = plan.then(done).plans
    (status,) = status_part.actions
    assert status.after is not None
    assert status.after["status"]["configmaps"] == {"total": 1}
    assert status.after["status"]["services"] == {"total": 2}
