"""What `--local` serves, held to the real control plane of each release tested: every group
version the real API server lists and the resources in it (kind, scope, verbs, short names,
status subresource, `storageVersionHash`), and each group's preferred version. The resources no
object is stored as (reviews, bindings, component statuses) are left out: `--local` does not
serve them. For the releases in between, the removals of the Kubernetes deprecation guide are
held in `tests/unit/test_memory_versions.py`."""

from __future__ import annotations

import json
import ssl
import urllib.request
from typing import Any

import pytest

from reconcile.cluster.memory import MemoryCluster
from tests.support.controlplane import ADMIN_USER, CURRENT_RELEASE, OLDEST_RELEASE, ControlPlane

pytestmark = [
    pytest.mark.releases(
        CURRENT_RELEASE,
        OLDEST_RELEASE,
        why="each release serves its own group versions: 1.20 the v1beta1 ones later removed",
    ),
    pytest.mark.controlplane,
]

Resources = dict[str, dict[str, tuple[Any, ...]]]


def _get(plane: ControlPlane, path: str) -> dict[str, Any]:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    request = urllib.request.Request(
        plane.server + path, headers={"Authorization": f"Bearer {plane.tokens[ADMIN_USER]}"}
    )
    with urllib.request.urlopen(request, context=context, timeout=30) as response:
        found: dict[str, Any] = json.loads(response.read())
        return found


def _custom_groups(plane: ControlPlane) -> set[str]:
    """The groups the suite's own CRDs add to the shared server."""
    crds = _get(plane, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
    groups = {item["spec"]["group"] for item in crds["items"]}
    for service in _get(plane, "/apis/apiregistration.k8s.io/v1/apiservices")["items"]:
        if service["spec"].get("service"):  # an aggregated API
            groups.add(service["spec"].get("group", ""))
    return groups


def served_by_the_server(plane: ControlPlane) -> tuple[Resources, dict[str, str]]:
    custom = _custom_groups(plane)
    documents = {"v1": _get(plane, "/api/v1")}
    preferred = {"": "v1"}
    for group in _get(plane, "/apis")["groups"]:
        if group["name"] in custom:
            continue
        preferred[group["name"]] = group["preferredVersion"]["groupVersion"]
        for version in group["versions"]:
            documents[version["groupVersion"]] = _get(plane, f"/apis/{version['groupVersion']}")
    resources: Resources = {}
    for group_version, document in documents.items():
        names = {entry["name"] for entry in document["resources"]}
        for entry in document["resources"]:
            if "/" in entry["name"] or not {"create", "list"} <= set(entry["verbs"]):
                continue  # a subresource, or nothing is stored as it
            resources.setdefault(group_version, {})[entry["name"]] = (
                entry["kind"],
                entry["namespaced"],
                tuple(sorted(entry["verbs"])),
                tuple(entry.get("shortNames") or ()),
                f"{entry['name']}/status" in names,
                entry.get("storageVersionHash", ""),
            )
    return resources, preferred


def served_by_local(release: str) -> tuple[Resources, dict[str, str]]:
    cluster = MemoryCluster(kubernetes_version=release)
    resources: Resources = {}
    for group_version, infos in cluster.api_resources().items():
        for info in infos:
            resources.setdefault(group_version, {})[info.resource] = (
                info.kind,
                info.namespaced,
                tuple(sorted(info.verbs)),
                tuple(info.short_names),
                info.has_status,
                info.storage_hash,
            )
    groups = {group_version.rpartition("/")[0] for group_version in resources}
    return resources, {group: cluster.preferred_version(group) for group in groups}


def test_local_serves_the_group_versions_and_resources_of_its_release(
    control_plane: ControlPlane, kube_release: str
) -> None:
    real, real_preferred = served_by_the_server(control_plane)
    local, local_preferred = served_by_local(kube_release)
    assert sorted(local) == sorted(real)
    for group_version in real:
        assert local[group_version] == real[group_version], group_version
    stored_groups = {group_version.rpartition("/")[0] for group_version in real}
    assert local_preferred == {g: v for g, v in real_preferred.items() if g in stored_groups}
