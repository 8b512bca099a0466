"""Custom resources against their CRD's schema, on the real API server and the memory backend:
the same refusals in the same words (one broken keyword per write, as the server reports
several in no fixed order), on each release tested: `CASES` holds 1.20's words, `WORDS_1_37`
the later ones where they differ."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from reconcile.cluster import Invalid
from reconcile.cluster.types import Obj, ResourceInfo
from tests.support.backends import Backend
from tests.support.controlplane import CURRENT_RELEASE, OLDEST_RELEASE
from tests.support.poll import eventually

pytestmark = pytest.mark.releases(
    CURRENT_RELEASE,
    OLDEST_RELEASE,
    why="the words of a refusal changed between releases; --local speaks as each",
)

SPEC_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "replicas": {"type": "integer", "maximum": 5, "minimum": 1},
        "step": {"type": "integer", "multipleOf": 2},
        "ratio": {"type": "number", "maximum": 1.5, "exclusiveMaximum": True},
        "mode": {"type": "string", "enum": ["fast", "slow"]},
        "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 5},
        "day": {"type": "string", "format": "date"},
        "ports": {
            "type": "array",
            "maxItems": 2,
            "items": {"type": "integer"},
            "x-kubernetes-list-type": "set",
        },
        "labels": {
            "type": "object",
            "maxProperties": 1,
            "additionalProperties": {"type": "string"},
        },
        "size": {"x-kubernetes-int-or-string": True},
        "choice": {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "oneOf": [{"required": ["a"]}, {"required": ["b"]}],
        },
        "needs": {"type": "object", "required": ["key"], "properties": {"key": {"type": "string"}}},
        "objects": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["k"],
                "properties": {"k": {"type": "string"}, "n": {"type": "integer"}},
            },
        },
    },
}

CASES: list[tuple[str, dict[str, Any], str]] = [
    (
        "type",
        {"replicas": "3"},
        'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer:'
        ' "string"',
    ),
    (
        "maximum",
        {"replicas": 9},
        "spec.replicas: Invalid value: 9: spec.replicas in body should be less than or equal to 5",
    ),
    (
        "minimum",
        {"replicas": 0},
        "spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal"
        " to 1",
    ),
    (
        "multipleOf",
        {"step": 3},
        "spec.step: Invalid value: 3: spec.step in body should be a multiple of 2",
    ),
    (
        "exclusiveMaximum",
        {"ratio": 1.5},
        "spec.ratio: Invalid value: 1.5: spec.ratio in body should be less than 1.5",
    ),
    (
        "enum",
        {"mode": "warp"},
        'spec.mode: Unsupported value: "warp": supported values: "fast", "slow"',
    ),
    (
        "pattern",
        {"name": "A"},
        "spec.name: Invalid value: \"A\": spec.name in body should match '^[a-z]+$'",
    ),
    (
        "maxLength",
        {"name": "abcdef"},
        'spec.name: Invalid value: "abcdef": spec.name in body should be at most 5 chars long',
    ),
    (
        "format",
        {"day": "someday"},
        'spec.day: Invalid value: "someday": spec.day in body must be of type date: "someday"',
    ),
    (
        "maxItems",
        {"ports": [1, 2, 3]},
        "spec.ports: Invalid value: 3: spec.ports in body should have at most 2 items",
    ),
    (
        "items",
        {"ports": [1, "a"]},
        # 1.20 names an item by its array's path
        'spec.ports: Invalid value: "string": spec.ports in body must be of type integer: "string"',
    ),
    ("list-type set", {"ports": [1, 1]}, "spec.ports[1]: Duplicate value: 1"),
    (
        "an item's field",
        {"objects": [{"k": "a"}, {"n": 1}]},
        "spec.objects.k: Required value",
    ),
    (
        "maxProperties",
        {"labels": {"a": "1", "b": "2"}},
        "spec.labels: Invalid value: 1: spec.labels in body should have at most 1 properties",
    ),
    (
        "int-or-string",
        {"size": True},
        'spec.size: Invalid value: "boolean": spec.size in body must be of type integer,string:'
        ' "boolean"',
    ),
    ("required", {"needs": {}}, "spec.needs.key: Required value"),
]


# Where 1.37 words a refusal otherwise: the `Too long`/`Too many` field errors (1.32, 1.34),
# items named by their index.
WORDS_1_37 = {
    "maxLength": "spec.name: Too long: may not be more than 5 bytes",
    "maxItems": "spec.ports: Too many: 3: must have at most 2 items",
    "items": 'spec.ports[1]: Invalid value: "string": spec.ports[1] in body must be of type'
    ' integer: "string"',
    "an item's field": "spec.objects[1].k: Required value",
    "maxProperties": "spec.labels: Too many: 2: must have at most 1 item",
}


def words(case: str, message: str, release: str) -> str:
    return WORDS_1_37.get(case, message) if release == CURRENT_RELEASE else message


# The live API server's Widget CRD, made once per control plane: every case creates objects of
# its own in a namespace of its own, and each CRD a test adds costs the server an OpenAPI rebuild.
_LIVE_WIDGETS: dict[str, ResourceInfo] = {}


@pytest.fixture
def widgets(backend: Backend) -> ResourceInfo:
    if backend.plane is None:
        return _create_widgets(backend)
    server = backend.plane.server
    if server not in _LIVE_WIDGETS:
        _LIVE_WIDGETS[server] = _create_widgets(backend)
    return _LIVE_WIDGETS[server]


def _create_widgets(backend: Backend) -> ResourceInfo:
    group = f"t{uuid.uuid4().hex[:8]}.example.com"
    schema = {"type": "object", "properties": {"spec": SPEC_SCHEMA}}
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema},
                }
            ],
        },
    }
    backend.admin.create(backend.admin.discover("apiextensions.k8s.io/v1", "crds"), crd)
    return eventually(
        lambda: backend.cluster.discover(f"{group}/v1", "widgets"), what="widgets to be served"
    )


def widget(resource: ResourceInfo, name: str, namespace: str, spec: dict[str, Any]) -> Obj:
    return {
        "apiVersion": resource.api_version,
        "kind": "Widget",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


@pytest.mark.parametrize(("case", "spec", "message"), CASES, ids=[c[0] for c in CASES])
def test_a_custom_resource_breaking_its_schema_is_refused_in_the_servers_words(
    backend: Backend,
    namespace: str,
    widgets: ResourceInfo,
    kube_release: str,
    case: str,
    spec: dict[str, Any],
    message: str,
) -> None:
    with pytest.raises(Invalid) as caught:
        backend.cluster.create(widgets, widget(widgets, "w", namespace, spec))
    expected = words(case, message, kube_release)
    assert str(caught.value).endswith(f'Widget.{widgets.group} "w" is invalid: {expected}')


def test_one_of_none_valid_names_the_field_and_the_best_branch(
    backend: Backend, namespace: str, widgets: ResourceInfo
) -> None:
    with pytest.raises(Invalid) as caught:
        backend.cluster.create(widgets, widget(widgets, "w", namespace, {"choice": {}}))
    text = str(caught.value)
    assert (
        '<nil>: Invalid value: "": "spec.choice" must validate one and only one schema (oneOf).'
        " Found none valid" in text
    )
    assert "spec.choice.a: Required value" in text


def test_a_custom_resource_within_its_schema_is_stored(
    backend: Backend, namespace: str, widgets: ResourceInfo
) -> None:
    spec = {
        "replicas": 5,
        "step": 4,
        "ratio": 1.25,
        "mode": "fast",
        "name": "abc",
        "day": "2024-02-29",
        "ports": [1, 2],
        "size": "50%",
        "choice": {"a": "x"},
        "needs": {"key": "k"},
    }
    stored = backend.cluster.create(widgets, widget(widgets, "ok", namespace, spec))
    assert stored["spec"] == spec
