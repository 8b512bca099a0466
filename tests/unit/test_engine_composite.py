"""CompositeController decisions for one parent (reconcile.engine.composite.sync), table-driven
with plain dicts: modes, finalizers, selectors, the hook request, and the plan."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from reconcile.engine.actions import Action, ActionKind
from reconcile.engine.apply import LAST_APPLIED_ANNOTATION
from reconcile.engine.composite.sync import (
    CONTROLLER_UID_LABEL,
    ChildType,
    claim_children,
    finalizer,
    mode_for,
    parent_selector,
    plan_parent,
    sync_request,
)
from reconcile.engine.composite.sync import ParentContext as Context
from reconcile.engine.finalizers import Mode
from reconcile.engine.flow import Plan, customize
from reconcile.engine.ownership import ClaimResult
from reconcile.engine.responses import PlanError, SyncResponse, parse_sync_response
from reconcile.engine.status import status_action
from reconcile.objects.meta import Obj, identity
from reconcile.objects.resource import ResourceInfo
from reconcile.objects.selectors import LabelSelector, Requirement
from reconcile.specs.composite import ChildRule, CompositeController, CompositeHooks, ParentRule
from reconcile.specs.controller import UpdateMethod
from reconcile.specs.hooks import CommandSpec, HookSpec

NS = "default"
PARENT_UID = "parent-uid"
GENERATION = 3
DELETED_AT = "2024-01-01T00:00:00Z"
FINALIZER = "metacontroller.io/compositecontroller-web"
OTHER_FINALIZER = "example.com/keep"
APP = {"app": "web"}

THINGS = ResourceInfo("example.com", "v1", "things", "Thing", namespaced=True, has_status=True)
CLUSTER_THINGS = ResourceInfo(
    "example.com", "v1", "clusterthings", "ClusterThing", namespaced=False, has_status=True
)
PODS = ResourceInfo("", "v1", "pods", "Pod", namespaced=True)
CONFIGMAPS = ResourceInfo("", "v1", "configmaps", "ConfigMap", namespaced=True)
CLUSTERROLES = ResourceInfo(
    "rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", namespaced=False
)

OUR_REF: dict[str, Any] = {
    "apiVersion": "example.com/v1",
    "kind": "Thing",
    "name": "web",
    "uid": PARENT_UID,
    "controller": True,
    "blockOwnerDeletion": True,
}
CLUSTER_REF: dict[str, Any] = {**OUR_REF, "kind": "ClusterThing"}
OTHER_REF: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "ReplicaSet",
    "name": "rs",
    "uid": "rs-uid",
    "controller": True,
    "blockOwnerDeletion": True,
}


# --- builders -----------------------------------------------------------------------------


def hook(name: str) -> HookSpec:
    return HookSpec(name=name, owner="CompositeController web", command=CommandSpec(("true",)))


def make_controller(
    *,
    finalize: bool = False,
    generate_selector: bool = False,
    parent_selector_labels: dict[str, str] | None = None,
    pods: UpdateMethod = UpdateMethod.ON_DELETE,
    configmaps: UpdateMethod = UpdateMethod.ON_DELETE,
) -> CompositeController:
    return CompositeController(
        name="web",
        parent=ParentRule(
            api_version="example.com/v1",
            resource="things",
            label_selector=LabelSelector.from_labels(parent_selector_labels or {}),
        ),
        children=(
            ChildRule("v1", "pods", update_method=pods),
            ChildRule("v1", "configmaps", update_method=configmaps),
        ),
        hooks=CompositeHooks(sync=hook("sync"), finalize=hook("finalize") if finalize else None),
        raw={"kind": "CompositeController", "metadata": {"name": "web"}, "spec": {"x": 1}},
        generate_selector=generate_selector,
    )


def make_parent(
    *,
    cluster: bool = False,
    deleting: bool = False,
    finalizers: list[str] | None = None,
    labels: dict[str, str] | None = None,
    selector: Any = None,
    generation: int | None = GENERATION,
    status: Any = "converged",
) -> Obj:
    meta: dict[str, Any] = {"name": "web", "uid": PARENT_UID, "resourceVersion": "10"}
    if not cluster:
        meta["namespace"] = NS
    if generation is not None:
        meta["generation"] = generation
    if deleting:
        meta["deletionTimestamp"] = DELETED_AT
    if finalizers is not None:
        meta["finalizers"] = list(finalizers)
    if labels is not None:
        meta["labels"] = dict(labels)
    parent: Obj = {
        "apiVersion": "example.com/v1",
        "kind": "ClusterThing" if cluster else "Thing",
        "metadata": meta,
        "spec": {"selector": {"matchLabels": APP} if selector is None else selector},
    }
    if status == "converged":
        parent["status"] = {"observedGeneration": generation or 0}
    elif status is not None:
        parent["status"] = status
    return parent


def child_types(*, cluster_roles: bool = False, **methods: UpdateMethod) -> tuple[ChildType, ...]:
    types = [
        ChildType(ChildRule("v1", "pods", methods.get("pods", UpdateMethod.ON_DELETE)), PODS),
        ChildType(
            ChildRule("v1", "configmaps", methods.get("configmaps", UpdateMethod.ON_DELETE)),
            CONFIGMAPS,
        ),
    ]
    if cluster_roles:
        types.append(
            ChildType(ChildRule("rbac.authorization.k8s.io/v1", "clusterroles"), CLUSTERROLES)
        )
    return tuple(types)


def make_ctx(
    *,
    controller: CompositeController | None = None,
    parent: Obj | None = None,
    cluster: bool = False,
    pods: UpdateMethod = UpdateMethod.ON_DELETE,
    configmaps: UpdateMethod = UpdateMethod.ON_DELETE,
) -> Context:
    return Context(
        controller=controller or make_controller(pods=pods, configmaps=configmaps),
        parent=parent if parent is not None else make_parent(cluster=cluster),
        parent_resource=CLUSTER_THINGS if cluster else THINGS,
        owned=child_types(cluster_roles=cluster, pods=pods, configmaps=configmaps),
    )


def desired_pod(
    name: str,
    *,
    image: str = "nginx:1",
    labels: dict[str, str] | None = None,
    namespace: str | None = None,
    refs: list[dict[str, Any]] | None = None,
) -> Obj:
    meta: dict[str, Any] = {"name": name, "labels": dict(APP if labels is None else labels)}
    if namespace is not None:
        meta["namespace"] = namespace
    if refs is not None:
        meta["ownerReferences"] = copy.deepcopy(refs)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"containers": [{"name": "main", "image": image}]},
    }


def desired_configmap(name: str, data: dict[str, str] | None = None) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": dict(APP)},
        "data": dict(data or {"a": "1"}),
    }


def compact(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def with_last_applied(body: Obj) -> Obj:
    """What a create sends for `body` (already completed with namespace, labels, owner refs)."""
    result = copy.deepcopy(body)
    result["metadata"].setdefault("annotations", {})[LAST_APPLIED_ANNOTATION] = compact(body)
    return result


def live(sent: Obj, uid: str, *, deleting: bool = False) -> Obj:
    """`sent` as the API server stores it: server-owned metadata, a status, a defaulted field."""
    obj = copy.deepcopy(sent)
    meta = obj["metadata"]
    meta.update(uid=uid, resourceVersion="42", creationTimestamp="2024-01-01T00:00:00Z")
    if deleting:
        meta["deletionTimestamp"] = DELETED_AT
    if obj["kind"] == "Pod":
        obj["spec"]["restartPolicy"] = "Always"
        obj["status"] = {"phase": "Running"}
    return obj


def orphan(obj: Obj) -> Obj:
    result = copy.deepcopy(obj)
    result["metadata"].pop("ownerReferences", None)
    return result


def run_plan(
    ctx: Context,
    candidates: dict[str, list[Obj]],
    response: dict[str, Any],
    mode: Mode = Mode.SYNC,
) -> Plan:
    selector = parent_selector(ctx)
    claims = claim_children(ctx, selector, candidates)
    return plan_parent(ctx, mode, selector, claims, parse_sync_response(response))


def created(ctx: Context, desired: list[Obj]) -> list[Obj]:
    """What creating `desired` from scratch sends (the engine's own CREATE bodies)."""
    plan = run_plan(ctx, {}, {"children": desired})
    bodies = [a.after for a in plan.actions if a.kind is ActionKind.CREATE and a.after is not None]
    assert len(bodies) == len(desired)
    return bodies


def summary(plan: Plan) -> list[tuple[ActionKind, str]]:
    return [(a.kind, identity(a.target)) for a in plan.actions]


# --- mode_for -----------------------------------------------------------------------------


# finalize hook x our finalizer x parent deleting x parent matching labelSelector -> mode
MODE_TABLE: list[tuple[bool, bool, bool, bool, Mode]] = [
    (True, True, False, True, Mode.SYNC),
    (True, True, True, True, Mode.FINALIZE),
    (True, True, False, False, Mode.FINALIZE),
    (True, True, True, False, Mode.FINALIZE),
    (True, False, False, True, Mode.SYNC),
    (True, False, True, True, Mode.SKIP),
    (True, False, False, False, Mode.SKIP),
    (True, False, True, False, Mode.SKIP),
    (False, True, False, True, Mode.SYNC),
    (False, True, True, True, Mode.REMOVE_FINALIZER),
    (False, True, False, False, Mode.REMOVE_FINALIZER),
    (False, True, True, False, Mode.REMOVE_FINALIZER),
    (False, False, False, True, Mode.SYNC),
    (False, False, True, True, Mode.SKIP),
    (False, False, False, False, Mode.SKIP),
    (False, False, True, False, Mode.SKIP),
]


def test_the_mode_table_covers_every_combination() -> None:
    assert len({row[:4] for row in MODE_TABLE}) == len(MODE_TABLE) == 16


@pytest.mark.parametrize(("finalize", "ours", "deleting", "matching", "expected"), MODE_TABLE)
def test_mode_for(
    finalize: bool, ours: bool, deleting: bool, matching: bool, expected: Mode
) -> None:
    controller = make_controller(finalize=finalize, parent_selector_labels={"tier": "managed"})
    finalizers = [OTHER_FINALIZER, FINALIZER] if ours else [OTHER_FINALIZER]
    parent = make_parent(
        deleting=deleting,
        finalizers=finalizers,
        labels={"tier": "managed" if matching else "other"},
    )
    assert mode_for(controller, parent) is expected


def test_mode_for_another_controllers_finalizer_is_not_ours() -> None:
    controller = make_controller(finalize=True)
    parent = make_parent(
        deleting=True, finalizers=["metacontroller.io/compositecontroller-other", OTHER_FINALIZER]
    )
    assert mode_for(controller, parent) is Mode.SKIP


def test_mode_for_an_empty_parent_selector_matches_every_parent() -> None:
    assert mode_for(make_controller(), make_parent(labels=None)) is Mode.SYNC


# --- the finalizer ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "finalize", "finalizers", "expected_kind", "expected_finalizers"),
    [
        (Mode.SYNC, True, None, ActionKind.ADD_FINALIZER, [FINALIZER]),
        (
            Mode.SYNC,
            True,
            [OTHER_FINALIZER],
            ActionKind.ADD_FINALIZER,
            [OTHER_FINALIZER, FINALIZER],
        ),
        (Mode.SYNC, True, [FINALIZER], None, None),
        (Mode.SYNC, False, [FINALIZER], ActionKind.REMOVE_FINALIZER, None),
        (
            Mode.SYNC,
            False,
            [FINALIZER, OTHER_FINALIZER],
            ActionKind.REMOVE_FINALIZER,
            [OTHER_FINALIZER],
        ),
        (Mode.SYNC, False, [OTHER_FINALIZER], None, None),
        (Mode.SYNC, False, None, None, None),
        (Mode.REMOVE_FINALIZER, False, [FINALIZER], ActionKind.REMOVE_FINALIZER, None),
        (Mode.REMOVE_FINALIZER, True, [FINALIZER], ActionKind.REMOVE_FINALIZER, None),
        (Mode.FINALIZE, True, [FINALIZER], None, None),
        (Mode.SKIP, True, None, None, None),
    ],
)
def test_the_finalizer_is_synced_before_anything_else(
    mode: Mode,
    finalize: bool,
    finalizers: list[str] | None,
    expected_kind: ActionKind | None,
    expected_finalizers: list[str] | None,
) -> None:
    parent = make_parent(finalizers=finalizers, deleting=mode is not Mode.SYNC)
    snapshot = copy.deepcopy(parent)
    ctx = make_ctx(controller=make_controller(finalize=finalize), parent=parent)
    actions = finalizer(ctx.controller).sync(ctx.parent_resource, ctx.parent, mode)
    if expected_kind is None:
        assert actions == []
        return
    [action] = actions
    assert action.kind is expected_kind
    assert action.resource == THINGS
    assert action.before is parent
    expected_after = copy.deepcopy(snapshot)
    if expected_finalizers is None:
        del expected_after["metadata"]["finalizers"]
    else:
        expected_after["metadata"]["finalizers"] = expected_finalizers
    assert action.after == expected_after
    assert parent == snapshot


