"""Metacontroller's hook API versions end to end, on both backends with real hook servers:
`version: v1` (the value Metacontroller's CRDs store on every hook) and v2 (object maps keyed
`namespace/name` whatever the parent's scope; answers read strictly: an unknown or repeated
field fails the parent, naming the field, and changes nothing)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reconcile.cluster import NotFound
from reconcile.cluster.types import Obj, ResourceInfo
from tests.support.backends import Backend
from tests.support.controllers import composite, run, webhook, write_controllers
from tests.support.hookserver import serve

SELECTOR = {"matchLabels": {"app": "versions"}}
CM = ("v1", "configmaps", "InPlace")


def parent(widgets: ResourceInfo, name: str, namespace: str) -> Obj:
    return {
        "apiVersion": widgets.api_version,
        "kind": widgets.kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": SELECTOR},
    }


def child(name: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"app": "versions"}},
        "data": {"from": "hook"},
    }


def versioned(hook: dict[str, Any], version: str, **webhook_fields: Any) -> dict[str, Any]:
    hook["webhook"].update(webhook_fields)
    return {**hook, "version": version}


@pytest.mark.parametrize(("version", "keyed"), [("v1", "{name}"), ("v2", "{ns}/{name}")])
def test_children_and_related_are_keyed_by_the_hook_version(
    backend: Backend,
    namespace: str,
    widgets: ResourceInfo,
    cms: ResourceInfo,
    tmp_path: Path,
    version: str,
    keyed: str,
) -> None:
    backend.admin.create(widgets, parent(widgets, "keys", namespace))
    backend.admin.create(
        cms,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "settings", "namespace": namespace},
            "data": {"a": "1"},
        },
    )

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        return {"children": [child("keys-child")]}

    def customize(request: dict[str, Any]) -> dict[str, Any]:
        rule = {"apiVersion": "v1", "resource": "configmaps", "names": ["settings"]}
        rule["namespace"] = namespace  # v2 reaches every namespace a rule allows
        return {"relatedResources": [rule]}

    with serve(sync) as sync_hook, serve(customize) as customize_hook:
        controller = composite(
            f"keys-{version}",
            widgets,
            [CM],
            {
                "sync": versioned(webhook(sync_hook.url), version),
                "customize": versioned(webhook(customize_hook.url), version),
            },
        )
        result = run(backend, write_controllers(tmp_path, controller))
        assert result.errors == [] and result.converged
        last = sync_hook.requests[-1]
    assert set(last["children"]["ConfigMap.v1"]) == {keyed.format(ns=namespace, name="keys-child")}
    assert set(last["related"]["ConfigMap.v1"]) == {keyed.format(ns=namespace, name="settings")}


@pytest.mark.parametrize(
    ("answer", "named", "loose_creates"),
    [
        pytest.param(
            {"children": [child("strict-child")], "chidlren": []},
            "chidlren: unknown field",
            "strict-child",
            id="unknown-field",
        ),
        pytest.param(
            b'{"children": [], "children": [{"apiVersion": "v1", "kind": "ConfigMap", '
            b'"metadata": {"name": "strict-child", "labels": {"app": "versions"}}}]}',
            "field 'children' appears twice",
            "strict-child",  # read loosely, the last one counts
            id="repeated-field",
        ),
        pytest.param(
            b'{"children": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": '
            b'{"name": "strict-child", "name": "other", "labels": {"app": "versions"}}}]}',
            "field 'name' appears twice",
            "other",
            id="repeated-field-inside-a-child",
        ),
    ],
)
def test_a_strict_answer_with_an_unknown_or_repeated_field_changes_nothing(
    backend: Backend,
    namespace: str,
    widgets: ResourceInfo,
    cms: ResourceInfo,
    tmp_path: Path,
    answer: dict[str, Any] | bytes,
    named: str,
    loose_creates: str,
) -> None:
    backend.admin.create(widgets, parent(widgets, "strict", namespace))
    backend.admin.create(widgets, parent(widgets, "other", namespace))

    def sync(request: dict[str, Any]) -> dict[str, Any] | tuple[int, Any]:
        if request["parent"]["metadata"]["name"] == "other":
            return {"children": [child("other-child")]}
        return (200, answer)

    with serve(sync) as hook:
        strict = composite("strict", widgets, [CM], {"sync": versioned(webhook(hook.url), "v2")})
        result = run(backend, write_controllers(tmp_path, strict))
        assert any(named in error and "strict" in error for error in result.errors), result.errors
        with pytest.raises(NotFound):
            backend.admin.get(cms, "strict-child", namespace=namespace)
        # the other parent of the same controller carries on
        assert backend.admin.get(cms, "other-child", namespace=namespace)

        # the same answer read loosely (v1, or v2 with responseUnMarshallMode: loose) is taken
        loose = composite(
            "strict",
            widgets,
            [CM],
            {"sync": versioned(webhook(hook.url), "v2", responseUnMarshallMode="loose")},
        )
        again = run(backend, write_controllers(tmp_path / "loose", loose))
        assert again.errors == [], again.errors
    assert backend.admin.get(cms, loose_creates, namespace=namespace)


def test_related_objects_by_namespace_and_labels_and_by_namespace_selector(
    backend: Backend, namespace: str, widgets: ResourceInfo, cms: ResourceInfo, tmp_path: Path
) -> None:
    """Metacontroller's other selections: `labelSelector` with `namespace` (v1: the parent's
    own), and, for a v2 hook, `namespaceSelector` reaching other namespaces."""
    namespaces = backend.admin.discover("v1", "namespaces")
    other = f"{namespace}-other"
    backend.admin.create(
        namespaces,
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": other, "labels": {"team": "b"}},
        },
    )
    try:
        for ns in (namespace, other):
            backend.admin.create(
                cms,
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": "shared", "namespace": ns, "labels": {"share": "yes"}},
                },
            )
        backend.admin.create(widgets, parent(widgets, "rel", namespace))
        rules: dict[str, list[dict[str, Any]]] = {
            "v1": [
                {
                    "apiVersion": "v1",
                    "resource": "configmaps",
                    "labelSelector": {"matchLabels": {"share": "yes"}},
                    "namespace": namespace,
                }
            ],
            "v2": [
                {
                    "apiVersion": "v1",
                    "resource": "configmaps",
                    "labelSelector": {"matchLabels": {"share": "yes"}},
                    "namespaceSelector": {"matchLabels": {"team": "b"}},
                }
            ],
        }
        seen: dict[str, set[str]] = {}
        for version, wanted in rules.items():

            def customize(request: dict[str, Any], wanted: Any = wanted) -> dict[str, Any]:
                return {"relatedResources": wanted}

            def sync(request: dict[str, Any], version: str = version) -> dict[str, Any]:
                seen[version] = set(request["related"].get("ConfigMap.v1", {}))
                return {"children": []}

            with serve(sync) as sync_hook, serve(customize) as customize_hook:
                controller = composite(
                    f"related-{version}",
                    widgets,
                    [CM],
                    {
                        "sync": versioned(webhook(sync_hook.url), version),
                        "customize": versioned(webhook(customize_hook.url), version),
                    },
                )
                result = run(backend, write_controllers(tmp_path / version, controller))
                assert result.errors == [], result.errors
        assert seen["v1"] == {"shared"}
        assert seen["v2"] == {f"{other}/shared"}
    finally:
        backend.delete_quietly(namespaces, other, None)
