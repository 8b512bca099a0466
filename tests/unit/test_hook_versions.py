"""Hook versions with plain dicts: v2's uniform keys in every kind's request, and strict
answers (an unknown field named by every kind's reader, a repeated one by the JSON reader)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from reconcile.engine.composite.sync import claim_children, parent_selector, sync_request
from reconcile.engine.decorator.response import parse_response
from reconcile.engine.decorator.response import sync_request as decorator_request
from reconcile.engine.map_controller.inputs import map_request, parse_outputs, tombstone_request
from reconcile.engine.related import parse_customize_response
from reconcile.engine.responses import (
    ResponseError,
    parse_sync_response,
)
from reconcile.hooks.errors import HookError
from reconcile.hooks.parse import parse_object
from reconcile.specs.hooks import HookSpec, HookVersion, WebhookSpec
from tests.unit.test_hostile_hooks import COMPOSITE_CTX, DECORATOR, MAP_CTX, PARENT

CHILD = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {
        "name": "web-config",
        "namespace": "ns",
        "uid": "child-uid",
        "labels": {"app": "web"},
        "ownerReferences": [{"uid": "parent-uid", "controller": True}],
    },
}
OUTPUT = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "out", "namespace": "ns", "uid": "out-uid"},
}


def composite_request(uniform: bool) -> dict[str, Any]:
    selector = parent_selector(COMPOSITE_CTX)
    claims = claim_children(COMPOSITE_CTX, selector, {"ConfigMap.v1": [CHILD]})
    token = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "token", "namespace": "ns"}}
    related = {"Secret.v1": {"token": token}}
    return sync_request(COMPOSITE_CTX, claims, related, False, uniform=uniform)


@pytest.mark.parametrize(("uniform", "key"), [(False, "web-config"), (True, "ns/web-config")])
def test_each_kinds_request_is_keyed_by_the_hook_version(uniform: bool, key: str) -> None:
    request = composite_request(uniform)
    assert list(request["children"]["ConfigMap.v1"]) == [key]
    assert list(request["related"]["Secret.v1"]) == [key.replace("web-config", "token")]

    attachments = {"ConfigMap.v1": [CHILD]}
    decorated = decorator_request(
        DECORATOR, PARENT, True, attachments, {}, finalizing=False, uniform=uniform
    )
    assert list(decorated["attachments"]["ConfigMap.v1"]) == [key]

    out_key = "ns/out" if uniform else "out"
    outputs = {"ConfigMap.v1": [OUTPUT]}
    mapped = tombstone_request(MAP_CTX, "k", outputs, uniform=uniform)
    assert list(mapped["outputs"]["ConfigMap.v1"]) == [out_key]


def test_map_request_keys_follow_the_version_too() -> None:
    from reconcile.engine.map_controller.inputs import MapInput

    item = MapInput(MAP_CTX.parent_resource, PARENT, "k")
    outputs = {"ConfigMap.v1": [OUTPUT]}
    assert list(map_request(MAP_CTX, item, outputs, uniform=True)["outputs"]["ConfigMap.v1"]) == [
        "ns/out"
    ]


@pytest.mark.parametrize(
    ("read", "answer", "problem"),
    [
        (lambda a, s: parse_sync_response(a, strict=s), {"childern": []}, "childern"),
        (lambda a, s: parse_response(a, "sync", strict=s), {"label": {}}, "label"),
        (lambda a, s: parse_customize_response(a, strict=s), {"related": []}, "related"),
        (
            lambda a, s: parse_customize_response(a, strict=s),
            {"relatedResources": [{"apiVersion": "v1", "resource": "secrets", "name": "x"}]},
            "relatedResources[0].name",
        ),
        (lambda a, s: parse_outputs(a, "map", strict=s), {"output": []}, "output"),
    ],
    ids=["sync", "decorator", "customize", "customize-rule", "map"],
)
def test_a_strict_answer_names_an_unknown_field_and_a_loose_one_ignores_it(
    read: Any, answer: dict[str, Any], problem: str
) -> None:
    read(answer, False)
    with pytest.raises(ResponseError, match=re.escape(f"{problem}: unknown field")):
        read(answer, True)


def hook(strict: bool) -> HookSpec:
    return HookSpec(
        "sync",
        "CompositeController web",
        webhook=WebhookSpec("http://hooks.example/"),
        version=HookVersion.V2 if strict else HookVersion.V1,
        strict=strict,
    )


def test_a_repeated_field_is_refused_strictly_and_the_last_one_counts_loosely() -> None:
    data = b'{"status": {"a": 1, "a": 2}}'
    assert parse_object(hook(False), data, "response body") == {"status": {"a": 2}}
    with pytest.raises(HookError) as raised:
        parse_object(hook(True), data, "response body")
    assert raised.value.reason == "repeated-field"
    assert "field 'a' appears twice" in str(raised.value)