# --- parent_selector ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("generate", "spec", "expected"),
    [
        (True, {}, LabelSelector((Requirement(CONTROLLER_UID_LABEL, "Equals", (PARENT_UID,)),))),
        # With generateSelector the parent's own selector is ignored, even an invalid one.
        (
            True,
            {"selector": {"matchLabels": {"bad key!": "x"}}},
            LabelSelector((Requirement(CONTROLLER_UID_LABEL, "Equals", (PARENT_UID,)),)),
        ),
        (
            False,
            {"selector": {"matchLabels": {"app": "web", "tier": "db"}}},
            LabelSelector(
                (Requirement("app", "Equals", ("web",)), Requirement("tier", "Equals", ("db",)))
            ),
        ),
        (
            False,
            {
                "selector": {
                    "matchLabels": {"app": "web"},
                    "matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["dev"]}],
                }
            },
            LabelSelector(
                (Requirement("app", "Equals", ("web",)), Requirement("env", "NotIn", ("dev",)))
            ),
        ),
        (
            False,
            {"selector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]}},
            LabelSelector((Requirement("app", "Exists"),)),
        ),
    ],
)
def test_parent_selector(generate: bool, spec: dict[str, Any], expected: LabelSelector) -> None:
    parent = make_parent()
    parent["spec"] = spec
    ctx = make_ctx(controller=make_controller(generate_selector=generate), parent=parent)
    assert parent_selector(ctx) == expected


