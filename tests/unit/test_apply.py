"""Metacontroller's apply: the convention-based three-way merge (reconcile.engine.apply)."""

from __future__ import annotations

import copy
import itertools
import json
from typing import Any

import pytest

from reconcile.engine.apply import (
    LAST_APPLIED_ANNOTATION,
    apply,
    last_applied,
    merge,
    needs_update,
    prepare_desired,
)
from reconcile.objects.meta import SERVER_OWNED_METADATA, Obj
from tests.support.diffs import diff_paths

CONVENTIONAL_KEYS = ["containerPort", "port", "mountPath", "name", "uid", "ip", "path"]


def merge_list(observed: list[Any] | None, last: list[Any] | None, desired: list[Any]) -> Any:
    """Merge lists held at spec.items; None means the field is absent."""

    def wrap(items: list[Any] | None) -> Obj:
        return {"spec": {} if items is None else {"items": items}}

    return merge(wrap(observed), wrap(last), wrap(desired))["spec"]["items"]


def with_annotation(obj: Obj, value: Any) -> Obj:
    result = copy.deepcopy(obj)
    result.setdefault("metadata", {}).setdefault("annotations", {})[LAST_APPLIED_ANNOTATION] = value
    return result


def compact(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


# --- list-map detection -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second"),
    [
        *itertools.pairwise(CONVENTIONAL_KEYS),
        ("containerPort", "name"),
        ("port", "path"),
        ("mountPath", "ip"),
    ],
)
def test_the_earlier_conventional_key_wins(first: str, second: str) -> None:
    # Keyed by `first`, the item is merged (extra survives, second updated); keyed by
    # `second` or replaced, "old" would be dropped and a bare new item would take its place.
    observed = [{first: 1, second: "old", "extra": True}]
    last = [{first: 1, second: "old"}]
    desired = [{first: 1, second: "new"}]
    assert merge_list(observed, last, desired) == [{first: 1, second: "new", "extra": True}]


@pytest.mark.parametrize("key", CONVENTIONAL_KEYS)
def test_each_conventional_key_makes_a_list_map(key: str) -> None:
    observed = [{key: "b", "v": 1, "extra": "kept"}, {key: "a", "v": 1}]
    last = [{key: "a", "v": 1}, {key: "b", "v": 1}]
    desired = [{key: "b", "v": 2}]
    assert merge_list(observed, last, desired) == [{key: "b", "v": 2, "extra": "kept"}]


@pytest.mark.parametrize(
    ("observed", "last", "desired", "expected"),
    [
        pytest.param(["a", "b", "c"], ["a"], ["x"], ["x"], id="scalar-list"),
        pytest.param([1, 2], None, [2, 1], [2, 1], id="scalar-list-reordered"),
        pytest.param(
            [{"name": "a", "extra": 1}, "b"],
            [{"name": "a"}],
            [{"name": "a"}],
            [{"name": "a"}],
            id="scalar-item-in-observed",
        ),
        pytest.param(
            [{"name": "a", "extra": 1}],
            [{"name": "a"}],
            [{"name": "a"}, 5],
            [{"name": "a"}, 5],
            id="scalar-item-in-desired",
        ),
        pytest.param(
            [{"name": "a", "extra": 1}, {"other": 1}],
            [{"name": "a"}],
            [{"name": "a"}],
            [{"name": "a"}],
            id="observed-item-without-the-key",
        ),
        pytest.param(
            [{"name": "a", "v": 1, "extra": 1}, {"name": "a", "v": 2}],
            [{"name": "a", "v": 1}, {"name": "a", "v": 2}],
            [{"name": "a", "v": 3}],
            [{"name": "a", "v": 3}],
            id="duplicate-key-values",
        ),
        pytest.param([], [], [], [], id="all-empty"),
        pytest.param(None, None, [], [], id="absent-and-empty"),
        pytest.param(None, [], [{"name": "a"}], [{"name": "a"}], id="new-list-map"),
    ],
)
def test_lists_that_are_not_list_maps_are_replaced(
    observed: list[Any] | None, last: list[Any] | None, desired: list[Any], expected: list[Any]
) -> None:
    assert merge_list(observed, last, desired) == expected


