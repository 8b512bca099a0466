"""`--manifests` on both backends: applied in kubectl's order with the three-way apply,
recorded in an ApplySet, pruned only with `--prune` and only the set's own members, refused as a
whole when a manifest is broken, and previewed end to end by a dry run (the hooks see the
parents the change would make)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconcile.cluster.errors import NotFound
from reconcile.cluster.types import ResourceInfo
from reconcile.engine.applyset import PART_OF, ApplySetRef
from tests.support.backends import Backend, crd_manifest
from tests.support.controllers import composite, run, webhook, write_controllers
from tests.support.hookserver import serve


@pytest.fixture
def names() -> dict[str, str]:
    """Names of this test's own: the live cluster is shared."""
    suffix = uuid.uuid4().hex[:8]
    return {
        "namespace": f"apps-{suffix}",
        "group": f"g{suffix}.example.com",
        "applyset": f"default/set-{suffix}",
    }


def configmap(name: str, namespace: str, **data: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": data,
    }


def write(directory: Path, *objects: dict[str, Any]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for old in directory.glob("*.yaml"):
        old.unlink()
    (directory / "all.yaml").write_text(yaml.safe_dump_all(objects))
    return directory


def namespace_object(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def apply(backend: Backend, directory: Path, names: dict[str, str], **settings: Any) -> Any:
    return run(backend, apply_paths=(str(directory),), applyset=names["applyset"], **settings)


@pytest.mark.parametrize("server_side", [False, True], ids=["client-side", "server-side"])
def test_manifests_are_applied_recorded_and_converge(
    backend: Backend, tmp_path: Path, names: dict[str, str], server_side: bool
) -> None:
    ns = names["namespace"]
    # the configmap comes first in the file: the namespace is still created before it
    manifests = write(
        tmp_path / "apps", configmap("settings", ns, level="debug"), namespace_object(ns)
    )
    first = apply(backend, manifests, names, server_side_apply=server_side)
    assert first.errors == [], first.errors
    configmaps = backend.admin.discover("v1", "configmaps")
    created = backend.admin.get(configmaps, "settings", namespace=ns)
    ref = ApplySetRef(*names["applyset"].split("/"))
    assert created["metadata"]["labels"][PART_OF] == ref.id
    parent = backend.admin.get(configmaps, ref.name, namespace=ref.namespace)
    assert parent["metadata"]["annotations"]["applyset.kubernetes.io/contains-group-kinds"] == (
        "ConfigMap,Namespace"
    )
    mark = backend.mark()
    second = apply(backend, manifests, names, server_side_apply=server_side)
    assert second.errors == [] and second.converged
    assert backend.mutations_since(mark) == {}


@pytest.mark.parametrize("server_side", [False, True], ids=["client-side", "server-side"])
def test_prune_deletes_only_members_that_left(
    backend: Backend, tmp_path: Path, names: dict[str, str], server_side: bool
) -> None:
    ns = names["namespace"]
    manifests = tmp_path / "apps"
    write(
        manifests,
        namespace_object(ns),
        configmap("kept", ns),
        configmap("dropped", ns),
        configmap("recreated", ns),
    )
    assert apply(backend, manifests, names, server_side_apply=server_side).errors == []
    configmaps = backend.admin.discover("v1", "configmaps")
    backend.admin.create(configmaps, configmap("someone-elses", ns))  # not applied by us
    write(manifests, namespace_object(ns), configmap("kept", ns))
    without = apply(backend, manifests, names, server_side_apply=server_side)
    assert without.errors == []
    backend.admin.get(configmaps, "dropped", namespace=ns)  # no --prune: still there
    # someone else takes the name over: a new object, without the set's label
    backend.admin.delete(configmaps, "recreated", namespace=ns)
    backend.admin.create(configmaps, configmap("recreated", ns, owner="someone else"))
    pruned = apply(backend, manifests, names, prune=True, server_side_apply=server_side)
    assert pruned.errors == [], pruned.errors
    with pytest.raises(NotFound):
        backend.admin.get(configmaps, "dropped", namespace=ns)
    backend.admin.get(configmaps, "kept", namespace=ns)
    backend.admin.get(configmaps, "someone-elses", namespace=ns)
    taken_over = backend.admin.get(configmaps, "recreated", namespace=ns)
    assert taken_over["data"] == {"owner": "someone else"}


def test_a_broken_manifest_applies_and_prunes_nothing(
    backend: Backend, tmp_path: Path, names: dict[str, str]
) -> None:
    ns = names["namespace"]
    manifests = tmp_path / "apps"
    write(manifests, namespace_object(ns), configmap("first", ns))
    assert apply(backend, manifests, names).errors == []
    write(manifests, namespace_object(ns), configmap("second", ns))
    (manifests / "broken.yaml").write_text("kind: ConfigMap\nmetadata: [unclosed\n")
    mark = backend.mark()
    result = apply(backend, manifests, names, prune=True)
    assert result.fatal and any("broken.yaml" in e for e in result.errors)
    assert backend.mutations_since(mark) == {}
    backend.admin.get(backend.admin.discover("v1", "configmaps"), "first", namespace=ns)


def greetings_crd(group: str) -> dict[str, Any]:
    return crd_manifest(group, "Greeting", "greetings")


def greeting(name: str, namespace: str, group: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{group}/v1",
        "kind": "Greeting",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"message": "hello", "selector": {"matchLabels": {"greeting": name}}},
    }


def test_a_crd_and_its_objects_apply_in_one_run(
    backend: Backend, tmp_path: Path, names: dict[str, str]
) -> None:
    ns, group = names["namespace"], names["group"]
    manifests = write(
        tmp_path / "apps",
        greeting("hi", ns, group),
        namespace_object(ns),
        greetings_crd(group),
    )
    result = apply(backend, manifests, names)
    assert result.errors == [], result.errors
    greetings = backend.admin.discover(f"{group}/v1", "greetings")
    assert backend.admin.get(greetings, "hi", namespace=ns)["spec"]["message"] == "hello"


def test_a_dry_run_previews_what_the_hooks_would_do_with_the_change(
    backend: Backend, tmp_path: Path, names: dict[str, str]
) -> None:
    """The pull-request preview: the change adds a CRD, a namespace and a parent; the dry run
    calls the controller's hook with that parent and lists the child it would create."""
    ns, group = names["namespace"], names["group"]
    manifests = write(
        tmp_path / "apps", greetings_crd(group), namespace_object(ns), greeting("hi", ns, group)
    )

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        parent = request["parent"]
        child = configmap(
            f"{parent['metadata']['name']}-greeting", "", text=parent["spec"]["message"]
        )
        del child["metadata"]["namespace"]
        child["metadata"]["labels"] = {"greeting": parent["metadata"]["name"]}
        return {"status": {"greeted": True}, "children": [child]}

    parent_kind = ResourceInfo(
        group, "v1", "greetings", "Greeting", namespaced=True, has_status=True
    )
    with serve(sync) as server:
        controller = composite(
            f"greeter-{group}",
            parent_kind,
            [("v1", "configmaps", "InPlace")],
            {"sync": webhook(server.url)},
        )
        controllers = write_controllers(tmp_path / "controllers", controller)
        mark = backend.mark()
        result = run(
            backend,
            controllers,
            apply_paths=(str(manifests),),
            applyset=names["applyset"],
            dry_run=True,
        )
        assert server.requests, "the hook saw the parent the change would create"
    assert result.errors == [], result.errors
    assert backend.mutations_since(mark) == {}
    planned = [
        (a.action.kind.value, a.action.resource.kind, a.action.name)
        for p in result.passes[0].parents()
        for a in p.actions
    ]
    assert ("create", "CustomResourceDefinition", f"greetings.{group}") in planned
    assert ("create", "Greeting", "hi") in planned
    assert ("create", "ConfigMap", "hi-greeting") in planned  # the hook's child
    assert server.requests[0]["parent"]["metadata"]["namespace"] == ns


def test_a_dry_run_shows_a_removed_parent_being_finalized(
    backend: Backend, tmp_path: Path, names: dict[str, str]
) -> None:
    """A parent the change removes, held by its controller's finalizer: the preview calls the
    finalize hook and shows what it would do."""
    ns, group = names["namespace"], names["group"]
    manifests = tmp_path / "apps"
    write(manifests, greetings_crd(group), namespace_object(ns), greeting("bye", ns, group))
    finalized: list[str] = []

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        child = configmap("bye-note", "", text="bye")
        del child["metadata"]["namespace"]
        child["metadata"]["labels"] = {"greeting": "bye"}
        return {"status": {}, "children": [child]}

    def finalize(request: dict[str, Any]) -> dict[str, Any]:
        finalized.append(request["parent"]["metadata"]["name"])
        return {"status": {}, "children": [], "finalized": True}

    parent_kind = ResourceInfo(
        group, "v1", "greetings", "Greeting", namespaced=True, has_status=True
    )
    with serve(sync) as syncs, serve(finalize) as finals:
        controller = composite(
            f"bye-{group}",
            parent_kind,
            [("v1", "configmaps", "InPlace")],
            {"sync": webhook(syncs.url), "finalize": webhook(finals.url)},
        )
        controllers = write_controllers(tmp_path / "controllers", controller)
        settings = {"apply_paths": (str(manifests),), "applyset": names["applyset"]}
        assert run(backend, controllers, **settings).errors == []
        assert finalized == []
        write(manifests, greetings_crd(group), namespace_object(ns))
        mark = backend.mark()
        preview = run(backend, controllers, prune=True, dry_run=True, **settings)
    assert preview.errors == [], preview.errors
    assert backend.mutations_since(mark) == {}
    assert finalized == ["bye"]
    planned = {
        (a.action.kind.value, a.action.resource.kind, a.action.name)
        for p in preview.passes[0].parents()
        for a in p.actions
    }
    assert ("delete", "Greeting", "bye") in planned
    assert ("delete", "ConfigMap", "bye-note") in planned  # the finalize hook's answer


def test_a_refused_manifest_is_an_error_and_prunes_nothing(
    backend: Backend, tmp_path: Path, names: dict[str, str]
) -> None:
    ns = names["namespace"]
    manifests = tmp_path / "apps"
    write(manifests, namespace_object(ns), configmap("first", ns))
    assert apply(backend, manifests, names).errors == []
    bad_pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "no-containers", "namespace": ns},
        "spec": {"containers": []},
    }
    write(manifests, namespace_object(ns), bad_pod)
    result = apply(backend, manifests, names, prune=True)
    (error,) = [e for e in result.errors if "no-containers" in e]
    assert "create Pod" in error and "spec.containers: Required value" in error
    configmaps = backend.admin.discover("v1", "configmaps")
    backend.admin.get(configmaps, "first", namespace=ns)  # not pruned after a failure