REQUIRED = (
    "spec.selector: is required (a label selector), unless the controller sets "
    "generateSelector: true"
)


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        (None, REQUIRED),
        ({}, REQUIRED),
        ("not an object", REQUIRED),
        ({"selector": None}, REQUIRED),
        ({"selector": "app=web"}, REQUIRED),
        ({"selector": ["app"]}, REQUIRED),
        ({"selector": {}}, "spec.selector: must not be empty"),
        ({"selector": {"matchLabels": {}}}, "spec.selector: must not be empty"),
        (
            {"selector": {"matchLabels": {}, "matchExpressions": []}},
            "spec.selector: must not be empty",
        ),
        (
            {"selector": {"matchLabels": {"bad key!": "x"}}},
            "spec.selector.matchLabels: invalid label key 'bad key!'",
        ),
        (
            {"selector": {"matchLabels": "app=web"}},
            "spec.selector.matchLabels: must be a map of strings",
        ),
        (
            {"selector": {"matchExpressions": [{"key": "app", "operator": "Like"}]}},
            "spec.selector.matchExpressions[0].operator: 'Like' is not one of In, NotIn, "
            "Exists, DoesNotExist",
        ),
        (
            {"selector": {"matchExpressions": [{"key": "app", "operator": "In"}]}},
            "spec.selector.matchExpressions[0].values: required for operator In",
        ),
    ],
)
def test_parent_selector_errors_name_spec_selector(spec: Any, problem: str) -> None:
    parent = make_parent()
    if spec is None:
        del parent["spec"]
    else:
        parent["spec"] = spec
    with pytest.raises(PlanError) as info:
        parent_selector(make_ctx(parent=parent))
    assert info.value.problems == [problem]
    assert info.value.parent is parent
    assert str(info.value) == problem


# --- the hook request ---------------------------------------------------------------------


def test_sync_request_shape() -> None:
    ctx = make_ctx()
    owned = live(desired_pod("web-0", namespace=NS, refs=[OUR_REF]), "uid-0")
    stray = live(desired_pod("web-1", namespace=NS), "uid-1")
    related = {"Secret.v1": {"creds": {"kind": "Secret", "metadata": {"name": "creds"}}}}

    claims = claim_children(ctx, parent_selector(ctx), {"Pod.v1": [owned, stray]})
    request = sync_request(ctx, claims, related, finalizing=False)

    assert request == {
        "controller": ctx.controller.raw,
        "parent": ctx.parent,
        "children": {
            "Pod.v1": {
                "web-0": owned,
                # An adopted orphan is shown as ours already.
                "web-1": {
                    **stray,
                    "metadata": {**stray["metadata"], "ownerReferences": [OUR_REF]},
                },
            },
            "ConfigMap.v1": {},
        },
        "related": related,
        "finalizing": False,
    }
    assert request["controller"] is ctx.controller.raw
    assert list(request) == ["controller", "parent", "children", "related", "finalizing"]


