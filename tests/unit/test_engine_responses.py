"""Hook responses validated into typed values (reconcile.engine.responses)."""

from __future__ import annotations

from typing import Any

import pytest

from reconcile.engine.related import RelatedRule, parse_customize_response
from reconcile.engine.responses import (
    ResponseError,
    SyncResponse,
    parse_sync_response,
)
from reconcile.objects.selectors import LabelSelector, Requirement

POD: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0"}}
CONFIGMAP: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "conf", "labels": {"app": "web"}},
    "data": {"a": "b"},
}


# --- sync / finalize responses ------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({}, SyncResponse(status=None, children=[], resync_after=None, finalized=False)),
        (
            {"status": None, "children": None, "resyncAfterSeconds": None},
            SyncResponse(),
        ),
        (
            {
                "status": {"replicas": 2},
                "children": [POD, CONFIGMAP],
                "resyncAfterSeconds": 1.5,
                "finalized": True,
            },
            SyncResponse(
                status={"replicas": 2},
                children=[POD, CONFIGMAP],
                resync_after=1.5,
                finalized=True,
            ),
        ),
        ({"resyncAfterSeconds": 5}, SyncResponse(resync_after=5.0)),
        ({"resyncAfterSeconds": 0}, SyncResponse(resync_after=0.0)),
        ({"status": {}}, SyncResponse(status={})),
        ({"finalized": False}, SyncResponse(finalized=False)),
        ({"children": []}, SyncResponse(children=[])),
        # Unknown fields are ignored, like Metacontroller does.
        ({"somethingElse": 1}, SyncResponse()),
    ],
)
def test_parse_sync_response(data: dict[str, Any], expected: SyncResponse) -> None:
    response = parse_sync_response(data)
    assert response == expected
    if response.resync_after is not None:
        assert isinstance(response.resync_after, float)


def test_parse_sync_response_keeps_children_in_order() -> None:
    response = parse_sync_response({"children": [CONFIGMAP, POD]})
    assert [c["metadata"]["name"] for c in response.children] == ["conf", "web-0"]