@pytest.mark.parametrize(
    ("observed", "last", "desired", "expected"),
    [
        pytest.param(
            [{"name": "a", "extra": 1}],
            ["a"],
            [{"name": "a"}],
            [{"name": "a", "extra": 1}],
            id="scalar-item-in-last-applied",
        ),
        pytest.param(
            [{"key": "a", "extra": 1}],
            None,
            [{"name": "a"}],
            [{"key": "a", "extra": 1, "name": "a"}],
            id="no-key-shared-by-all-lists",
        ),
        pytest.param(
            # tolerations: the field nobody applied (a server default) stays
            [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
            [],
            [{"key": "k", "operator": "Exists"}],
            [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
            id="unconventional-key",
        ),
        pytest.param(
            # a field applied last time and no longer desired is removed, item by item
            [{"key": "k", "effect": "NoSchedule"}, {"key": "j"}],
            [{"key": "k", "effect": "NoSchedule"}, {"key": "j"}],
            [{"key": "k"}, {"key": "j", "value": "v"}],
            [{"key": "k"}, {"key": "j", "value": "v"}],
            id="removed-field",
        ),
        pytest.param(
            [{"key": "k", "extra": 1}],
            None,
            [{"key": "k"}, {"key": "j"}],
            [{"key": "k"}, {"key": "j"}],
            id="other-length-replaces",
        ),
    ],
)
def test_key_less_lists_of_maps_of_one_length_merge_item_by_item(
    observed: list[Any] | None, last: list[Any] | None, desired: list[Any], expected: list[Any]
) -> None:
    assert merge_list(observed, last, desired) == expected


@pytest.mark.parametrize(
    ("observed", "last", "desired", "expected"),
    [
        pytest.param([{"name": "a", "x": 1}], [{"name": "a"}], [], [], id="applied-items-removed"),
        pytest.param(
            [{"name": "a", "x": 1}],
            None,
            [],
            [{"name": "a", "x": 1}],
            id="items-set-by-others-survive-an-empty-desired",
        ),
        pytest.param([], [], [{"name": "a"}], [{"name": "a"}], id="added-to-empty"),
    ],
)
def test_empty_lists_next_to_list_map_items(
    observed: list[Any] | None, last: list[Any] | None, desired: list[Any], expected: list[Any]
) -> None:
    assert merge_list(observed, last, desired) == expected


def test_a_key_that_does_not_tell_items_apart_is_skipped() -> None:
    # One port for TCP and UDP: containerPort repeats, so the items are keyed by name.
    observed = [
        {"containerPort": 53, "protocol": "TCP", "name": "dns-tcp", "hostPort": 0},
        {"containerPort": 53, "protocol": "UDP", "name": "dns", "hostPort": 0},
    ]
    desired = [
        {"containerPort": 53, "protocol": "UDP", "name": "dns"},
        {"containerPort": 53, "protocol": "TCP", "name": "dns-tcp"},
    ]
    assert merge_list(observed, desired, desired) == observed


@pytest.mark.parametrize(
    ("observed", "last", "desired", "expected"),
    [
        pytest.param(
            [{"port": 80, "x": 1}],
            [{"port": "80"}],
            [{"port": "80"}],
            [{"port": 80, "x": 1}, {"port": "80"}],
            id="string-desired-number-observed",
        ),
        pytest.param(
            [{"port": "80", "x": 1}],
            [{"port": "80"}],
            [{"port": 80}],
            [{"port": 80}],
            id="number-desired-string-applied",
        ),
    ],
)
def test_key_values_are_compared_as_json(
    observed: list[Any], last: list[Any], desired: list[Any], expected: list[Any]
) -> None:
    assert merge_list(observed, last, desired) == expected


def test_list_map_keeps_the_observed_order_and_appends_new_items_in_desired_order() -> None:
    observed = [
        {"name": "c", "o": 1},
        {"name": "a", "o": 1},
        {"name": "x", "o": 1},  # set by someone else
        {"name": "b", "o": 1},
    ]
    last = [{"name": "a"}, {"name": "b"}, {"name": "c"}]
    desired = [{"name": "e"}, {"name": "b", "v": 2}, {"name": "d"}, {"name": "a", "v": 1}]
    assert merge_list(observed, last, desired) == [
        {"name": "a", "o": 1, "v": 1},
        {"name": "x", "o": 1},
        {"name": "b", "o": 1, "v": 2},
        {"name": "e"},
        {"name": "d"},
    ]


# --- the merge of maps and scalars ------------------------------------------------------


@pytest.mark.parametrize(
    ("observed", "last", "desired", "expected"),
    [
        pytest.param(
            {"kind": "ConfigMap", "data": {"a": "1"}, "binaryData": {"b": "Yg=="}},
            {"kind": "ConfigMap", "data": {"a": "1"}, "binaryData": {"b": "Yg=="}},
            {"kind": "ConfigMap", "data": {"a": "1"}},
            {"kind": "ConfigMap", "data": {"a": "1"}},
            id="top-level-field-dropped",
        ),
        pytest.param(
            {"spec": {"template": {"metadata": {"labels": {"app": "w", "x": "1", "o": "2"}}}}},
            {"spec": {"template": {"metadata": {"labels": {"app": "w", "x": "1"}}}}},
            {"spec": {"template": {"metadata": {"labels": {"app": "w"}}}}},
            {"spec": {"template": {"metadata": {"labels": {"app": "w", "o": "2"}}}}},
            id="nested-field-dropped-other-kept",
        ),
        pytest.param(
            {"spec": {"env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]}},
            {"spec": {"env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]}},
            {"spec": {"env": [{"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "x"}}}]}},
            {"spec": {"env": [{"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "x"}}}]}},
            id="list-map-item-and-item-field-dropped",
        ),
        pytest.param(
            {"spec": {"type": "ClusterIP", "clusterIP": "10.0.0.1", "selector": {"a": "b"}}},
            {"spec": {"type": "ClusterIP", "selector": {"a": "b"}}},
            {"spec": {"type": "ClusterIP", "selector": {"a": "c"}}},
            {"spec": {"type": "ClusterIP", "clusterIP": "10.0.0.1", "selector": {"a": "c"}}},
            id="nested-field-set-by-others-survives",
        ),
        pytest.param(
            {"spec": {"ports": [{"port": 80, "protocol": "TCP", "nodePort": 30080}]}},
            {"spec": {"ports": [{"port": 80}]}},
            {"spec": {"ports": [{"port": 80, "targetPort": 8080}]}},
            {
                "spec": {
                    "ports": [
                        {"port": 80, "protocol": "TCP", "nodePort": 30080, "targetPort": 8080}
                    ]
                }
            },
            id="list-map-item-field-set-by-others-survives",
        ),
        pytest.param(
            {"spec": {"x": {"a": 1}, "y": 1}},
            {"spec": {"x": {"a": 1}}},
            {"spec": {"x": None, "z": None}},
            # the server drops nulls: `z: null` for an absent z is no change
            {"spec": {"x": None, "y": 1}},
            id="explicit-null",
        ),
        pytest.param(
            {"spec": {"x": {"a": 1}}},
            None,
            {"spec": {"x": "s"}},
            {"spec": {"x": "s"}},
            id="map-to-scalar",
        ),
        pytest.param(
            {"spec": {"x": "s"}},
            {"spec": {"x": {"gone": 1}}},
            {"spec": {"x": {"b": 2}}},
            {"spec": {"x": {"b": 2}}},
            id="scalar-to-map",
        ),
        pytest.param(
            {"spec": {"x": {"a": 1}}},
            None,
            {"spec": {"x": [{"name": "a"}]}},
            {"spec": {"x": [{"name": "a"}]}},
            id="map-to-list",
        ),
        pytest.param(
            {"spec": {"x": [{"name": "a", "o": 1}]}},
            None,
            {"spec": {"x": {"name": "a"}}},
            {"spec": {"x": {"name": "a"}}},
            id="list-to-map",
        ),
        pytest.param(
            {"spec": {"x": [1]}}, None, {"spec": {"x": 1}}, {"spec": {"x": 1}}, id="list-to-scalar"
        ),
        pytest.param(
            {"spec": {"x": {"a": 1, "b": 2}}},
            {"spec": {"x": "was-a-scalar"}},
            {"spec": {"x": {"b": 3}}},
            {"spec": {"x": {"a": 1, "b": 3}}},
            id="last-applied-of-another-type-counts-as-empty",
        ),
        pytest.param(
            {"apiVersion": "apps/v1beta1", "kind": "Deployment", "metadata": {"name": "d"}},
            None,
            {"apiVersion": "apps/v1", "metadata": {"name": "d"}},
            {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}},
            id="api-version-from-desired",
        ),
    ],
)
def test_merge(observed: Obj, last: Obj | None, desired: Obj, expected: Obj) -> None:
    assert merge(observed, last, desired) == expected


# --- server-owned metadata and status ---------------------------------------------------


def test_server_owned_metadata_is_exactly_the_documented_set() -> None:
    assert (
        frozenset(
            {
                "uid",
                "resourceVersion",
                "generation",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "managedFields",
                "selfLink",
            }
        )
        == SERVER_OWNED_METADATA
    )


OBSERVED_CM: Obj = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {
        "name": "c",
        "namespace": "ns",
        "uid": "u-1",
        "resourceVersion": "7",
        "generation": 2,
        "creationTimestamp": "2024-01-01T00:00:00Z",
        "managedFields": [{"manager": "kubectl", "operation": "Update"}],
        "selfLink": "/api/v1/namespaces/ns/configmaps/c",
    },
    "data": {"a": "1"},
    "status": {"phase": "seen"},
}

EVIL_CM: Obj = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {
        "name": "c",
        "namespace": "ns",
        "uid": "evil",
        "resourceVersion": "1",
        "generation": 9,
        "creationTimestamp": "2030-01-01T00:00:00Z",
        "deletionTimestamp": "2030-01-01T00:00:00Z",
        "deletionGracePeriodSeconds": 0,
        "managedFields": [],
        "selfLink": "/elsewhere",
    },
    "data": {"a": "2"},
    "status": {"phase": "hacked"},
}


def test_merge_never_writes_server_owned_metadata_or_status() -> None:
    expected = copy.deepcopy(OBSERVED_CM)
    expected["data"] = {"a": "2"}
    assert merge(OBSERVED_CM, None, EVIL_CM) == expected


def test_server_owned_fields_in_last_applied_are_not_removed() -> None:
    last = {"metadata": {"name": "c", "uid": "u-1", "resourceVersion": "7"}, "status": {}}
    desired = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    expected = copy.deepcopy(OBSERVED_CM)
    assert merge(OBSERVED_CM, last, desired) == expected


def test_status_is_not_written_when_observed_has_none() -> None:
    observed = {"kind": "ConfigMap", "metadata": {"name": "c"}}
    desired = {"kind": "ConfigMap", "metadata": {"name": "c", "uid": "x"}, "status": {"a": 1}}
    assert merge(observed, None, desired) == {"kind": "ConfigMap", "metadata": {"name": "c"}}


def test_apply_never_writes_server_owned_metadata_or_status() -> None:
    result = apply(OBSERVED_CM, EVIL_CM)
    expected = copy.deepcopy(OBSERVED_CM)
    expected["data"] = {"a": "2"}
    expected["metadata"]["annotations"] = {
        LAST_APPLIED_ANNOTATION: '{"apiVersion":"v1","data":{"a":"2"},"kind":"ConfigMap",'
        '"metadata":{"name":"c","namespace":"ns"}}'
    }
    assert result == expected


# --- prepare_desired and the annotation -------------------------------------------------


def test_prepare_desired_cleans_and_records_the_compact_sorted_json() -> None:
    desired = {
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "metadata": {
            "name": "c",
            "namespace": "ns",
            "uid": "x",
            "resourceVersion": "3",
            "labels": {"app": "a"},
            "annotations": {"keep": "me", LAST_APPLIED_ANNOTATION: "stale"},
        },
        "data": {"b": "2", "a": "1"},
        "status": {"x": 1},
    }
    recorded = (
        '{"apiVersion":"v1","data":{"a":"1","b":"2"},"kind":"ConfigMap",'
        '"metadata":{"annotations":{"keep":"me"},"labels":{"app":"a"},'
        '"name":"c","namespace":"ns"}}'
    )
    assert prepare_desired(desired) == {
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "metadata": {
            "name": "c",
            "namespace": "ns",
            "labels": {"app": "a"},
            "annotations": {"keep": "me", LAST_APPLIED_ANNOTATION: recorded},
        },
        "data": {"b": "2", "a": "1"},
    }


@pytest.mark.parametrize(
    ("desired", "expected"),
    [
        pytest.param(
            {"kind": "ConfigMap", "metadata": {"name": "c"}},
            {
                "kind": "ConfigMap",
                "metadata": {
                    "name": "c",
                    "annotations": {
                        LAST_APPLIED_ANNOTATION: '{"kind":"ConfigMap","metadata":{"name":"c"}}'
                    },
                },
            },
            id="no-annotations",
        ),
        pytest.param(
            {"kind": "ConfigMap"},
            {
                "kind": "ConfigMap",
                "metadata": {"annotations": {LAST_APPLIED_ANNOTATION: '{"kind":"ConfigMap"}'}},
            },
            id="no-metadata",
        ),
    ],
)
def test_prepare_desired_creates_the_annotation(desired: Obj, expected: Obj) -> None:
    assert prepare_desired(desired) == expected


@pytest.mark.parametrize(
    ("observed", "expected"),
    [
        pytest.param({"kind": "ConfigMap"}, None, id="no-metadata"),
        pytest.param({"metadata": {"name": "c"}}, None, id="no-annotations"),
        pytest.param({"metadata": {"annotations": {"other": "{}"}}}, None, id="absent"),
        pytest.param(with_annotation({}, "{oops"), None, id="invalid-json"),
        pytest.param(with_annotation({}, ""), None, id="empty-string"),
        pytest.param(with_annotation({}, "[1,2]"), None, id="json-list"),
        pytest.param(with_annotation({}, "null"), None, id="json-null"),
        pytest.param(with_annotation({}, 5), None, id="not-a-string"),
        pytest.param(with_annotation({}, '{"data":{"a":"1"}}'), {"data": {"a": "1"}}, id="valid"),
    ],
)
def test_last_applied(observed: Obj, expected: Obj | None) -> None:
    assert last_applied(observed) == expected


CM_DESIRED: Obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}


@pytest.mark.parametrize(
    ("annotation", "expected_data"),
    [
        pytest.param(None, {"a": "9", "b": "2"}, id="missing-annotation-keeps-b"),
        pytest.param("{oops", {"a": "9", "b": "2"}, id="garbled-annotation-keeps-b"),
        pytest.param('{"data":{"a":"1","b":"2"}}', {"a": "9"}, id="valid-annotation-drops-b"),
    ],
)
def test_apply_with_missing_or_garbled_annotation(
    annotation: str | None, expected_data: dict[str, str]
) -> None:
    observed: Obj = {**CM_DESIRED, "data": {"a": "1", "b": "2"}}
    if annotation is not None:
        observed = with_annotation(observed, annotation)
    desired = {**CM_DESIRED, "data": {"a": "9"}}
    assert apply(observed, desired) == {
        **CM_DESIRED,
        "metadata": {
            "name": "c",
            "annotations": {
                LAST_APPLIED_ANNOTATION: (
                    '{"apiVersion":"v1","data":{"a":"9"},"kind":"ConfigMap",'
                    '"metadata":{"name":"c"}}'
                )
            },
        },
        "data": expected_data,
    }


def test_apply_keeps_annotations_set_by_others_and_ignores_a_hook_set_last_applied() -> None:
    observed = with_annotation(
        {**CM_DESIRED, "metadata": {"name": "c", "annotations": {"other": "x"}}},
        '{"metadata":{"annotations":{"mine":"1"},"name":"c"}}',
    )
    observed["metadata"]["annotations"]["mine"] = "1"
    desired = {
        **CM_DESIRED,
        "metadata": {"name": "c", "annotations": {LAST_APPLIED_ANNOTATION: "forged"}},
    }
    assert apply(observed, desired)["metadata"]["annotations"] == {
        "other": "x",
        LAST_APPLIED_ANNOTATION: (
            '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"annotations":{},"name":"c"}}'
        ),
    }


# --- convergence on a realistic Pod -----------------------------------------------------


def desired_pod(image: str = "nginx:1.25", debug: bool = True) -> Obj:
    """A pod as the hook returns it, plus namespace, labels and owner reference."""
    env = [{"name": "MODE", "value": "prod"}]
    if debug:
        env.append({"name": "DEBUG", "value": "0"})
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web-0",
            "namespace": "shop",
            "labels": {"app": "web", "controller-uid": "p-uid"},
            "ownerReferences": [
                {
                    "apiVersion": "example.com/v1",
                    "kind": "Web",
                    "name": "web",
                    "uid": "p-uid",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "containers": [
                {
                    "name": "nginx",
                    "image": image,
                    "ports": [{"containerPort": 80, "name": "http"}],
                    "env": env,
                    "volumeMounts": [{"name": "config", "mountPath": "/etc/nginx/conf.d"}],
                }
            ],
            "volumes": [{"name": "config", "configMap": {"name": "web-config"}}],
        },
    }


def as_stored(sent: Obj) -> Obj:
    """What the API server makes of a created pod: server metadata, defaults, status."""
    pod = copy.deepcopy(sent)
    pod["metadata"].update(
        uid="0f1e2d3c-aaaa-bbbb-cccc-111122223333",
        resourceVersion="1001",
        creationTimestamp="2024-05-01T10:00:00Z",
        managedFields=[{"manager": "reconcile", "operation": "Update", "fieldsType": "FieldsV1"}],
    )
    spec = pod["spec"]
    container = spec["containers"][0]
    container.update(
        imagePullPolicy="IfNotPresent",
        resources={},
        terminationMessagePath="/dev/termination-log",
        terminationMessagePolicy="File",
    )
    for port in container["ports"]:
        port["protocol"] = "TCP"
    token = "kube-api-access-x7k2p"
    container["volumeMounts"].append(
        {
            "name": token,
            "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
            "readOnly": True,
        }
    )
    spec["volumes"][0]["configMap"]["defaultMode"] = 420
    spec["volumes"].append(
        {
            "name": token,
            "projected": {
                "defaultMode": 420,
                "sources": [{"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}],
            },
        }
    )
    spec.update(
        restartPolicy="Always",
        terminationGracePeriodSeconds=30,
        dnsPolicy="ClusterFirst",
        serviceAccountName="default",
        serviceAccount="default",
        nodeName="node-1",
        securityContext={},
        schedulerName="default-scheduler",
        tolerations=[
            {
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            }
        ],
        priority=0,
        enableServiceLinks=True,
        preemptionPolicy="PreemptLowerPriority",
    )
    pod["status"] = {"phase": "Running", "podIP": "10.244.0.7", "qosClass": "BestEffort"}
    return pod


def test_no_update_is_needed_after_a_create_despite_server_defaults() -> None:
    observed = as_stored(prepare_desired(desired_pod()))
    applied = apply(observed, desired_pod())
    assert applied == observed
    assert not needs_update(observed, applied)
    assert diff_paths(observed, applied) == []


def test_an_update_removes_what_the_hook_dropped_and_then_converges() -> None:
    observed = as_stored(prepare_desired(desired_pod()))
    new_desired = desired_pod(image="nginx:1.26", debug=False)

    applied = apply(observed, new_desired)

    expected = copy.deepcopy(observed)
    container = expected["spec"]["containers"][0]
    container["image"] = "nginx:1.26"
    container["env"] = [{"name": "MODE", "value": "prod"}]
    expected["metadata"]["annotations"][LAST_APPLIED_ANNOTATION] = compact(new_desired)
    assert applied == expected
    assert needs_update(observed, applied)
    assert diff_paths(observed, applied) == [
        f'metadata.annotations["{LAST_APPLIED_ANNOTATION}"]',
        "spec.containers[0].env[1]",
        "spec.containers[0].image",
    ]

    # The server stores the update; applying the same desired again changes nothing.
    stored = copy.deepcopy(applied)
    stored["metadata"]["resourceVersion"] = "1002"
    stored["status"]["phase"] = "Pending"
    assert apply(stored, new_desired) == stored
    assert not needs_update(stored, apply(stored, new_desired))


IDEMPOTENCE_CASES = [
    pytest.param(
        as_stored(prepare_desired(desired_pod())), desired_pod("nginx:2", False), id="pod"
    ),
    pytest.param(
        {**CM_DESIRED, "data": {"a": "1", "b": "2"}}, {**CM_DESIRED, "data": {"a": "3"}}, id="new"
    ),
    pytest.param(
        with_annotation({**CM_DESIRED, "data": {"a": "1"}}, "{garbled"),
        {**CM_DESIRED, "data": {"c": "3"}},
        id="garbled",
    ),
    pytest.param(OBSERVED_CM, EVIL_CM, id="server-owned"),
]


@pytest.mark.parametrize(("observed", "desired"), IDEMPOTENCE_CASES)
def test_apply_is_idempotent(observed: Obj, desired: Obj) -> None:
    once = apply(observed, desired)
    twice = apply(once, desired)
    assert twice == once
    assert not needs_update(once, twice)


@pytest.mark.parametrize(("observed", "desired"), IDEMPOTENCE_CASES)
def test_no_argument_is_mutated_and_results_share_nothing(observed: Obj, desired: Obj) -> None:
    observed_before = copy.deepcopy(observed)
    desired_before = copy.deepcopy(desired)
    last = last_applied(observed)
    last_before = copy.deepcopy(last)

    results = [
        apply(observed, desired),
        merge(observed, last, desired),
        prepare_desired(desired),
    ]
    needs_update(observed, results[0])
    diff_paths(observed, results[0])
    assert observed == observed_before
    assert desired == desired_before
    assert last == last_before

    for result in results:
        for section in ("metadata", "spec", "data"):
            value = result.get(section)
            if isinstance(value, dict):
                value["mutated"] = True
                for item in value.values():
                    if isinstance(item, list) and item and isinstance(item[0], dict):
                        item[0]["mutated"] = True
    assert observed == observed_before
    assert desired == desired_before


# --- needs_update and diff_paths --------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after", "update"),
    [
        pytest.param({"a": {"b": [1, {"c": "d"}]}}, {"a": {"b": [1, {"c": "d"}]}}, False, id="eq"),
        pytest.param({"a": 1}, {"a": 1.0}, False, id="int-equals-float"),
        pytest.param({"a": True}, {"a": 1}, True, id="bool-is-not-int"),
        pytest.param({"a": 0}, {"a": False}, True, id="false-is-not-zero"),
        pytest.param({"a": "1"}, {"a": 1}, True, id="string-is-not-number"),
        pytest.param({"a": None}, {}, True, id="null-is-not-absent"),
        pytest.param({"a": []}, {"a": {}}, True, id="list-is-not-map"),
        pytest.param({"a": [1, 2]}, {"a": [2, 1]}, True, id="list-order"),
    ],
)
def test_needs_update(before: Obj, after: Obj, update: bool) -> None:
    assert needs_update(before, after) is update
    assert (diff_paths(before, after) != []) is update


def test_diff_paths() -> None:
    before = {"a": {"b": 1, "c": [1, 2]}, "d.e": 1, "x": {"y": 1}, "same": {"k": [{"v": 1}]}}
    after = {"a": {"b": 2, "c": [1]}, "d.e": 2, "x": "s", "n": None, "same": {"k": [{"v": 1}]}}
    assert diff_paths(before, after) == ['["d.e"]', "a.b", "a.c[1]", "n", "x"]


def test_secret_string_data_converges_with_what_the_server_stores() -> None:
    desired = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s"},
        "stringData": {"password": "hunter2"},
    }
    created = prepare_desired(desired)
    assert "stringData" not in created and created["data"] == {"password": "aHVudGVyMg=="}
    observed = {**created, "metadata": {**created["metadata"], "uid": "u", "resourceVersion": "1"}}
    assert not needs_update(observed, apply(observed, desired))