def test_sync_request_has_every_child_key_even_when_nothing_is_observed() -> None:
    ctx = make_ctx(cluster=True)
    claims = claim_children(ctx, parent_selector(ctx), {})
    request = sync_request(ctx, claims, {}, finalizing=True)
    assert request["children"] == {
        "Pod.v1": {},
        "ConfigMap.v1": {},
        "ClusterRole.rbac.authorization.k8s.io/v1": {},
    }
    assert request["related"] == {}
    assert request["finalizing"] is True


def test_sync_request_keys_under_a_cluster_scoped_parent() -> None:
    ctx = make_ctx(cluster=True)
    pods = []
    for ns in ("team-a", "team-b"):
        pod = desired_pod("web-0", namespace=ns, refs=[CLUSTER_REF])
        pods.append(live(pod, f"uid-{ns}"))
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "web-reader", "labels": APP, "ownerReferences": [CLUSTER_REF]},
    }
    claims = claim_children(
        ctx,
        parent_selector(ctx),
        {"Pod.v1": pods, "ClusterRole.rbac.authorization.k8s.io/v1": [role]},
    )
    request = sync_request(ctx, claims, {}, finalizing=False)
    assert request["children"] == {
        "Pod.v1": {"team-a/web-0": pods[0], "team-b/web-0": pods[1]},
        "ConfigMap.v1": {},
        "ClusterRole.rbac.authorization.k8s.io/v1": {"web-reader": role},
    }


def test_claim_children_ignores_candidates_of_unknown_types() -> None:
    ctx = make_ctx()
    pod = live(desired_pod("web-0", namespace=NS, refs=[OUR_REF]), "uid-0")
    claims = claim_children(ctx, parent_selector(ctx), {"Pod.v1": [pod], "Secret.v1": [pod]})
    assert set(claims) == {"Pod.v1", "ConfigMap.v1"}
    assert claims["Pod.v1"].observed == {"web-0": pod}
    assert claims["ConfigMap.v1"] == ClaimResult()


def test_customize_request() -> None:
    ctx = make_ctx()
    call = customize(hook("customize"), ctx.controller.raw, ctx.parent, ctx.namespaced)
    assert call is not None
    assert call.body == {"controller": ctx.controller.raw, "parent": ctx.parent}
    assert customize(None, ctx.controller.raw, ctx.parent, ctx.namespaced) is None


# --- plan_parent: creates -------------------------------------------------------------------


def test_create_completes_the_desired_child() -> None:
    ctx = make_ctx()
    desired = desired_pod("web-0")
    desired["status"] = {"phase": "Pending"}  # never written
    desired["metadata"]["uid"] = "made-up"  # server-owned, never written
    response = {"children": [desired]}
    snapshot = copy.deepcopy(response)

    plan = run_plan(ctx, {}, response)

    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web-0",
            "labels": {"app": "web"},
            "namespace": NS,
            "ownerReferences": [OUR_REF],
        },
        "spec": {"containers": [{"name": "main", "image": "nginx:1"}]},
    }
    assert plan.waits == []
    [action] = plan.actions
    assert action == Action(
        ActionKind.CREATE, PODS, None, with_last_applied(body), "desired, missing"
    )
    assert action.after is not None
    assert action.after["metadata"]["annotations"] == {LAST_APPLIED_ANNOTATION: compact(body)}
    assert action.uid == ""
    assert response == snapshot


def test_create_keeps_other_owner_references_and_annotations() -> None:
    ctx = make_ctx()
    plain_ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "cm", "uid": "cm-uid"}
    desired = desired_pod("web-0", namespace=NS, refs=[plain_ref, {**OUR_REF, "name": "stale"}])
    desired["metadata"]["annotations"] = {"note": "hi"}
    [after] = created(ctx, [desired])
    assert after["metadata"]["ownerReferences"] == [plain_ref, OUR_REF]
    assert after["metadata"]["annotations"]["note"] == "hi"
    recorded = json.loads(after["metadata"]["annotations"][LAST_APPLIED_ANNOTATION])
    assert recorded["metadata"]["ownerReferences"] == [plain_ref, OUR_REF]
    assert recorded["metadata"]["annotations"] == {"note": "hi"}


def test_create_with_a_generated_selector_adds_the_controller_uid_label() -> None:
    parent = make_parent(selector={"matchLabels": {"ignored": "yes"}})
    ctx = make_ctx(controller=make_controller(generate_selector=True), parent=parent)
    [after] = created(ctx, [desired_pod("web-0", labels={"role": "db"})])
    expected_labels = {"role": "db", CONTROLLER_UID_LABEL: PARENT_UID}
    assert after["metadata"]["labels"] == expected_labels
    recorded = json.loads(after["metadata"]["annotations"][LAST_APPLIED_ANNOTATION])
    assert recorded["metadata"]["labels"] == expected_labels


