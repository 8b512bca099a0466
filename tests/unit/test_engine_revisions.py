"""ControllerRevision values (reconcile.engine.composite.revisions), table-driven with plain dicts:
names, parent patches, the object layout, parsing, claiming, and the per-child checks."""

from __future__ import annotations

import copy
import hashlib
from typing import Any

import pytest

from reconcile.engine.composite.revisions import (
    API_GROUP_LABEL,
    RESOURCE_LABEL,
    REVISION_API_VERSION,
    REVISION_KIND,
    Revision,
    RevisionError,
    claim_revisions,
    describe_check,
    failed_check,
    parent_patch,
    patch_json,
    patched_parent,
    readiness_problem,
    revision_labels,
    revision_name,
    selector_labels,
)
from reconcile.objects.meta import Obj
from reconcile.objects.resource import ResourceInfo
from reconcile.objects.selectors import LabelSelector, Requirement
from reconcile.specs.composite import ConditionCheck
from reconcile.specs.controller import UpdateMethod

NS = "default"
UID = "parent-uid"
APP = {"app": "web"}
THINGS = ResourceInfo("example.com", "v1", "things", "Thing", namespaced=True, has_status=True)
CORE_THINGS = ResourceInfo("", "v1", "things", "Thing", namespaced=True)
CATSETS = ResourceInfo("ctl.enisoc.com", "v1", "catsets", "CatSet", namespaced=True)
OUR_REF: dict[str, Any] = {
    "apiVersion": "example.com/v1",
    "kind": "Thing",
    "name": "web",
    "uid": UID,
    "controller": True,
    "blockOwnerDeletion": True,
}
OTHER_REF: dict[str, Any] = {**OUR_REF, "name": "other", "uid": "other-uid"}
READY = ConditionCheck("Ready", "True")


def make_parent(*, namespace: str | None = NS, spec: dict[str, Any] | None = None) -> Obj:
    meta: dict[str, Any] = {"name": "web", "uid": UID, "generation": 4}
    if namespace:
        meta["namespace"] = namespace
    return {
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": meta,
        "spec": copy.deepcopy(spec)
        if spec is not None
        else {
            "selector": {"matchLabels": APP},
            "replicas": 3,
            "template": {"image": "nginx:1", "env": {"A": "1"}},
        },
        "status": {"ready": 2},
    }


def revision_object(
    name: str = "things.example.com-abc",
    *,
    children: Any = None,
    patch: Any = None,
    refs: list[dict[str, Any]] | None = None,
    labels: dict[str, str] | None = None,
    namespace: str = NS,
) -> Obj:
    return {
        "apiVersion": REVISION_API_VERSION,
        "kind": REVISION_KIND,
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": f"uid-{name}",
            "resourceVersion": "7",
            "labels": dict(
                labels
                if labels is not None
                else {**APP, API_GROUP_LABEL: "example.com", RESOURCE_LABEL: "things"}
            ),
            "ownerReferences": copy.deepcopy([OUR_REF] if refs is None else refs),
        },
        "parentPatch": {"spec": {"template": {"image": "nginx:1"}}} if patch is None else patch,
        "children": [{"apiGroup": "", "kind": "Pod", "names": ["web-0"]}]
        if children is None
        else children,
    }


# --- names ---------------------------------------------------------------------------------


def test_revision_name_matches_go_encoding_json_and_sha1() -> None:
    # The expected hash was computed with Go's encoding/json.Marshal and crypto/sha1, as
    # Metacontroller does: numbers, HTML escaping and non-ASCII text are written the same way.
    patch = {
        "spec": {
            "template": {
                "image": "nginx:1.<2>&",
                "b": [1, 2.0, 1.5, "é\u2028"],
                "a": None,
                "n": 1e21,
                "z": {"y": True, "x": False},
            }
        }
    }
    assert (
        patch_json(patch)
        == (
            '{"spec":{"template":{"a":null,"b":[1,2,1.5,"é\\u2028"],'
            '"image":"nginx:1.\\u003c2\\u003e\\u0026","n":1e+21,"z":{"x":false,"y":true}}}}'
        ).encode()
    )
    assert (
        revision_name(CATSETS, "1234-uid", patch)
        == "catsets.ctl.enisoc.com-0fe6a19d924a67909cdd042a31504756771e52c8"
    )


