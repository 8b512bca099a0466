"""`apiextensions.k8s.io/v1beta1` CRDs on 1.20, the way Metacontroller v0.x and its tutorials
wrote them, on the real API server and on the memory backend behaving as 1.20: what v1beta1
defaults (`preserveUnknownFields: true`, `scope`, `version` and `versions` from each other),
how the CRD reads back as v1 and as v1beta1 (per-version fields held once where every version
shares them, `JSONPath` as `jsonPath`), the NonStructuralSchema condition, what v1beta1
refuses, and a custom resource of such a CRD keeping its unknown fields."""

from __future__ import annotations

import copy
import json
import uuid
from typing import Any

import pytest

from reconcile.cluster import Invalid
from reconcile.cluster.types import Obj, ResourceInfo
from tests.support.backends import Backend
from tests.support.controlplane import OLDEST_RELEASE
from tests.support.poll import eventually

pytestmark = pytest.mark.releases(
    OLDEST_RELEASE, why="apiextensions.k8s.io/v1beta1 is served until 1.22"
)

V1BETA1 = "apiextensions.k8s.io/v1beta1"
V1 = "apiextensions.k8s.io/v1"
G = "GROUP"
NAMES_ACCEPTED = {
    "message": "no conflicts found",
    "reason": "NoConflicts",
    "status": "True",
    "type": "NamesAccepted",
}
ESTABLISHED = {
    "message": "the initial names have been accepted",
    "reason": "InitialNamesAccepted",
    "status": "True",
    "type": "Established",
}


def non_structural(message: str) -> dict[str, str]:
    return {
        "message": message,
        "reason": "Violations",
        "status": "True",
        "type": "NonStructuralSchema",
    }


PRESERVING = "spec.preserveUnknownFields: Invalid value: true: must be false"

# A Metacontroller v0.x tutorial's CRD: one `version`, the status subresource, no schema.
CATSET = {
    "apiVersion": V1BETA1,
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"catsets.{G}"},
    "spec": {
        "group": G,
        "version": "v1alpha1",
        "names": {
            "plural": "catsets",
            "singular": "catset",
            "kind": "CatSet",
            "shortNames": ["cs"],
        },
        "scope": "Namespaced",
        "subresources": {"status": {}},
    },
}
CATSET_NAMES = {
    "kind": "CatSet",
    "listKind": "CatSetList",
    "plural": "catsets",
    "shortNames": ["cs"],
    "singular": "catset",
}
CATSET_STATUS = {
    "acceptedNames": CATSET_NAMES,
    "conditions": [ESTABLISHED, NAMES_ACCEPTED, non_structural(PRESERVING)],
    "storedVersions": ["v1alpha1"],
}
CATSET_AS_V1BETA1 = {
    "conversion": {"strategy": "None"},
    "group": G,
    "names": CATSET_NAMES,
    "preserveUnknownFields": True,
    "scope": "Namespaced",
    "subresources": {"status": {}},
    "version": "v1alpha1",
    "versions": [{"name": "v1alpha1", "served": True, "storage": True}],
}
CATSET_AS_V1 = {
    "conversion": {"strategy": "None"},
    "group": G,
    "names": CATSET_NAMES,
    "preserveUnknownFields": True,
    "scope": "Namespaced",
    "versions": [
        {"name": "v1alpha1", "served": True, "storage": True, "subresources": {"status": {}}}
    ],
}