def test_create_under_a_cluster_scoped_parent() -> None:
    ctx = make_ctx(cluster=True)
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "web-reader", "namespace": "ignored", "labels": APP},
        "rules": [],
    }
    plan = run_plan(ctx, {}, {"children": [desired_pod("web-0", namespace="team-a"), role]})
    assert summary(plan) == [
        (ActionKind.CREATE, "Pod team-a/web-0"),
        (ActionKind.CREATE, "ClusterRole web-reader"),
    ]
    pod_after, role_after = (a.after for a in plan.actions)
    assert pod_after is not None and role_after is not None
    assert pod_after["metadata"]["namespace"] == "team-a"
    assert pod_after["metadata"]["ownerReferences"] == [CLUSTER_REF]
    assert "namespace" not in role_after["metadata"]
    assert role_after["metadata"]["ownerReferences"] == [CLUSTER_REF]
    assert plan.actions[1].resource == CLUSTERROLES


# --- plan_parent: deletes ---------------------------------------------------------------------


def test_undesired_children_are_deleted_with_the_observed_uid() -> None:
    ctx = make_ctx()
    keep, drop, dying = created(
        ctx, [desired_pod("keep"), desired_pod("drop"), desired_pod("dying")]
    )
    observed_drop = live(drop, "uid-drop")
    candidates = {
        "Pod.v1": [
            live(keep, "uid-keep"),
            observed_drop,
            live(dying, "uid-dying", deleting=True),  # already going: not deleted again
        ]
    }
    plan = run_plan(ctx, candidates, {"children": [desired_pod("keep")]})
    assert plan.actions == [
        Action(ActionKind.DELETE, PODS, observed_drop, None, "not in the hook's desired children")
    ]
    assert plan.actions[0].uid == "uid-drop"
    assert plan.waits == []


def test_an_adopted_child_that_is_not_desired_is_deleted_as_it_is_in_the_cluster() -> None:
    ctx = make_ctx()
    stray = live(orphan(desired_pod("stray", namespace=NS)), "uid-stray")
    plan = run_plan(ctx, {"Pod.v1": [stray]}, {"children": []})
    assert plan.actions == [
        Action(ActionKind.DELETE, PODS, stray, None, "not in the hook's desired children")
    ]
    assert plan.actions[0].uid == "uid-stray"


def test_an_empty_response_deletes_every_child() -> None:
    ctx = make_ctx()
    pod, cm = created(ctx, [desired_pod("web-0"), desired_configmap("conf")])
    plan = run_plan(ctx, {"Pod.v1": [live(pod, "u1")], "ConfigMap.v1": [live(cm, "u2")]}, {})
    assert summary(plan) == [
        (ActionKind.DELETE, "Pod default/web-0"),
        (ActionKind.DELETE, "ConfigMap default/conf"),
    ]


# --- plan_parent: converged and changed children ------------------------------------------


@pytest.mark.parametrize("method", list(UpdateMethod))
@pytest.mark.parametrize("generate", [False, True])
def test_no_action_when_converged(method: UpdateMethod, generate: bool) -> None:
    ctx = make_ctx(
        controller=make_controller(generate_selector=generate, pods=method, configmaps=method),
        pods=method,
        configmaps=method,
    )
    desired = [desired_pod("web-0"), desired_pod("web-1"), desired_configmap("conf")]
    bodies = created(ctx, desired)
    candidates = {
        "Pod.v1": [live(bodies[0], "u0"), live(bodies[1], "u1")],
        "ConfigMap.v1": [live(bodies[2], "u2")],
    }
    plan = run_plan(ctx, candidates, {"children": desired, "status": None})
    assert plan == Plan(actions=[], waits=[])


def test_no_action_when_converged_under_a_cluster_scoped_parent() -> None:
    ctx = make_ctx(cluster=True)
    desired = [desired_pod("web-0", namespace="team-a"), desired_pod("web-0", namespace="team-b")]
    bodies = created(ctx, desired)
    candidates = {"Pod.v1": [live(bodies[0], "ua"), live(bodies[1], "ub")]}
    assert run_plan(ctx, candidates, {"children": desired}) == Plan()


CHANGED_TABLE: list[tuple[UpdateMethod, ActionKind | None]] = [
    (UpdateMethod.ON_DELETE, None),
    (UpdateMethod.RECREATE, ActionKind.DELETE),
    (UpdateMethod.IN_PLACE, ActionKind.UPDATE),
]


@pytest.mark.parametrize(("method", "expected"), CHANGED_TABLE)
def test_a_changed_child_per_update_method(
    method: UpdateMethod, expected: ActionKind | None
) -> None:
    ctx = make_ctx(pods=method)
    [old] = created(ctx, [desired_pod("web-0", image="nginx:1")])
    observed = live(old, "uid-0")
    new = desired_pod("web-0", image="nginx:2")
    plan = run_plan(ctx, {"Pod.v1": [observed]}, {"children": [new]})
    if expected is None:
        assert plan == Plan()
        return
    [action] = plan.actions
    assert action.kind is expected
    assert action.before == observed
    assert action.uid == "uid-0"
    if expected is ActionKind.DELETE:
        assert action.after is None
        assert action.reason == "Recreate: differs from desired; created again on a later pass"
        return
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web-0",
            "labels": APP,
            "namespace": NS,
            "ownerReferences": [OUR_REF],
        },
        "spec": {"containers": [{"name": "main", "image": "nginx:2"}]},
    }
    expected_after = copy.deepcopy(observed)
    expected_after["spec"]["containers"][0]["image"] = "nginx:2"
    expected_after["metadata"]["annotations"][LAST_APPLIED_ANNOTATION] = compact(body)
    assert action.after == expected_after
    assert action.reason == "differs from desired"


# --- plan_parent: adoption folded into one write ------------------------------------------