def test_revision_name_is_the_sha1_of_uid_and_compact_sorted_json() -> None:
    patch = {"spec": {"template": {"image": "nginx:1", "a": 1}}}
    body = b'{"spec":{"template":{"a":1,"image":"nginx:1"}}}'
    digest = hashlib.sha1(UID.encode() + body, usedforsecurity=False).hexdigest()
    assert revision_name(THINGS, UID, patch) == f"things.example.com-{digest}"


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        # stable
        ((THINGS, UID, {"spec": {"x": 1}}), (THINGS, UID, {"spec": {"x": 1}}), True),
        # key order does not matter
        (
            (THINGS, UID, {"spec": {"x": 1, "y": {"b": 2, "a": 1}}}),
            (THINGS, UID, {"spec": {"y": {"a": 1, "b": 2}, "x": 1}}),
            True,
        ),
        # the uid matters
        ((THINGS, UID, {"spec": {"x": 1}}), (THINGS, "other-uid", {"spec": {"x": 1}}), False),
        # the patch matters
        ((THINGS, UID, {"spec": {"x": 1}}), (THINGS, UID, {"spec": {"x": 2}}), False),
        ((THINGS, UID, {"spec": {"x": 1}}), (THINGS, UID, {"spec": {"x": "1"}}), False),
        ((THINGS, UID, {}), (THINGS, UID, {"spec": {}}), False),
    ],
)
def test_revision_name_stability(
    a: tuple[ResourceInfo, str, dict[str, Any]],
    b: tuple[ResourceInfo, str, dict[str, Any]],
    same: bool,
) -> None:
    assert (revision_name(*a) == revision_name(*b)) is same


@pytest.mark.parametrize(
    ("resource", "prefix"),
    [
        (THINGS, "things.example.com-"),
        (CORE_THINGS, "things.core-"),
        (CATSETS, "catsets.ctl.enisoc.com-"),
    ],
)
def test_revision_name_prefix(resource: ResourceInfo, prefix: str) -> None:
    name = revision_name(resource, UID, {"spec": {}})
    assert name.startswith(prefix)
    assert len(name) == len(prefix) + 40


def test_revision_name_fits_in_253_characters() -> None:
    long = ResourceInfo("g" * 250, "v1", "things", "Thing", namespaced=True)
    name = revision_name(long, UID, {})
    assert len(name) == 253
    assert name[212] == "-"


# --- parent patches ------------------------------------------------------------------------


SPEC = {
    "selector": {"matchLabels": APP},
    "replicas": 3,
    "template": {"image": "nginx:1", "env": {"A": "1"}},
    "list": [1, 2],
}


@pytest.mark.parametrize(
    ("paths", "expected"),
    [
        (["spec"], {"spec": SPEC}),
        (["spec.template"], {"spec": {"template": SPEC["template"]}}),
        (["spec.template.image"], {"spec": {"template": {"image": "nginx:1"}}}),
        (
            ["spec.template", "spec.replicas"],
            {"spec": {"template": SPEC["template"], "replicas": 3}},
        ),
        (["spec.missing"], {}),
        (["spec.template", "spec.missing"], {"spec": {"template": SPEC["template"]}}),
        (["nothing.here"], {}),
        # a path through something that is not an object is missing
        (["spec.replicas.count"], {}),
        (["spec.list.0"], {}),
        (["metadata.name"], {"metadata": {"name": "web"}}),
        ([], {}),
    ],
)
def test_parent_patch(paths: list[str], expected: dict[str, Any]) -> None:
    parent = make_parent(spec=SPEC)
    before = copy.deepcopy(parent)
    assert parent_patch(parent, paths) == expected
    assert parent == before


def test_parent_patch_is_a_copy() -> None:
    parent = make_parent(spec=SPEC)
    patch = parent_patch(parent, ["spec.template"])
    patch["spec"]["template"]["image"] = "changed"
    assert parent["spec"]["template"]["image"] == "nginx:1"