@pytest.mark.parametrize(
    ("data", "problems"),
    [
        ({"status": "ok"}, ["status: must be an object or null, not str"]),
        ({"status": []}, ["status: must be an object or null, not list"]),
        ({"status": 3}, ["status: must be an object or null, not int"]),
        ({"children": {}}, ["children: must be a list of objects"]),
        ({"children": "pods"}, ["children: must be a list of objects"]),
        ({"children": ["x"]}, ["children[0]: must be an object"]),
        ({"children": [POD, None]}, ["children[1]: must be an object"]),
        (
            {"children": [{}]},
            [
                "children[0].apiVersion: is required",
                "children[0].kind: is required",
                "children[0].metadata.name: is required",
            ],
        ),
        (
            {"children": [{"apiVersion": "", "kind": 5, "metadata": {"name": ""}}]},
            [
                "children[0].apiVersion: is required",
                "children[0].kind: is required",
                "children[0].metadata.name: is required",
            ],
        ),
        (
            {"children": [{"apiVersion": "v1", "kind": "Pod", "metadata": "web"}]},
            ["children[0].metadata.name: is required"],
        ),
        (
            {"children": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": 7}}]},
            ["children[0].metadata.name: is required"],
        ),
        (
            {"children": [POD, {"apiVersion": "v1", "metadata": {"name": "x"}}]},
            ["children[1].kind: is required"],
        ),
        ({"finalized": "yes"}, ["finalized: must be true or false, not 'yes'"]),
        ({"finalized": 1}, ["finalized: must be true or false, not 1"]),
        (
            {"resyncAfterSeconds": -1},
            ["resyncAfterSeconds: must be a number of seconds >= 0, not -1"],
        ),
        (
            {"resyncAfterSeconds": "5"},
            ["resyncAfterSeconds: must be a number of seconds >= 0, not '5'"],
        ),
        (
            {"resyncAfterSeconds": True},
            ["resyncAfterSeconds: must be a number of seconds >= 0, not True"],
        ),
        (
            # Every problem is listed, in field order.
            {
                "status": "x",
                "children": [{"kind": "Pod", "metadata": {}}, 3],
                "finalized": "no",
                "resyncAfterSeconds": -0.5,
            },
            [
                "status: must be an object or null, not str",
                "children[0].apiVersion: is required",
                "children[0].metadata.name: is required",
                "children[1]: must be an object",
                "finalized: must be true or false, not 'no'",
                "resyncAfterSeconds: must be a number of seconds >= 0, not -0.5",
            ],
        ),
    ],
)
def test_parse_sync_response_rejects(data: dict[str, Any], problems: list[str]) -> None:
    with pytest.raises(ResponseError) as info:
        parse_sync_response(data)
    assert info.value.problems == problems
    assert str(info.value) == "sync hook response: " + "; ".join(problems)


def test_the_error_names_the_hook() -> None:
    with pytest.raises(ResponseError) as info:
        parse_sync_response({"finalized": "maybe"}, "finalize")
    assert (
        str(info.value) == "finalize hook response: finalized: must be true or false, not 'maybe'"
    )


# --- customize responses ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({}, []),
        ({"relatedResources": None}, []),
        ({"relatedResources": []}, []),
        (
            {
                "relatedResources": [
                    {
                        "apiVersion": "v1",
                        "resource": "configmaps",
                        "labelSelector": {"matchLabels": {"app": "web"}},
                    }
                ]
            },
            [
                RelatedRule(
                    api_version="v1",
                    resource="configmaps",
                    selector=LabelSelector((Requirement("app", "Equals", ("web",)),)),
                    namespace="",
                    names=(),
                )
            ],
        ),
        (
            {
                "relatedResources": [
                    {
                        "apiVersion": "apps/v1",
                        "resource": "deployments",
                        "labelSelector": {
                            "matchExpressions": [
                                {"key": "tier", "operator": "In", "values": ["b", "a"]}
                            ]
                        },
                    }
                ]
            },
            [
                RelatedRule(
                    api_version="apps/v1",
                    resource="deployments",
                    selector=LabelSelector((Requirement("tier", "In", ("a", "b")),)),
                )
            ],
        ),
        (
            {
                "relatedResources": [
                    {
                        "apiVersion": "v1",
                        "resource": "secrets",
                        "namespace": "tools",
                        "names": ["a", "b"],
                    }
                ]
            },
            [
                RelatedRule(
                    api_version="v1",
                    resource="secrets",
                    selector=None,
                    namespace="tools",
                    names=("a", "b"),
                )
            ],
        ),
        (
            {"relatedResources": [{"apiVersion": "v1", "resource": "secrets", "names": ["a"]}]},
            [RelatedRule(api_version="v1", resource="secrets", selector=None, names=("a",))],
        ),
        # Metacontroller's selectByNamespaceAndLabels, and its namespaceSelector
        (
            {
                "relatedResources": [
                    {
                        "apiVersion": "v1",
                        "resource": "secrets",
                        "labelSelector": {},
                        "namespace": "tools",
                    },
                    {"apiVersion": "v1", "resource": "secrets", "namespaceSelector": {}},
                ]
            },
            [
                RelatedRule("v1", "secrets", selector=LabelSelector(), namespace="tools"),
                RelatedRule("v1", "secrets", namespace_selector=LabelSelector()),
            ],
        ),
        (
            {"relatedResources": [{"apiVersion": "v1", "resource": "secrets", "namespace": "x"}]},
            [RelatedRule(api_version="v1", resource="secrets", selector=None, namespace="x")],
        ),
        # `labelSelector: {}` selects every object (the seed docs' example for namespaces).
        (
            {
                "relatedResources": [
                    {"apiVersion": "v1", "resource": "namespaces", "labelSelector": {}}
                ]
            },
            [RelatedRule(api_version="v1", resource="namespaces", selector=LabelSelector())],
        ),
        # A null labelSelector next to names is "not used".
        (
            {
                "relatedResources": [
                    {
                        "apiVersion": "v1",
                        "resource": "secrets",
                        "labelSelector": None,
                        "names": ["a"],
                    }
                ]
            },
            [RelatedRule(api_version="v1", resource="secrets", selector=None, names=("a",))],
        ),
        (
            {
                "relatedResources": [
                    {"apiVersion": "v1", "resource": "configmaps", "labelSelector": {}},
                    {"apiVersion": "v1", "resource": "secrets", "names": ["s"]},
                ]
            },
            [
                RelatedRule(api_version="v1", resource="configmaps", selector=LabelSelector()),
                RelatedRule(api_version="v1", resource="secrets", names=("s",)),
            ],
        ),
    ],
)
def test_parse_customize_response(data: dict[str, Any], expected: list[RelatedRule]) -> None:
    assert parse_customize_response(data) == expected