# A schema without types, printer columns, the scale subresource.
OLD_SCHEMA = {"properties": {"spec": {"properties": {"size": {"type": "integer"}}}}}
COLUMNS_V1BETA1 = [{"JSONPath": ".spec.size", "name": "Size", "type": "integer"}]
SUBRESOURCES = {
    "scale": {"specReplicasPath": ".spec.size", "statusReplicasPath": ".status.size"},
    "status": {},
}
OLD = {
    "apiVersion": V1BETA1,
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"olds.{G}"},
    "spec": {
        "group": G,
        "names": {"plural": "olds", "kind": "Old"},
        "versions": [{"name": "v1", "served": True, "storage": True}],
        "validation": {"openAPIV3Schema": OLD_SCHEMA},
        "additionalPrinterColumns": COLUMNS_V1BETA1,
        "subresources": SUBRESOURCES,
    },
}
OLD_NAMES = {"kind": "Old", "listKind": "OldList", "plural": "olds", "singular": "old"}
OLD_VIOLATIONS = (
    f"[{PRESERVING}, spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required "
    "value: must not be empty for specified object fields, spec.versions[0].schema."
    "openAPIV3Schema.type: Required value: must not be empty at the root]"
)
OLD_STATUS = {
    "acceptedNames": OLD_NAMES,
    "conditions": [ESTABLISHED, NAMES_ACCEPTED, non_structural(OLD_VIOLATIONS)],
    "storedVersions": ["v1"],
}
OLD_AS_V1BETA1 = {
    "additionalPrinterColumns": COLUMNS_V1BETA1,
    "conversion": {"strategy": "None"},
    "group": G,
    "names": OLD_NAMES,
    "preserveUnknownFields": True,
    "scope": "Namespaced",
    "subresources": SUBRESOURCES,
    "validation": {"openAPIV3Schema": OLD_SCHEMA},
    "version": "v1",
    "versions": [{"name": "v1", "served": True, "storage": True}],
}
OLD_AS_V1 = {
    "conversion": {"strategy": "None"},
    "group": G,
    "names": OLD_NAMES,
    "preserveUnknownFields": True,
    "scope": "Namespaced",
    "versions": [
        {
            "additionalPrinterColumns": [
                {"jsonPath": ".spec.size", "name": "Size", "type": "integer"}
            ],
            "name": "v1",
            "schema": {"openAPIV3Schema": OLD_SCHEMA},
            "served": True,
            "storage": True,
            "subresources": SUBRESOURCES,
        }
    ],
}

# Two versions with schemas of their own, `preserveUnknownFields: false`, cluster-scoped.
OPEN = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
SPEC_ONLY = {"type": "object", "properties": {"spec": OPEN}}
THING_VERSIONS = [
    {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": OPEN}},
    {"name": "v2", "served": True, "storage": False, "schema": {"openAPIV3Schema": SPEC_ONLY}},
]
THING = {
    "apiVersion": V1BETA1,
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"things.{G}"},
    "spec": {
        "group": G,
        "names": {"plural": "things", "kind": "Thing"},
        "scope": "Cluster",
        "preserveUnknownFields": False,
        "versions": THING_VERSIONS,
    },
}
THING_NAMES = {"kind": "Thing", "listKind": "ThingList", "plural": "things", "singular": "thing"}
THING_STATUS = {
    "acceptedNames": THING_NAMES,
    "conditions": [ESTABLISHED, NAMES_ACCEPTED],
    "storedVersions": ["v1"],
}
THING_AS_V1 = {
    "conversion": {"strategy": "None"},
    "group": G,
    "names": THING_NAMES,
    "scope": "Cluster",
    "versions": THING_VERSIONS,
}
THING_AS_V1BETA1 = {**THING_AS_V1, "preserveUnknownFields": False, "version": "v1"}

CASES = [
    pytest.param(CATSET, CATSET_AS_V1BETA1, CATSET_AS_V1, CATSET_STATUS, id="tutorial-catset"),
    pytest.param(OLD, OLD_AS_V1BETA1, OLD_AS_V1, OLD_STATUS, id="untyped-schema-columns-scale"),
    pytest.param(THING, THING_AS_V1BETA1, THING_AS_V1, THING_STATUS, id="schemas-per-version"),
]


def in_group(obj: Any, group: str) -> Any:
    return json.loads(json.dumps(obj).replace(G, group))


def comparable(crd: Obj) -> tuple[Obj, Obj]:
    """(spec, status) with the times and the conditions' order (the server's controllers race)
    left out."""
    status = copy.deepcopy(crd.get("status") or {})
    conditions = [
        {k: v for k, v in c.items() if k != "lastTransitionTime"}
        for c in status.get("conditions") or []
    ]
    status["conditions"] = sorted(conditions, key=lambda c: c["type"])
    return crd["spec"], status


