"""`--prune` that cannot wipe, through the real command on both backends (`--local` state
directories for the in-process cluster, the real API server otherwise): an input that reads as
no objects prunes nothing; a prune that would delete most of the set needs confirming; a
Namespace or CRD holding objects outside the set is held back and what it holds is named; a
parent that is another tool's, or not a parent at all, is refused before anything is written."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconcile.engine.applyset import PART_OF, SET_ID, TOOLING, ApplySetRef
from tests.support.backends import crd_manifest
from tests.support.manifest_target import Key, Target, make_target


@pytest.fixture(params=["memory", pytest.param("live", marks=pytest.mark.controlplane)])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Target]:
    yield from make_target(request, tmp_path)


def configmap(name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": {"key": name},
    }


def write(directory: Path, *objects: dict[str, Any]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "all.yaml").write_text(yaml.safe_dump_all(objects))
    return directory


def errors_of(done: subprocess.CompletedProcess[str]) -> str:
    return done.stdout + done.stderr


def deletes_of(done: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    report = json.loads(done.stdout)
    return [
        action
        for p in report["passes"]
        for c in p["controllers"]
        for parent in c["parents"]
        for action in parent["actions"]
        if action["action"] == "delete"
    ]


def four_members(target: Target) -> tuple[Path, set[Key]]:
    names = [f"m{i}-{target.suffix}" for i in range(4)]
    apps = write(target.directory / "apps", *(configmap(n, target.namespace) for n in names))
    first = target.run(apps, "--prune")
    assert first.returncode == 0, errors_of(first)[-3000:]
    members = {("ConfigMap", target.namespace, n) for n in names}
    assert members <= target.objects()
    return apps, members


# -- inputs that read as no objects --------------------------------------------------------------

EMPTY_INPUTS: dict[str, dict[str, str]] = {
    "empty-directory": {},
    "only-other-files": {"README.md": "# apps\n", "kustomization.txt": "x"},
    "only-comments": {"all.yaml": "# nothing yet\n---\n---\n"},
    "empty-list": {"list.yaml": "apiVersion: v1\nkind: List\nitems: []\n"},
    "null-list": {"list.yaml": "apiVersion: v1\nkind: List\nitems:\n"},
    "hidden-files-only": {".all.yaml": yaml.safe_dump({"apiVersion": "v1", "kind": "List"})},
}

NOT_OBJECTS: dict[str, str] = {
    "scalar": "just some words\n",
    "number": "42\n",
    "top-level-list": "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n",
    "list-items-not-a-list": "apiVersion: v1\nkind: List\nitems: nope\n",
    "list-item-scalar": "apiVersion: v1\nkind: List\nitems: [oops]\n",
    "second-document-scalar": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\nx\n",
}


@pytest.mark.parametrize("files", EMPTY_INPUTS.values(), ids=EMPTY_INPUTS.keys())
def test_manifests_that_read_as_no_objects_prune_nothing(
    target: Target, files: dict[str, str]
) -> None:
    _, members = four_members(target)
    empty = target.directory / "empty"
    empty.mkdir()
    for name, text in files.items():
        (empty / name).write_text(text)
    # no flag lets an empty input through; that is one rule, so it is tried on one input (the
    # reading of each input is what differs between them)
    flags: list[tuple[str, ...]] = [()]
    if not files:
        flags += [("--prune-allow-shrink",), ("--prune-allow-shrink", "--prune-cascade")]
    for extra in flags:
        done = target.run(empty, "--prune", *extra)
        assert done.returncode == 1, errors_of(done)[-3000:]
        assert "hold no objects" in errors_of(done)
        assert members <= target.objects()


@pytest.mark.parametrize("text", NOT_OBJECTS.values(), ids=NOT_OBJECTS.keys())
def test_a_document_that_is_not_an_object_is_an_error_naming_it(target: Target, text: str) -> None:
    _, members = four_members(target)
    broken = target.directory / "broken"
    broken.mkdir()
    (broken / "bad.yaml").write_text(text)
    done = target.run(broken, "--prune", "--prune-allow-shrink")
    assert done.returncode == 1, errors_of(done)[-3000:]
    assert "bad.yaml (document" in errors_of(done)
    assert "not " in errors_of(done)
    assert members <= target.objects()


# -- a prune that would empty most of the set ----------------------------------------------------


def test_a_prune_deleting_most_of_the_set_needs_confirming(target: Target) -> None:
    apps, members = four_members(target)
    kept = sorted(members)[0]
    changed = configmap(kept[2], target.namespace)
    changed["data"] = {"key": "changed"}
    write(apps, changed)  # three of four members left the manifests, one changed
    refused = target.run(apps, "--prune")
    assert refused.returncode == 1, errors_of(refused)[-3000:]
    assert "would delete 3 of the set's 4 members" in errors_of(refused)
    assert "--prune-allow-shrink" in errors_of(refused)
    assert members <= target.objects()  # nothing pruned, and nothing applied either
    preview = target.run(apps, "--prune", "--dry-run")
    assert preview.returncode == 1, errors_of(preview)[-3000:]
    assert "would delete 3" in errors_of(preview)

    confirmed = target.run(apps, "--prune", "--prune-allow-shrink")
    assert confirmed.returncode == 0, errors_of(confirmed)[-3000:]
    left = {k for k in target.objects() if k[0] == "ConfigMap" and k[2].startswith("m")}
    assert left == {kept}


def test_deleting_half_of_the_set_or_one_object_is_not_a_shrink(target: Target) -> None:
    apps, members = four_members(target)
    names = sorted(k[2] for k in members)
    write(apps, *(configmap(n, target.namespace) for n in names[:2]))
    done = target.run(apps, "--prune")
    assert done.returncode == 0, errors_of(done)[-3000:]
    assert len(deletes_of(done)) == 2
    write(apps, configmap(names[0], target.namespace))
    done = target.run(apps, "--prune")  # one of two: more than half, but one object
    assert done.returncode == 0, errors_of(done)[-3000:]
    assert len(deletes_of(done)) == 1


# -- Namespaces and CRDs that hold objects outside the set ---------------------------------------


def test_a_namespace_holding_other_objects_is_held_back_and_what_it_holds_named(
    target: Target,
) -> None:
    extra = f"{target.namespace}-extra"
    others = [configmap(f"keep{i}-{target.suffix}", target.namespace) for i in range(4)]
    apps = write(
        target.directory / "apps",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": extra}},
        configmap(f"member-{target.suffix}", extra),
        *others,
    )
    first = target.run(apps, "--prune")
    assert first.returncode == 0, errors_of(first)[-3000:]
    # someone else's objects in the member namespace: a ConfigMap, and a Secret
    theirs = configmap(f"theirs-{target.suffix}", extra)
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": f"token-{target.suffix}", "namespace": extra},
        "stringData": {"password": "hunter2-hunter2"},
    }
    target.seed(theirs, secret)
    write(apps, *others)  # the namespace and its member left the manifests
    for extra_args in ((), ("--dry-run",)):
        held = target.run(apps, "--prune", *extra_args)
        assert held.returncode == 1, errors_of(held)[-3000:]
        text = errors_of(held)
        assert f"Namespace {extra} left the manifests but holds 2 objects outside the set" in text
        assert f"ConfigMap {extra}/theirs-{target.suffix}" in text
        assert f"Secret {extra}/token-{target.suffix}" in text
        assert "--prune-cascade" in text
        assert "hunter2" not in text
    objects = target.objects()
    assert ("Namespace", "", extra) in objects
    assert ("ConfigMap", extra, f"theirs-{target.suffix}") in objects
    assert ("ConfigMap", extra, f"member-{target.suffix}") not in objects  # members are pruned

    cascade = target.run(apps, "--prune", "--prune-cascade")
    assert cascade.returncode == 0, errors_of(cascade)[-3000:]
    reasons = [d["reason"] for d in deletes_of(cascade) if d["object"]["kind"] == "Namespace"]
    assert len(reasons) == 1 and f"ConfigMap {extra}/theirs-{target.suffix}" in reasons[0]
    assert ("Namespace", "", extra) not in target.objects()


def test_a_namespace_holding_only_what_the_cluster_made_is_pruned(target: Target) -> None:
    extra = f"{target.namespace}-extra"
    others = [configmap(f"keep{i}-{target.suffix}", target.namespace) for i in range(4)]
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": extra}}
    apps = write(target.directory / "apps", namespace, *others)
    assert target.run(apps, "--prune").returncode == 0
    # what the cluster makes in every namespace (made here where no controller makes them)
    target.seed(
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": "default", "namespace": extra},
        },
        {**configmap("kube-root-ca.crt", extra), "data": {"ca.crt": "-----BEGIN CERTIFICATE-----"}},
    )
    write(apps, *others)
    done = target.run(apps, "--prune")
    assert done.returncode == 0, errors_of(done)[-3000:]
    assert [d["object"]["name"] for d in deletes_of(done)] == [extra]


def test_a_crd_whose_kind_has_objects_outside_the_set_is_held_back(target: Target) -> None:
    crd = crd_manifest(target.group, "Widget", "widgets")
    others = [configmap(f"keep{i}-{target.suffix}", target.namespace) for i in range(4)]
    apps = write(target.directory / "apps", crd, *others)
    assert target.run(apps, "--prune").returncode == 0
    widget = {
        "apiVersion": f"{target.group}/v1",
        "kind": "Widget",
        "metadata": {"name": f"w-{target.suffix}", "namespace": target.namespace},
        "spec": {},
    }
    target.seed(widget)
    write(apps, *others)
    held = target.run(apps, "--prune")
    assert held.returncode == 1, errors_of(held)[-3000:]
    text = errors_of(held)
    assert f"CustomResourceDefinition widgets.{target.group} left the manifests" in text
    assert f"Widget {target.namespace}/w-{target.suffix}" in text
    assert ("CustomResourceDefinition", "", f"widgets.{target.group}") in target.objects()


# -- parents that are not ours -------------------------------------------------------------------


def parent_variants(target: Target) -> dict[str, dict[str, Any]]:
    namespace, name = target.applyset.split("/")
    ref = ApplySetRef(namespace, name)
    base: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"user": "data"}}
    meta = {"name": name, "namespace": namespace}
    return {
        "kubectl's set": {
            **base,
            "metadata": {
                **meta,
                "labels": {SET_ID: ref.id},
                "annotations": {TOOLING: "kubectl/v1.30.0"},
            },
        },
        "an ordinary ConfigMap": {**base, "metadata": meta},
        "another set's id": {
            **base,
            "metadata": {
                **meta,
                "labels": {SET_ID: "applyset-abc-v1"},
                "annotations": {TOOLING: "reconcile/v1"},
            },
        },
        "no tooling": {**base, "metadata": {**meta, "labels": {SET_ID: ref.id}}},
    }


@pytest.mark.parametrize(
    "variant", ["kubectl's set", "an ordinary ConfigMap", "another set's id", "no tooling"]
)
def test_a_parent_that_is_not_ours_is_refused_before_anything_is_written(
    target: Target, variant: str
) -> None:
    parent = parent_variants(target)[variant]
    # the other tool's member, labelled as its set's
    member = configmap(f"kubectl-made-{target.suffix}", target.namespace)
    member["metadata"]["labels"] = {PART_OF: parent["metadata"].get("labels", {}).get(SET_ID, "x")}
    target.seed(parent, member)
    before = target.objects()
    apps = write(target.directory / "apps", configmap(f"mine-{target.suffix}", target.namespace))
    for extra in (("--prune",), ("--prune", "--dry-run"), ()):
        done = target.run(apps, *extra)
        assert done.returncode == 1, errors_of(done)[-3000:]
        text = errors_of(done)
        assert f"ConfigMap {target.applyset}" in text
        assert "nothing was applied or pruned" in text
    assert target.objects() == before