@pytest.mark.parametrize(
    ("method", "changed", "expected"),
    [
        (UpdateMethod.ON_DELETE, False, ActionKind.ADOPT),
        (UpdateMethod.ON_DELETE, True, ActionKind.ADOPT),
        (UpdateMethod.IN_PLACE, False, ActionKind.ADOPT),
        (UpdateMethod.IN_PLACE, True, ActionKind.UPDATE),
        (UpdateMethod.RECREATE, False, ActionKind.ADOPT),
        (UpdateMethod.RECREATE, True, ActionKind.DELETE),
    ],
)
def test_adoption_is_folded_into_one_write(
    method: UpdateMethod, changed: bool, expected: ActionKind
) -> None:
    ctx = make_ctx(pods=method)
    if changed:
        # Made by someone else: no last-applied annotation and another image.
        stray = live(orphan(desired_pod("web-0", namespace=NS, image="busybox")), "uid-0")
    else:
        # Exactly what we would have created, orphaned since.
        [body] = created(ctx, [desired_pod("web-0")])
        stray = live(orphan(body), "uid-0")
    snapshot = copy.deepcopy(stray)

    plan = run_plan(ctx, {"Pod.v1": [stray]}, {"children": [desired_pod("web-0")]})

    [action] = plan.actions
    assert action.kind is expected
    assert action.before == snapshot  # the object as it is in the cluster
    assert action.uid == "uid-0"
    if expected is ActionKind.ADOPT:
        adopted = copy.deepcopy(snapshot)
        adopted["metadata"]["ownerReferences"] = [OUR_REF]
        assert action.after == adopted
        assert action.reason == "an orphan matching the selector"
    elif expected is ActionKind.UPDATE:
        assert action.after is not None
        assert action.after["metadata"]["ownerReferences"] == [OUR_REF]
        assert action.after["metadata"]["uid"] == "uid-0"
        assert action.after["spec"]["containers"] == [{"name": "main", "image": "nginx:1"}]
        assert LAST_APPLIED_ANNOTATION in action.after["metadata"]["annotations"]
        assert action.reason == "adopted and differs from desired"
    else:
        assert action.after is None
    assert stray == snapshot


# --- plan_parent: release ---------------------------------------------------------------------


def test_a_child_that_no_longer_matches_is_released() -> None:
    ctx = make_ctx()
    plain_ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "cm", "uid": "cm-uid"}
    gone = live(desired_pod("gone", namespace=NS, labels={"app": "old"}), "uid-gone")
    gone["metadata"]["ownerReferences"] = [plain_ref, OUR_REF]
    plan = run_plan(ctx, {"Pod.v1": [gone]}, {"children": []})
    released = copy.deepcopy(gone)
    released["metadata"]["ownerReferences"] = [plain_ref]
    assert plan.actions == [
        Action(ActionKind.RELEASE, PODS, gone, released, "no longer matches the selector")
    ]


def test_a_parent_being_finalized_releases_and_adopts_nothing() -> None:
    parent = make_parent(deleting=True, finalizers=[FINALIZER])
    ctx = make_ctx(controller=make_controller(finalize=True), parent=parent)
    gone = live(desired_pod("gone", namespace=NS, labels={"app": "old"}, refs=[OUR_REF]), "u1")
    stray = live(orphan(desired_pod("stray", namespace=NS)), "u2")
    plan = run_plan(ctx, {"Pod.v1": [gone, stray]}, {"children": []}, Mode.FINALIZE)
    assert plan == Plan()


# --- plan_parent: validation ------------------------------------------------------------------


SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc"}}
FOREIGN_NAME_PROBLEM = "Pod default/taken exists and is controlled by ReplicaSet rs (uid rs-uid)"

PROBLEMS: list[tuple[str, list[Obj], str]] = [
    (
        "kind not in childResources",
        [SERVICE],
        "children[0] (Service svc): Service.v1 is not one of the controller's childResources "
        "(Pod.v1, ConfigMap.v1)",
    ),
    (
        "apiVersion not in childResources",
        [{**desired_pod("p"), "apiVersion": "v2"}],
        "children[0] (Pod p): Pod.v2 is not one of the controller's childResources "
        "(Pod.v1, ConfigMap.v1)",
    ),
    (
        "another namespace",
        [desired_pod("p", namespace="other")],
        "children[0] (Pod p): metadata.namespace 'other' is not the parent's namespace 'default'",
    ),
    (
        "labels not matching",
        [desired_pod("p", labels={"app": "db"})],
        "children[0] (Pod p): metadata.labels {'app': 'db'} do not match the parent's "
        "selector (app=web)",
    ),
    (
        "duplicate child",
        [desired_pod("p"), desired_pod("p", image="other")],
        "children[1] (Pod p): Pod default/p is listed twice",
    ),
    (
        "duplicate child with the namespace spelled out",
        [desired_pod("p"), desired_pod("p", namespace=NS)],
        "children[1] (Pod p): Pod default/p is listed twice",
    ),
    (
        "foreign controller ref in desired",
        [desired_pod("p", refs=[OTHER_REF])],
        "children[0] (Pod p): metadata.ownerReferences names another controller",
    ),
]


def _taken() -> Obj:
    return live(desired_pod("taken", namespace=NS, refs=[OTHER_REF]), "uid-taken")


@pytest.mark.parametrize(
    ("children", "problem"), [pytest.param(c, p, id=i) for i, c, p in PROBLEMS]
)
def test_each_validation_problem(children: list[Obj], problem: str) -> None:
    ctx = make_ctx()
    with pytest.raises(PlanError) as info:
        run_plan(ctx, {}, {"children": children})
    assert info.value.problems == [problem]
    assert info.value.parent is ctx.parent


def test_a_desired_name_owned_by_another_controller() -> None:
    ctx = make_ctx()
    with pytest.raises(PlanError) as info:
        run_plan(ctx, {"Pod.v1": [_taken()]}, {"children": [desired_pod("taken")]})
    assert info.value.problems == [FOREIGN_NAME_PROBLEM]