@pytest.mark.parametrize(
    ("paths", "patch", "expected_spec"),
    [
        # the rolling field replaced, the others (replicas) as the parent has them now
        (
            ["spec.template"],
            {"spec": {"template": {"image": "nginx:0"}}},
            {**SPEC, "template": {"image": "nginx:0"}},
        ),
        # a path absent from the patch is removed
        (["spec.template"], {}, {k: v for k, v in SPEC.items() if k != "template"}),
        (["spec.template"], {"spec": {}}, {k: v for k, v in SPEC.items() if k != "template"}),
        # the whole spec
        (["spec"], {"spec": {"replicas": 1}}, {"replicas": 1}),
        # several paths, and fields outside the paths in the patch are ignored
        (
            ["spec.template.image", "spec.replicas"],
            {"spec": {"template": {"image": "nginx:0"}, "replicas": 5, "list": []}},
            {**SPEC, "template": {"image": "nginx:0", "env": {"A": "1"}}, "replicas": 5},
        ),
        # a path absent from both stays absent
        (["spec.missing"], {}, SPEC),
        # intermediate objects are created
        (["spec.new.deep"], {"spec": {"new": {"deep": 1}}}, {**SPEC, "new": {"deep": 1}}),
    ],
)
def test_patched_parent(
    paths: list[str], patch: dict[str, Any], expected_spec: dict[str, Any]
) -> None:
    parent = make_parent(spec=SPEC)
    before = copy.deepcopy(parent)
    result = patched_parent(parent, patch, paths)
    assert result["spec"] == expected_spec
    assert result["metadata"] == parent["metadata"]
    assert result["status"] == parent["status"]
    assert parent == before  # never mutated


def test_patched_parent_round_trips_parent_patch() -> None:
    parent = make_parent(spec=SPEC)
    paths = ["spec.template", "spec.replicas"]
    old = patched_parent(parent, {"spec": {"template": {"image": "a"}}}, paths)
    assert parent_patch(old, paths) == {"spec": {"template": {"image": "a"}}}
    assert patched_parent(parent, parent_patch(parent, paths), paths) == parent


def test_patched_parent_does_not_share_the_patch() -> None:
    patch = {"spec": {"template": {"image": "a"}}}
    result = patched_parent(make_parent(spec=SPEC), patch, ["spec.template"])
    result["spec"]["template"]["image"] = "changed"
    assert patch["spec"]["template"]["image"] == "a"


# --- labels, layout and parsing ------------------------------------------------------------


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        (LabelSelector.from_labels(APP), APP),
        (LabelSelector.from_labels({"controller-uid": UID}), {"controller-uid": UID}),
        (
            LabelSelector(
                (
                    Requirement("app", "Equals", ("web",)),
                    Requirement("tier", "In", ("a", "b")),
                    Requirement("x", "Exists"),
                )
            ),
            APP,
        ),
        (LabelSelector(), {}),
    ],
)
def test_selector_labels(selector: LabelSelector, expected: dict[str, str]) -> None:
    assert selector_labels(selector) == expected


def test_revision_labels() -> None:
    assert revision_labels(APP, THINGS) == {
        "app": "web",
        "metacontroller.k8s.io/apiGroup": "example.com",
        "metacontroller.k8s.io/resource": "things",
    }
    assert revision_labels({}, CORE_THINGS) == {API_GROUP_LABEL: "", RESOURCE_LABEL: "things"}


def test_new_revision_object_layout() -> None:
    parent = make_parent()
    patch = parent_patch(parent, ["spec.template"])
    revision = Revision.new(THINGS, parent, patch).with_children(
        {
            ("apps", "StatefulSet"): ["db"],
            ("", "Pod"): ["web-2", "web-0", "web-1", "web-0"],
            ("", "ConfigMap"): [],
        }
    )
    assert revision.name == revision_name(THINGS, UID, patch)
    assert revision.raw is None
    assert sum(len(names) for names in revision.children.values()) == 4
    assert revision.to_object(parent, THINGS, APP) == {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": revision.name,
            "namespace": NS,
            "labels": {
                "app": "web",
                "metacontroller.k8s.io/apiGroup": "example.com",
                "metacontroller.k8s.io/resource": "things",
            },
            "ownerReferences": [OUR_REF],
        },
        "parentPatch": {"spec": {"template": {"image": "nginx:1", "env": {"A": "1"}}}},
        "children": [
            {"apiGroup": "", "kind": "Pod", "names": ["web-0", "web-1", "web-2"]},
            {"apiGroup": "apps", "kind": "StatefulSet", "names": ["db"]},
        ],
    }


def test_new_revision_object_generated_selector_and_cluster_parent() -> None:
    parent = make_parent(namespace=None)
    obj = Revision.new(THINGS, parent, {}).to_object(parent, THINGS, {"controller-uid": UID})
    assert "namespace" not in obj["metadata"]
    assert obj["metadata"]["labels"] == {
        "controller-uid": UID,
        API_GROUP_LABEL: "example.com",
        RESOURCE_LABEL: "things",
    }
    assert obj["children"] == []