def established(backend: Backend, name: str) -> Obj:
    crds = backend.cluster.discover(V1, "customresourcedefinitions")

    def ready() -> Obj | None:
        crd = backend.cluster.get(crds, name)
        conditions = (crd.get("status") or {}).get("conditions") or []
        ready = any(c["type"] == "Established" and c["status"] == "True" for c in conditions)
        return crd if ready else None

    return eventually(ready, what=f"{name} to be established")


@pytest.mark.parametrize(("written", "as_v1beta1", "as_v1", "status"), CASES)
def test_a_v1beta1_crd_reads_back_as_the_server_keeps_it(
    backend: Backend, written: Obj, as_v1beta1: Obj, as_v1: Obj, status: Obj
) -> None:
    group = f"t{uuid.uuid4().hex[:8]}.example.com"
    crd = in_group(written, group)
    v1beta1 = backend.cluster.discover(V1BETA1, "customresourcedefinitions")
    backend.cluster.create(v1beta1, crd)
    name = crd["metadata"]["name"]
    established(backend, name)
    expected = in_group(status, group)  # the server's controllers set it bit by bit
    eventually(
        lambda: comparable(backend.cluster.get(v1beta1, name))[1] == expected,
        what=f"{name}'s status",
    )
    read_v1 = backend.cluster.get(backend.cluster.discover(V1, "crds"), name)
    read_v1beta1 = backend.cluster.get(v1beta1, name)
    assert read_v1["apiVersion"] == V1 and read_v1beta1["apiVersion"] == V1BETA1
    assert comparable(read_v1) == (in_group(as_v1, group), in_group(status, group))
    assert comparable(read_v1beta1) == (in_group(as_v1beta1, group), in_group(status, group))


def test_a_v1beta1_schema_may_not_set_defaults(backend: Backend) -> None:
    group = f"t{uuid.uuid4().hex[:8]}.example.com"
    crd = in_group(copy.deepcopy(OLD), group)
    crd["spec"]["validation"]["openAPIV3Schema"] = {
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {"size": {"type": "integer", "default": 1}}}
        },
    }
    with pytest.raises(Invalid) as refused:
        backend.cluster.create(backend.cluster.discover(V1BETA1, "crds"), crd)
    assert (
        "spec.validation.openAPIV3Schema.properties[spec].properties[size].default: Forbidden: "
        "must not be set (cannot set default values in apiextensions.k8s.io/v1beta1 CRDs, must "
        "use apiextensions.k8s.io/v1)"
    ) in refused.value.message


def catsets(backend: Backend) -> ResourceInfo:
    group = f"t{uuid.uuid4().hex[:8]}.example.com"
    crd = in_group(copy.deepcopy(CATSET), group)
    backend.admin.create(backend.admin.discover(V1BETA1, "crds"), crd)
    established(backend, crd["metadata"]["name"])
    return eventually(
        lambda: backend.cluster.discover(f"{group}/v1alpha1", "catsets"), what="catsets served"
    )


def test_its_objects_keep_every_field_and_any_status(backend: Backend, namespace: str) -> None:
    """`preserveUnknownFields: true`: nothing is pruned, in the spec or in the status (a
    Metacontroller parent's `observedGeneration` is kept)."""
    resource = catsets(backend)
    cat = {
        "apiVersion": resource.api_version,
        "kind": "CatSet",
        "metadata": {"name": "cat", "namespace": namespace},
        "spec": {"replicas": 2, "template": {"anything": ["goes", 1]}},
        "status": {"ignored": "on create"},
    }
    created = backend.cluster.create(resource, cat)
    assert created["spec"] == cat["spec"] and "status" not in created
    status = {"observedGeneration": 1, "replicas": 0, "conditions": [{"any": "shape"}]}
    written = backend.cluster.update_status(resource, dict(created, status=status))
    assert written["status"] == status
    assert written["metadata"]["generation"] == 1