def test_a_child_without_namespace_under_a_cluster_scoped_parent() -> None:
    ctx = make_ctx(cluster=True)
    with pytest.raises(PlanError) as info:
        run_plan(ctx, {}, {"children": [desired_pod("p")]})
    assert info.value.problems == [
        "children[0] (Pod p): metadata.namespace is required under a cluster-scoped parent"
    ]


def test_every_validation_problem_is_listed() -> None:
    ctx = make_ctx()
    children = [c for _, group, _ in PROBLEMS for c in group]
    # Renumbered: the problems follow the children's positions in the response.
    expected = [
        "children[0] (Service svc): Service.v1 is not one of the controller's childResources "
        "(Pod.v1, ConfigMap.v1)",
        "children[1] (Pod p): Pod.v2 is not one of the controller's childResources "
        "(Pod.v1, ConfigMap.v1)",
        "children[2] (Pod p): metadata.namespace 'other' is not the parent's namespace 'default'",
        "children[3] (Pod p): metadata.labels {'app': 'db'} do not match the parent's "
        "selector (app=web)",
        # children[4] is the first valid `p`: every later `p` is a duplicate.
        "children[5] (Pod p): Pod default/p is listed twice",
        "children[6] (Pod p): Pod default/p is listed twice",
        "children[7] (Pod p): Pod default/p is listed twice",
        "children[8] (Pod p): metadata.ownerReferences names another controller",
    ]
    with pytest.raises(PlanError) as info:
        run_plan(ctx, {}, {"children": children})
    assert info.value.problems == expected
    assert str(info.value) == "; ".join(expected)


def test_a_foreign_owned_name_is_listed_with_the_other_problems() -> None:
    ctx = make_ctx()
    children = [desired_pod("p", labels={"app": "db"}), desired_pod("taken")]
    with pytest.raises(PlanError) as info:
        run_plan(ctx, {"Pod.v1": [_taken()]}, {"children": children})
    assert info.value.problems == [
        "children[0] (Pod p): metadata.labels {'app': 'db'} do not match the parent's "
        "selector (app=web)",
        FOREIGN_NAME_PROBLEM,
    ]


def test_foreign_owned_names_of_every_type_are_listed() -> None:
    ctx = make_ctx()
    taken_cm = live(desired_configmap("taken"), "uid-cm")
    taken_cm["metadata"].update(namespace=NS, ownerReferences=[OTHER_REF])
    with pytest.raises(PlanError) as info:
        run_plan(
            ctx,
            {"Pod.v1": [_taken()], "ConfigMap.v1": [taken_cm]},
            {"children": [desired_pod("taken"), desired_configmap("taken")]},
        )
    assert info.value.problems == [
        FOREIGN_NAME_PROBLEM,
        "ConfigMap default/taken exists and is controlled by ReplicaSet rs (uid rs-uid)",
    ]


# --- plan_parent: waits -----------------------------------------------------------------------


def test_a_desired_child_still_being_deleted_is_waited_for() -> None:
    ctx = make_ctx(pods=UpdateMethod.RECREATE)
    [body] = created(ctx, [desired_pod("web-0", image="nginx:1")])
    dying = live(body, "uid-0", deleting=True)
    plan = run_plan(ctx, {"Pod.v1": [dying]}, {"children": [desired_pod("web-0", image="nginx:2")]})
    assert plan == Plan(
        actions=[], waits=["Pod default/web-0 is being deleted before it is created again"]
    )


def test_a_desired_name_held_by_an_orphan_being_deleted_is_waited_for() -> None:
    ctx = make_ctx()
    dying = live(orphan(desired_pod("web-0", namespace=NS)), "uid-0", deleting=True)
    plan = run_plan(ctx, {"Pod.v1": [dying]}, {"children": [desired_pod("web-0")]})
    assert plan == Plan(
        actions=[], waits=["Pod default/web-0 is being deleted before it is created"]
    )


# --- plan_parent: status ----------------------------------------------------------------------


def status_write(ctx: Context, status: dict[str, Any] | None) -> Action | None:
    """The status write plan_parent makes of a hook's status (none: an empty one)."""
    reason = "status from the hook"
    return status_action(ctx.parent_resource, ctx.parent, status or {}, reason)


@pytest.mark.parametrize(
    ("parent_status", "hook_status", "generation", "expected"),
    [
        (None, {"ready": 2}, 3, {"ready": 2, "observedGeneration": 3}),
        ({"observedGeneration": 2}, {"ready": 2}, 3, {"ready": 2, "observedGeneration": 3}),
        ({"observedGeneration": 3, "ready": 2}, {"ready": 2}, 3, None),
        ({"observedGeneration": 3}, None, 3, None),
        ({"observedGeneration": 2}, None, 3, {"observedGeneration": 3}),
        (None, None, 3, {"observedGeneration": 3}),
        # The hook's status replaces the old one: fields it leaves out are dropped.
        ({"observedGeneration": 3, "old": 1}, {}, 3, {"observedGeneration": 3}),
        ({"observedGeneration": 3, "old": 1}, None, 3, {"observedGeneration": 3}),
        # observedGeneration is always the parent's generation, whatever the hook says.
        ({"observedGeneration": 3}, {"observedGeneration": 99}, 3, None),
        (None, {"observedGeneration": 99}, 3, {"observedGeneration": 3}),
        (None, {"a": {"b": [1]}}, None, {"a": {"b": [1]}, "observedGeneration": 0}),
    ],
)
def test_status_write(
    parent_status: dict[str, Any] | None,
    hook_status: dict[str, Any] | None,
    generation: int | None,
    expected: dict[str, Any] | None,
) -> None:
    parent = make_parent(status=parent_status, generation=generation)
    snapshot = copy.deepcopy(parent)
    ctx = make_ctx(parent=parent)
    action = status_write(ctx, hook_status)
    if expected is None:
        assert action is None
        return
    assert action is not None
    assert action.kind is ActionKind.STATUS
    assert action.resource == THINGS
    assert action.before is parent
    assert action.after == {**snapshot, "status": expected}
    assert parent == snapshot
    # The same decision inside a whole plan.
    plan = run_plan(ctx, {}, {"status": hook_status})
    assert plan.actions == [action]