def test_revision_round_trip() -> None:
    parent = make_parent()
    revision = Revision.new(THINGS, parent, {"spec": {"x": 1}}).with_children(
        {("", "Pod"): ["b", "a"]}
    )
    parsed = Revision.from_object(revision.to_object(parent, THINGS, APP))
    assert (parsed.name, parsed.patch, parsed.children) == (
        revision.name,
        revision.patch,
        {("", "Pod"): ("a", "b")},
    )
    assert parsed.raw is not None
    assert parsed.names("", "Pod") == ("a", "b")
    assert parsed.names("apps", "Pod") == ()


@pytest.mark.parametrize(
    ("refs", "expected_refs"),
    [
        # ours already: kept as is
        ([OUR_REF], [OUR_REF]),
        # an orphan being adopted: ours added
        ([], [OUR_REF]),
        # a stale copy of ours (e.g. blockOwnerDeletion missing) replaced in place
        (
            [{"apiVersion": "v1", "kind": "X", "name": "x", "uid": "x"}, {**OUR_REF, "name": "o"}],
            [{"apiVersion": "v1", "kind": "X", "name": "x", "uid": "x"}, OUR_REF],
        ),
    ],
)
def test_existing_revision_object_update(
    refs: list[dict[str, Any]], expected_refs: list[dict[str, Any]]
) -> None:
    raw = revision_object(refs=refs, labels={"app": "web", "extra": "kept"})
    revision = Revision.from_object(raw).with_children({("", "Pod"): ["web-1", "web-0"]})
    obj = revision.to_object(make_parent(), THINGS, APP)
    assert obj["metadata"]["resourceVersion"] == "7"  # optimistic concurrency
    assert obj["metadata"]["uid"] == raw["metadata"]["uid"]
    assert obj["metadata"]["labels"] == {
        "app": "web",
        "extra": "kept",
        API_GROUP_LABEL: "example.com",
        RESOURCE_LABEL: "things",
    }
    assert obj["metadata"]["ownerReferences"] == expected_refs
    assert obj["parentPatch"] == raw["parentPatch"]  # never rewritten: the name hashes it
    assert obj["children"] == [{"apiGroup": "", "kind": "Pod", "names": ["web-0", "web-1"]}]
    assert raw["children"] == [{"apiGroup": "", "kind": "Pod", "names": ["web-0"]}]


def test_unchanged_revision_object_is_equal_to_the_observed_one() -> None:
    raw = revision_object()
    assert Revision.from_object(raw).to_object(make_parent(), THINGS, APP) == raw


@pytest.mark.parametrize(
    ("children", "expected"),
    [
        (None, {}),
        ([], {}),
        ([{"kind": "Pod", "names": ["b", "a"]}], {("", "Pod"): ("a", "b")}),
        ([{"apiGroup": "", "kind": "Pod", "names": []}], {}),
        ([{"apiGroup": "", "kind": "Pod"}], {}),
        ([{"apiGroup": "apps", "kind": "Pod", "names": None}], {}),
        # repeated groups and names are merged
        (
            [
                {"apiGroup": "", "kind": "Pod", "names": ["b"]},
                {"apiGroup": "", "kind": "Pod", "names": ["a", "b"]},
                {"apiGroup": "apps", "kind": "StatefulSet", "names": ["db"]},
            ],
            {("", "Pod"): ("a", "b"), ("apps", "StatefulSet"): ("db",)},
        ),
    ],
)
def test_parse_children(children: Any, expected: dict[tuple[str, str], tuple[str, ...]]) -> None:
    raw = revision_object(children=children)
    if children is None:
        del raw["children"]
    assert Revision.from_object(raw).children == expected


def test_parse_missing_parent_patch_is_empty() -> None:
    raw = revision_object()
    del raw["parentPatch"]
    assert Revision.from_object(raw).patch == {}