@pytest.mark.parametrize(
    ("data", "problems"),
    [
        ({"relatedResources": "configmaps"}, ["relatedResources: must be a list"]),
        ({"relatedResources": {"apiVersion": "v1"}}, ["relatedResources: must be a list"]),
        ({"relatedResources": ["x"]}, ["relatedResources[0]: must be an object"]),
        (
            {"relatedResources": [{}]},
            [
                "relatedResources[0].apiVersion: is required",
                "relatedResources[0].resource: is required",
            ],
        ),
        (
            {"relatedResources": [{"apiVersion": "", "resource": 3, "labelSelector": {}}]},
            [
                "relatedResources[0].apiVersion: is required",
                "relatedResources[0].resource: is required",
            ],
        ),
        (
            {
                "relatedResources": [
                    {
                        "apiVersion": "v1",
                        "resource": "secrets",
                        "labelSelector": {"matchLabels": {"a": "b"}},
                        "names": ["x"],
                    }
                ]
            },
            [
                "relatedResources[0]: names cannot be combined with labelSelector or "
                "namespaceSelector"
            ],
        ),
        (
            {
                "relatedResources": [
                    {
                        "apiVersion": "v1",
                        "resource": "secrets",
                        "namespaceSelector": {},
                        "namespace": "tools",
                    }
                ]
            },
            ["relatedResources[0]: namespace cannot be combined with namespaceSelector"],
        ),
        (
            {"relatedResources": [{"apiVersion": "v1", "resource": "secrets", "names": "a"}]},
            ["relatedResources[0].names: must be a list of strings"],
        ),
        (
            {"relatedResources": [{"apiVersion": "v1", "resource": "secrets", "names": ["a", 1]}]},
            ["relatedResources[0].names: must be a list of strings"],
        ),
        (
            {"relatedResources": [{"apiVersion": "v1", "resource": "secrets", "namespace": 5}]},
            ["relatedResources[0].namespace: must be a string"],
        ),
        (
            {
                "relatedResources": [
                    {
                        "apiVersion": "v1",
                        "resource": "secrets",
                        "labelSelector": {"matchExpressions": [{"key": "a", "operator": "Bad"}]},
                    }
                ]
            },
            [
                "relatedResources[0].labelSelector.matchExpressions[0].operator: 'Bad' is not "
                "one of In, NotIn, Exists, DoesNotExist"
            ],
        ),
        (
            {
                "relatedResources": [
                    {"apiVersion": "v1", "resource": "secrets", "labelSelector": "a=b"}
                ]
            },
            [
                "relatedResources[0].labelSelector: must be an object with matchLabels / "
                "matchExpressions"
            ],
        ),
        (
            # Every problem of every rule is listed.
            {
                "relatedResources": [
                    {"apiVersion": "v1", "resource": "secrets", "names": ["ok"]},
                    7,
                    {"resource": "configmaps"},
                    {
                        "apiVersion": "v1",
                        "resource": "pods",
                        "labelSelector": {},
                        "names": ["p"],
                    },
                ]
            },
            [
                "relatedResources[1]: must be an object",
                "relatedResources[2].apiVersion: is required",
                "relatedResources[3]: names cannot be combined with labelSelector or "
                "namespaceSelector",
            ],
        ),
    ],
)
def test_parse_customize_response_rejects(data: dict[str, Any], problems: list[str]) -> None:
    with pytest.raises(ResponseError) as info:
        parse_customize_response(data)
    assert info.value.problems == problems
    assert str(info.value) == "customize hook response: " + "; ".join(problems)
