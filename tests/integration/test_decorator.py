"""DecoratorController on both backends: selectors (match expressions, annotations), the
labels / annotations merge with `null` removal, status, attachments by update method, what is
never touched (foreign objects, another decorator's attachments), two decorators on one target
without a fight, opt-out and deletion finalize, failure isolation, a dry run, and a converged
run that sends no writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reconcile.cluster.errors import NotFound
from reconcile.cluster.types import ResourceInfo
from reconcile.engine.actions import RECREATE_REASON, ActionKind
from reconcile.engine.ownership import owner_reference
from reconcile.objects.meta import metadata
from reconcile.specs.decorator import DECORATOR_ANNOTATION
from tests.support.backends import Backend
from tests.support.controllers import run, webhook, write_controllers
from tests.support.hookserver import serve


def decorator(
    name: str,
    target: ResourceInfo,
    hooks: dict[str, Any],
    attachments: list[tuple[str, str, str]] = (),  # type: ignore[assignment]
    **rule: Any,
) -> dict[str, Any]:
    return {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": "DecoratorController",
        "metadata": {"name": name},
        "spec": {
            "resources": [{"apiVersion": target.api_version, "resource": target.resource, **rule}],
            "attachments": [
                {"apiVersion": a, "resource": r, "updateStrategy": {"method": m}}
                for a, r, m in attachments
            ],
            "hooks": hooks,
        },
    }


def gadget(kind: ResourceInfo, name: str, namespace: str, **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": kind.api_version,
        "kind": "Gadget",
        "metadata": {"name": name, "namespace": namespace, **meta},
        "spec": {"size": 1},
    }


SELECT: dict[str, Any] = {
    "labelSelector": {
        "matchExpressions": [{"key": "decorate", "operator": "In", "values": ["yes"]}]
    },
    "annotationSelector": {
        "matchAnnotations": {"team": "blue"},
        "matchExpressions": [{"key": "skip", "operator": "DoesNotExist"}],
    },
}


@pytest.fixture
def gadgets(backend: Backend) -> ResourceInfo:
    return backend.apply_crd("Gadget")


def test_labels_annotations_and_status_merge_then_converge(
    backend: Backend, namespace: str, gadgets: ResourceInfo, tmp_path: Path
) -> None:
    selected = {"labels": {"decorate": "yes", "old": "x"}, "annotations": {"team": "blue"}}
    backend.admin.create(gadgets, gadget(gadgets, "in", namespace, **selected))
    backend.admin.create(
        gadgets,
        gadget(
            gadgets,
            "opted-out",
            namespace,
            labels={"decorate": "yes"},
            annotations={"team": "blue", "skip": "1"},
        ),
    )
    backend.admin.create(
        gadgets,
        gadget(
            gadgets,
            "other-team",
            namespace,
            labels={"decorate": "yes"},
            annotations={"team": "red"},
        ),
    )
    seen: list[str] = []

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        seen.append(request["object"]["metadata"]["name"])
        assert request["finalizing"] is False and request["attachments"] == {}
        return {
            "labels": {"decorated": "true", "old": None},
            "annotations": {"note": "hello"},
            "status": {"decorated": True},
        }

    with serve(sync) as server:
        path = write_controllers(
            tmp_path, decorator("labeler", gadgets, {"sync": webhook(server.url)}, **SELECT)
        )
        first = run(backend, path)
        assert first.errors == [], first.errors
        assert seen and set(seen) == {"in"}
        target = backend.admin.get(gadgets, "in", namespace=namespace)
        assert metadata(target)["labels"] == {"decorate": "yes", "decorated": "true"}
        assert metadata(target)["annotations"] == {"team": "blue", "note": "hello"}
        assert target["status"] == {"decorated": True}  # no observedGeneration added
        mark = backend.mark()
        second = run(backend, path)
        assert second.errors == [] and second.converged and len(second.passes) == 1
        assert backend.mutations_since(mark) == {}
    untouched = backend.admin.get(gadgets, "other-team", namespace=namespace)
    assert "decorated" not in metadata(untouched)["labels"]


def configmap(name: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


@pytest.mark.parametrize("server_side", [False, True], ids=["client-side", "server-side"])
def test_attachments_by_update_method_and_what_is_never_touched(
    backend: Backend, namespace: str, gadgets: ResourceInfo, tmp_path: Path, server_side: bool
) -> None:
    target = backend.admin.create(
        gadgets,
        gadget(gadgets, "g", namespace, labels={"decorate": "yes"}, annotations={"team": "blue"}),
    )
    configmaps = backend.admin.discover("v1", "configmaps")
    secrets = backend.admin.discover("v1", "secrets")
    # the target controls this one, but it is not a decorator's: never touched
    foreign = configmap("foreign", mine="no")
    foreign["metadata"].update(namespace=namespace, ownerReferences=[owner_reference(target)])
    backend.admin.create(configmaps, foreign)
    size = {"value": "1"}

    def first_sync(request: dict[str, Any]) -> dict[str, Any]:
        secret = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "g-token"},
            "stringData": {"token": f"t{size['value']}"},
        }
        return {"attachments": [configmap("g-a", size=size["value"]), secret]}

    def second_sync(request: dict[str, Any]) -> dict[str, Any]:
        return {"attachments": [configmap("g-b", owner="second")]}

    with serve(first_sync) as one, serve(second_sync) as two:
        path = write_controllers(
            tmp_path,
            decorator(
                "first",
                gadgets,
                {"sync": webhook(one.url)},
                [("v1", "configmaps", "InPlace"), ("v1", "secrets", "Recreate")],
                **SELECT,
            ),
            decorator(
                "second",
                gadgets,
                {"sync": webhook(two.url)},
                [("v1", "configmaps", "InPlace")],
                **SELECT,
            ),
        )
        assert run(backend, path, server_side_apply=server_side).errors == []
        a = backend.admin.get(configmaps, "g-a", namespace=namespace)
        assert metadata(a)["annotations"][DECORATOR_ANNOTATION] == "first"
        assert metadata(a)["ownerReferences"][0]["uid"] == metadata(target)["uid"]
        b = backend.admin.get(configmaps, "g-b", namespace=namespace)
        assert metadata(b)["annotations"][DECORATOR_ANNOTATION] == "second"
        token = backend.admin.get(secrets, "g-token", namespace=namespace)
        mark = backend.mark()  # two decorators on one target: no fight
        again = run(backend, path, server_side_apply=server_side)
        assert again.converged and backend.mutations_since(mark) == {}
        size["value"] = "2"
        changed = run(backend, path, server_side_apply=server_side)
        assert changed.errors == [] and changed.converged
        deletes = [
            a.action.reason
            for p in changed.passes
            for c in p.controllers
            for parent in c.parents
            for a in parent.actions
            if a.action.kind is ActionKind.DELETE
        ]
        assert deletes == [RECREATE_REASON]  # worded as for every kind
    assert backend.admin.get(configmaps, "g-a", namespace=namespace)["data"] == {"size": "2"}
    recreated = backend.admin.get(secrets, "g-token", namespace=namespace)
    assert metadata(recreated)["uid"] != metadata(token)["uid"]  # Recreate: deleted, created
    assert backend.admin.get(configmaps, "g-b", namespace=namespace)["data"] == {"owner": "second"}
    assert backend.admin.get(configmaps, "foreign", namespace=namespace)["data"] == {"mine": "no"}


def test_opt_out_and_deletion_run_the_finalize_hook(
    backend: Backend, namespace: str, gadgets: ResourceInfo, tmp_path: Path
) -> None:
    backend.admin.create(
        gadgets,
        gadget(gadgets, "g", namespace, labels={"decorate": "yes"}, annotations={"team": "blue"}),
    )
    configmaps = backend.admin.discover("v1", "configmaps")
    finalized: list[str] = []

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        return {"labels": {"decorated": "true"}, "attachments": [configmap("g-note", a="b")]}

    def finalize(request: dict[str, Any]) -> dict[str, Any]:
        assert request["finalizing"] is True
        finalized.append(request["object"]["metadata"]["name"])
        return {"attachments": [], "finalized": not request["attachments"]["ConfigMap.v1"]}

    with serve(sync) as syncs, serve(finalize) as finals:
        path = write_controllers(
            tmp_path,
            decorator(
                "noted",
                gadgets,
                {"sync": webhook(syncs.url), "finalize": webhook(finals.url)},
                [("v1", "configmaps", "InPlace")],
                **SELECT,
            ),
        )
        assert run(backend, path).errors == []
        target = backend.admin.get(gadgets, "g", namespace=namespace)
        assert "metacontroller.io/decoratorcontroller-noted" in metadata(target)["finalizers"]
        backend.admin.get(configmaps, "g-note", namespace=namespace)
        # opting out: the label goes, the finalize hook cleans up over the passes it needs
        metadata(target)["labels"]["decorate"] = "no"
        backend.admin.update(gadgets, target)
        opted_out = run(backend, path)
        assert opted_out.errors == [] and opted_out.converged, opted_out.errors
        assert finalized and set(finalized) == {"g"}
        after = backend.admin.get(gadgets, "g", namespace=namespace)
        assert not metadata(after).get("finalizers")
        assert metadata(after)["labels"]["decorated"] == "true"  # what it added stays
        with pytest.raises(NotFound):
            backend.admin.get(configmaps, "g-note", namespace=namespace)
        # back in, then deleted: finalized, and gone
        metadata(after)["labels"]["decorate"] = "yes"
        backend.admin.update(gadgets, after)
        assert run(backend, path).errors == []
        backend.admin.delete(gadgets, "g", namespace=namespace)
        finalized.clear()
        deleted = run(backend, path)
        assert deleted.errors == [] and set(finalized) == {"g"}  # over the passes it needed
    with pytest.raises(NotFound):
        backend.admin.get(gadgets, "g", namespace=namespace)


def test_a_target_held_by_another_finalizer_gets_no_attachments_after_finalizing(
    backend: Backend, namespace: str, gadgets: ResourceInfo, tmp_path: Path
) -> None:
    """Metacontroller's rule: once the decorator's finalizer is off a target that is still
    being deleted (another finalizer holds it), its attachments are never managed again, so
    what the finalize hook deleted is not created again by the next pass or run."""
    held = gadget(
        gadgets,
        "held",
        namespace,
        labels={"decorate": "yes"},
        annotations={"team": "blue"},
        finalizers=["example.com/hold"],
    )
    backend.admin.create(gadgets, held)
    configmaps = backend.admin.discover("v1", "configmaps")

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        return {"attachments": [configmap("held-note", a="b")]}

    def finalize(request: dict[str, Any]) -> dict[str, Any]:
        return {"attachments": [], "finalized": not request["attachments"]["ConfigMap.v1"]}

    with serve(sync) as syncs, serve(finalize) as finals:
        path = write_controllers(
            tmp_path,
            decorator(
                "held",
                gadgets,
                {"sync": webhook(syncs.url), "finalize": webhook(finals.url)},
                [("v1", "configmaps", "InPlace")],
                **SELECT,
            ),
        )
        assert run(backend, path).errors == []
        backend.admin.get(configmaps, "held-note", namespace=namespace)
        backend.admin.delete(gadgets, "held", namespace=namespace)  # held by example.com/hold
        finalized = run(backend, path)
        assert finalized.errors == [] and finalized.converged, finalized.errors
        target = backend.admin.get(gadgets, "held", namespace=namespace)
        assert metadata(target)["finalizers"] == ["example.com/hold"]
        again = run(backend, path)  # a later run: the sync hook still asks for the attachment
        assert again.errors == [] and again.converged, again.errors
        assert again.actions_by_kind()["create"] == 0
    with pytest.raises(NotFound):
        backend.admin.get(configmaps, "held-note", namespace=namespace)
    target["metadata"]["finalizers"] = []
    backend.admin.update(gadgets, target)


def test_a_bad_response_changes_nothing_for_its_target_only(
    backend: Backend, namespace: str, gadgets: ResourceInfo, tmp_path: Path
) -> None:
    for name in ("bad", "good"):
        backend.admin.create(
            gadgets,
            gadget(
                gadgets, name, namespace, labels={"decorate": "yes"}, annotations={"team": "blue"}
            ),
        )

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        if request["object"]["metadata"]["name"] == "bad":
            pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "nope"}}
            return {"labels": {"touched": "yes"}, "attachments": [pod]}
        return {"labels": {"touched": "yes"}}

    with serve(sync) as server:
        path = write_controllers(
            tmp_path,
            decorator(
                "picky",
                gadgets,
                {"sync": webhook(server.url)},
                [("v1", "configmaps", "InPlace")],
                **SELECT,
            ),
        )
        mark = backend.mark()
        dry = run(backend, path, dry_run=True)
        assert backend.mutations_since(mark) == {}
        planned = [a.action.kind.value for p in dry.passes[0].parents() for a in p.actions]
        assert planned == ["update"]  # the good target's labels, shown, not sent
        result = run(backend, path)
    (error,) = result.errors
    assert (
        "Gadget" in error
        and "bad" in error
        and "attachments[0] (Pod nope): Pod.v1 is not one of the controller's attachments" in error
    )
    bad = backend.admin.get(gadgets, "bad", namespace=namespace)
    assert "touched" not in metadata(bad)["labels"]
    good = backend.admin.get(gadgets, "good", namespace=namespace)
    assert metadata(good)["labels"]["touched"] == "yes"
    events = backend.admin.list(backend.admin.discover("v1", "events"), namespace=namespace).items
    assert any(e["reason"] == "SyncError" and e["involvedObject"]["name"] == "bad" for e in events)


def test_customize_sends_related_objects_and_on_delete_leaves_attachments(
    backend: Backend, namespace: str, gadgets: ResourceInfo, tmp_path: Path
) -> None:
    backend.admin.create(
        gadgets,
        gadget(gadgets, "g", namespace, labels={"decorate": "yes"}, annotations={"team": "blue"}),
    )
    configmaps = backend.admin.discover("v1", "configmaps")
    shared = configmap("shared-settings", level="debug")
    shared["metadata"].update(namespace=namespace, labels={"shared": "yes"})
    backend.admin.create(configmaps, shared)
    version = {"value": "1"}
    related_seen: list[dict[str, Any]] = []

    def customize(request: dict[str, Any]) -> dict[str, Any]:
        assert request["parent"]["metadata"]["name"] == "g"
        return {
            "relatedResources": [
                {
                    "apiVersion": "v1",
                    "resource": "configmaps",
                    "labelSelector": {"matchLabels": {"shared": "yes"}},
                }
            ]
        }

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        related_seen.append(request["related"])
        return {"attachments": [configmap("g-copy", version=version["value"])]}

    with serve(customize) as custom, serve(sync) as syncs:
        path = write_controllers(
            tmp_path,
            decorator(
                "copier",
                gadgets,
                {"sync": webhook(syncs.url), "customize": webhook(custom.url)},
                [("v1", "configmaps", "OnDelete")],
                **SELECT,
            ),
        )
        assert run(backend, path).errors == []
        assert list(related_seen[0]["ConfigMap.v1"]) == ["shared-settings"]
        version["value"] = "2"
        mark = backend.mark()
        again = run(backend, path)
        assert again.errors == [] and again.converged
        assert backend.mutations_since(mark) == {}  # OnDelete: a changed attachment is left
    copy = backend.admin.get(configmaps, "g-copy", namespace=namespace)
    assert copy["data"] == {"version": "1"}


BAD_LABELS: list[Any] = [
    pytest.param({"labels": {"bad key!": "x"}}, "labels['bad key!']", id="label-key"),
    pytest.param({"labels": {"ok": "no spaces allowed"}}, "not a label value", id="label-value"),
    pytest.param({"labels": {"ok": "x" * 64}}, "not a label value", id="label-value-64"),
    pytest.param({"labels": {"-bad.example.com/k": "v"}}, "prefix", id="label-prefix"),
    pytest.param({"annotations": {"a/b/c": "v"}}, "annotations['a/b/c']", id="annotation-key"),
    pytest.param({"annotations": {"k": 5}}, "map of strings", id="annotation-value-type"),
]


@pytest.mark.parametrize(("answer", "named"), BAD_LABELS)
@pytest.mark.parametrize("dry_run", [True, False], ids=["dry-run", "run"])
def test_labels_the_api_server_would_refuse_fail_the_dry_run_too(
    backend: Backend,
    namespace: str,
    gadgets: ResourceInfo,
    tmp_path: Path,
    answer: dict[str, Any],
    named: str,
    dry_run: bool,
) -> None:
    """A decorator's labels / annotations are checked as the API server checks them, so a dry
    run reports the error the real run would meet, and neither writes anything to the target."""
    backend.admin.create(gadgets, gadget(gadgets, "t", namespace, labels={"decorate": "yes"}))
    before = backend.admin.get(gadgets, "t", namespace=namespace)
    with serve(lambda request: answer) as server:
        path = write_controllers(
            tmp_path, decorator("labeler", gadgets, {"sync": webhook(server.url)})
        )
        result = run(backend, path, dry_run=dry_run)
    assert len(result.errors) == 1, result.errors
    assert named in str(result.errors[0]) and "Gadget" in str(result.errors[0])
    after = backend.admin.get(gadgets, "t", namespace=namespace)
    assert metadata(after) == metadata(before)