def _set_path(obj: Obj, path: str, value: Any) -> Obj:
    obj = copy.deepcopy(obj)
    *parents, last = path.split(".")
    current: Any = obj
    for part in parents:
        current = current[int(part)] if isinstance(current, list) else current[part]
    if isinstance(current, list):
        current[int(last)] = value
    else:
        current[last] = value
    return obj


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("metadata.name", "", "ControllerRevision (unnamed): metadata.name: is required"),
        ("apiVersion", "apps/v1", "apiVersion: 'apps/v1' is not metacontroller.k8s.io/v1alpha1"),
        ("kind", "Revision", "kind: 'Revision' is not ControllerRevision"),
        ("parentPatch", [1], "parentPatch: must be an object"),
        ("parentPatch", "x", "parentPatch: must be an object"),
        ("children", {"Pod": []}, "children: must be a list"),
        ("children.0", "Pod", "children[0]: must be an object"),
        ("children.0.kind", "", "children[0].kind: must be a non-empty string"),
        ("children.0.kind", None, "children[0].kind: must be a non-empty string"),
        ("children.0.apiGroup", 1, "children[0].apiGroup: must be a non-empty string"),
        ("children.0.names", "web-0", "children[0].names: must be a list of strings"),
        ("children.0.names", ["web-0", 1], "children[0].names[1]: must be a non-empty string"),
        ("children.0.names", [""], "children[0].names[0]: must be a non-empty string"),
    ],
)
def test_parse_errors_name_the_field(path: str, value: Any, message: str) -> None:
    raw = _set_path(revision_object(name="rev-1"), path, value)
    with pytest.raises(RevisionError) as info:
        Revision.from_object(raw)
    assert message in str(info.value)
    assert isinstance(info.value, ValueError)
    if path != "metadata.name":
        assert str(info.value).startswith("ControllerRevision rev-1: ")


def test_parse_rejects_a_non_object() -> None:
    with pytest.raises(RevisionError, match="must be an object"):
        Revision.from_object([])  # type: ignore[arg-type]


# --- claiming ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("obj", "claimed"),
    [
        (revision_object(), True),
        # ours even when its labels no longer match (never released: progress is kept)
        (revision_object(labels={}), True),
        # an orphan with our selector's and resource's labels is adopted
        (revision_object(refs=[]), True),
        (revision_object(refs=[{**OUR_REF, "controller": False, "uid": "x"}]), True),
        # an orphan missing a label
        (revision_object(refs=[], labels={**APP, API_GROUP_LABEL: "example.com"}), False),
        (
            revision_object(
                refs=[], labels={"app": "db", API_GROUP_LABEL: "example.com", RESOURCE_LABEL: "x"}
            ),
            False,
        ),
        (
            revision_object(
                refs=[], labels={**APP, API_GROUP_LABEL: "other.com", RESOURCE_LABEL: "things"}
            ),
            False,
        ),
        # someone else's
        (revision_object(refs=[OTHER_REF]), False),
        # another namespace
        (revision_object(namespace="other"), False),
        # an orphan being deleted is not adopted
        (
            _set_path(revision_object(refs=[]), "metadata.deletionTimestamp", "2024-01-01T00:00Z"),
            False,
        ),
        # not a ControllerRevision
        (_set_path(revision_object(), "kind", "ConfigMap"), False),
    ],
)
def test_claim_revisions(obj: Obj, claimed: bool) -> None:
    selector = LabelSelector.from_labels(APP)
    result = claim_revisions(make_parent(), THINGS, selector, [obj])
    assert result == ([obj] if claimed else [])


def test_claim_revisions_a_deleting_parent_adopts_nothing() -> None:
    parent = _set_path(make_parent(), "metadata.deletionTimestamp", "2024-01-01T00:00:00Z")
    ours, orphan = revision_object("a"), revision_object("b", refs=[])
    assert claim_revisions(parent, THINGS, LabelSelector.from_labels(APP), [ours, orphan]) == [ours]


# --- child checks --------------------------------------------------------------------------


def pod(
    conditions: Any = None,
    *,
    generation: int | None = 2,
    observed_generation: Any = None,
    deleting: bool = False,
) -> Obj:
    meta: dict[str, Any] = {"name": "web-0", "namespace": NS}
    if generation is not None:
        meta["generation"] = generation
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    status: dict[str, Any] = {}
    if conditions is not None:
        status["conditions"] = conditions
    if observed_generation is not None:
        status["observedGeneration"] = observed_generation
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "status": status}


READY_TRUE = {"type": "Ready", "status": "True", "reason": "Started"}
SCHEDULED = {"type": "PodScheduled", "status": "True"}