@pytest.mark.parametrize(
    ("old", "new"), [(1, True), (True, 1), (0, False), (False, 0), (1.0, True)]
)
def test_a_status_changing_type_between_bool_and_number_is_written(old: Any, new: Any) -> None:
    parent = make_parent(status={"observedGeneration": GENERATION, "ready": old})
    action = status_write(make_ctx(parent=parent), {"ready": new})
    assert action is not None
    assert action.after is not None
    assert action.after["status"] == {"ready": new, "observedGeneration": GENERATION}


# --- plan_parent: order and finalizers -----------------------------------------------------


def _everything(ctx: Context) -> tuple[dict[str, list[Obj]], dict[str, Any]]:
    """Candidates and a response that need one action of every child kind."""
    keep_old, drop = created(ctx, [desired_pod("keep", image="nginx:1"), desired_pod("drop")])
    gone = live(desired_pod("gone", namespace=NS, labels={"app": "old"}, refs=[OUR_REF]), "u-g")
    stray = live(orphan(desired_configmap("stray")), "u-s")
    stray["metadata"]["namespace"] = NS
    candidates = {
        "Pod.v1": [live(keep_old, "u-k"), live(drop, "u-d"), gone],
        "ConfigMap.v1": [stray],
    }
    response = {
        "status": {"ready": 1},
        "children": [
            desired_pod("keep", image="nginx:2"),
            desired_pod("new"),
            desired_configmap("stray"),
        ],
        "finalized": True,
    }
    return candidates, response


def test_sync_plan_order() -> None:
    ctx = make_ctx(
        controller=make_controller(finalize=True, pods=UpdateMethod.IN_PLACE),
        pods=UpdateMethod.IN_PLACE,
    )
    candidates, response = _everything(ctx)
    plan = run_plan(ctx, candidates, response)
    # finalized: true from a sync call removes nothing.
    assert summary(plan) == [
        (ActionKind.ADD_FINALIZER, "Thing default/web"),
        (ActionKind.RELEASE, "Pod default/gone"),
        (ActionKind.ADOPT, "ConfigMap default/stray"),
        (ActionKind.DELETE, "Pod default/drop"),
        (ActionKind.CREATE, "Pod default/new"),
        (ActionKind.UPDATE, "Pod default/keep"),
        (ActionKind.STATUS, "Thing default/web"),
    ]


@pytest.mark.parametrize("finalized", [True, False])
def test_finalize_plan_order(finalized: bool) -> None:
    parent = make_parent(deleting=True, finalizers=[OTHER_FINALIZER, FINALIZER])
    ctx = make_ctx(
        controller=make_controller(finalize=True, pods=UpdateMethod.IN_PLACE),
        parent=parent,
        pods=UpdateMethod.IN_PLACE,
    )
    candidates, response = _everything(ctx)
    response["finalized"] = finalized
    plan = run_plan(ctx, candidates, response, Mode.FINALIZE)
    expected = [
        (ActionKind.DELETE, "Pod default/drop"),
        (ActionKind.CREATE, "Pod default/new"),
        (ActionKind.UPDATE, "Pod default/keep"),
        (ActionKind.STATUS, "Thing default/web"),
    ]
    if finalized:
        expected.append((ActionKind.REMOVE_FINALIZER, "Thing default/web"))
    assert summary(plan) == expected
    if finalized:
        last = plan.actions[-1]
        assert last.before is parent
        assert last.after is not None
        assert last.after["metadata"]["finalizers"] == [OTHER_FINALIZER]
        assert last.reason == "the finalize hook answered finalized: true"


def test_finalize_plan_when_the_hook_is_done_and_nothing_is_left() -> None:
    parent = make_parent(deleting=True, finalizers=[FINALIZER])
    ctx = make_ctx(controller=make_controller(finalize=True), parent=parent)
    plan = run_plan(ctx, {}, {"finalized": True}, Mode.FINALIZE)
    expected_after = copy.deepcopy(parent)
    del expected_after["metadata"]["finalizers"]
    assert plan.actions == [
        Action(
            ActionKind.REMOVE_FINALIZER,
            THINGS,
            parent,
            expected_after,
            "the finalize hook answered finalized: true",
        )
    ]


def test_sync_without_a_finalize_hook_removes_our_finalizer_first() -> None:
    parent = make_parent(finalizers=[FINALIZER])
    ctx = make_ctx(parent=parent)
    plan = run_plan(ctx, {}, {"children": [desired_pod("web-0")], "finalized": True})
    assert summary(plan) == [
        (ActionKind.REMOVE_FINALIZER, "Thing default/web"),
        (ActionKind.CREATE, "Pod default/web-0"),
    ]


def test_sync_response_type_is_accepted_directly() -> None:
    ctx = make_ctx()
    selector = parent_selector(ctx)
    claims = claim_children(ctx, selector, {})
    plan = plan_parent(
        ctx, Mode.SYNC, selector, claims, SyncResponse(children=[desired_configmap("c")])
    )
    assert summary(plan) == [(ActionKind.CREATE, "ConfigMap default/c")]
    assert plan.actions[0].resource == CONFIGMAPS