@pytest.mark.parametrize(
    ("conditions", "checks", "passes"),
    [
        # no checks: always passes
        (None, (), True),
        # type only
        ([READY_TRUE], (ConditionCheck("Ready"),), True),
        ([{"type": "Ready", "status": "False"}], (ConditionCheck("Ready"),), True),
        ([SCHEDULED], (ConditionCheck("Ready"),), False),
        # status
        ([READY_TRUE], (READY,), True),
        ([{"type": "Ready", "status": "False"}], (READY,), False),
        ([{"type": "Ready"}], (READY,), False),
        # reason
        ([READY_TRUE], (ConditionCheck("Ready", reason="Started"),), True),
        ([READY_TRUE], (ConditionCheck("Ready", reason="Other"),), False),
        ([READY_TRUE], (ConditionCheck("Ready", "True", "Started"),), True),
        ([READY_TRUE], (ConditionCheck("Ready", "False", "Started"),), False),
        # every check must pass
        ([READY_TRUE, SCHEDULED], (READY, ConditionCheck("PodScheduled", "True")), True),
        ([READY_TRUE], (READY, ConditionCheck("PodScheduled")), False),
        # missing or malformed conditions
        (None, (READY,), False),
        ([], (READY,), False),
        ("Ready", (READY,), False),
        (["Ready", READY_TRUE], (READY,), True),
    ],
)
def test_condition_passes(
    conditions: Any, checks: tuple[ConditionCheck, ...], passes: bool
) -> None:
    assert (failed_check(pod(conditions), checks) is None) is passes


def test_condition_passes_without_status() -> None:
    assert failed_check({"kind": "Pod"}, (READY,)) is not None
    assert failed_check({"kind": "Pod", "status": "Running"}, (READY,)) is not None


@pytest.mark.parametrize(
    ("checks", "expected"),
    [
        ((ConditionCheck("Ready"), READY), READY),
        ((ConditionCheck("Missing"), READY), ConditionCheck("Missing")),
        ((), None),
    ],
)
def test_failed_check_is_the_first_failing(
    checks: tuple[ConditionCheck, ...], expected: ConditionCheck | None
) -> None:
    assert failed_check(pod([{"type": "Ready", "status": "False"}]), checks) == expected


@pytest.mark.parametrize(
    ("check", "text"),
    [
        (ConditionCheck("Ready"), "Ready"),
        (ConditionCheck("Ready", "True"), "Ready=True"),
        (ConditionCheck("Ready", reason="Done"), "Ready (reason Done)"),
        (ConditionCheck("Ready", "True", "Done"), "Ready=True (reason Done)"),
    ],
)
def test_describe_check(check: ConditionCheck, text: str) -> None:
    assert describe_check(check) == text


RIP = UpdateMethod.ROLLING_IN_PLACE
RRC = UpdateMethod.ROLLING_RECREATE


@pytest.mark.parametrize(
    ("child", "method", "checks", "problem"),
    [
        (None, RRC, (), "to be created"),
        (pod([READY_TRUE], deleting=True), RRC, (READY,), "to be deleted"),
        (pod([READY_TRUE]), RRC, (READY,), None),
        (pod([]), RRC, (READY,), "to pass Ready=True"),
        (pod([]), RRC, (), None),
        # RollingInPlace: observedGeneration, when present, must have caught up
        (
            pod([READY_TRUE], observed_generation=1),
            RIP,
            (READY,),
            "to observe generation 2 (observedGeneration is 1)",
        ),
        (pod([READY_TRUE], observed_generation=2), RIP, (READY,), None),
        (pod([READY_TRUE], observed_generation=3), RIP, (READY,), None),
        (pod([READY_TRUE]), RIP, (READY,), None),  # absent: not checked
        (pod([READY_TRUE], observed_generation=1, generation=None), RIP, (READY,), None),
        (pod([READY_TRUE], observed_generation="1"), RIP, (READY,), None),
        (pod([READY_TRUE], observed_generation=True), RIP, (READY,), None),
        # ... before the status checks
        (
            pod([], observed_generation=1),
            RIP,
            (READY,),
            "to observe generation 2 (observedGeneration is 1)",
        ),
        # RollingRecreate does not look at observedGeneration
        (pod([READY_TRUE], observed_generation=1), RRC, (READY,), None),
    ],
)
def test_readiness(
    child: Obj | None,
    method: UpdateMethod,
    checks: tuple[ConditionCheck, ...],
    problem: str | None,
) -> None:
    assert readiness_problem(child, method, checks) == problem
