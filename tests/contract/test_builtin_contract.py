"""The `Cluster` contract for built-in kinds, on the real API server and on the memory backend
(behaving as the same release), on each release tested: the defaults stored, the objects a
real server refuses and the fields it keeps immutable. A refusal's phrases are the same on every
release unless a case gives them by release (`{"1.20": [...], "1.37": [...]}`)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from reconcile.cluster import ApiError, BadRequest, Invalid
from reconcile.cluster.types import Obj
from tests.contract.builtin_zoo import ZOO, stored_by
from tests.support.backends import Backend
from tests.support.controlplane import CURRENT_RELEASE, OLDEST_RELEASE

pytestmark = pytest.mark.releases(
    CURRENT_RELEASE,
    OLDEST_RELEASE,
    why="defaults, refusals and their words differ between releases; --local models each",
)

SERVER_SET = ("managedFields", "uid", "resourceVersion", "creationTimestamp", "selfLink")


def comparable(obj: Obj) -> Obj:
    """The stored object with the values only a server picks (uids, addresses, ports, times)
    abstracted, as `builtin_zoo` records them."""
    obj = copy.deepcopy(obj)
    meta = obj["metadata"]
    for key in (*SERVER_SET, "namespace", "generation"):
        meta.pop(key, None)
    uid = (meta.get("labels") or {}).get("controller-uid")
    if uid:
        obj = json.loads(json.dumps(obj).replace(uid, "<uid>"))
    spec = obj.get("spec") or {}
    if spec.get("clusterIP") not in (None, "None"):
        spec["clusterIP"], spec["clusterIPs"] = "<ip>", ["<ip>"]
    if obj["kind"] == "Service":
        for port in spec.get("ports") or []:
            if "nodePort" in port:
                port["nodePort"] = "<port>"
    return obj


def create(backend: Backend, namespace: str, obj: Obj) -> Obj:
    obj = copy.deepcopy(obj)
    obj["metadata"]["namespace"] = namespace
    resource = backend.cluster.discover(obj["apiVersion"], obj["kind"])
    return backend.cluster.create(resource, obj)


def update(backend: Backend, obj: Obj, change: Any) -> Obj:
    resource = backend.cluster.discover(obj["apiVersion"], obj["kind"])
    changed = copy.deepcopy(obj)
    change(changed)
    return backend.cluster.update(resource, changed)


@pytest.mark.parametrize(
    ("index", "written"),
    list(enumerate(w for w, _ in ZOO)),
    ids=[f"{w['kind']}-{w['metadata']['name']}" for w, _ in ZOO],
)
def test_built_in_objects_are_stored_with_the_servers_defaults(
    backend: Backend, namespace: str, kube_release: str, index: int, written: Obj
) -> None:
    stored = stored_by(kube_release)[index]
    assert comparable(create(backend, namespace, written)) == stored


def phrases_of(phrases: list[str] | dict[str, list[str]], release: str) -> list[str]:
    return phrases[release] if isinstance(phrases, dict) else phrases


def pod(**spec: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec},
    }


def deployment(selector: Any = None, labels: Any = None, **spec: Any) -> Obj:
    labels = {"app": "web"} if labels is None else labels
    body: Obj = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
            **spec,
        },
    }
    if selector is not None:
        body["spec"]["selector"] = selector
    return body


def job(restart: str = "Never") -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j"},
        "spec": {
            "template": {
                "spec": {"restartPolicy": restart, "containers": [{"name": "c", "image": "x"}]}
            }
        },
    }


def service(*ports: Obj, **spec: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s"},
        "spec": {"ports": list(ports), **spec},
    }


REFUSED = [
    pytest.param(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}},
        Invalid,
        ["spec.containers: Required value"],
        id="pod-without-containers",
    ),
    pytest.param(
        pod(containers=[{"name": "c"}]),
        Invalid,
        ["spec.containers[0].image: Required value"],
        id="container-without-image",
    ),
    pytest.param(
        deployment(),
        Invalid,
        ["spec.selector: Required value", "`selector` does not match template `labels`"],
        id="deployment-no-selector",
    ),
    pytest.param(
        deployment({"matchLabels": {"app": "other"}}),
        Invalid,
        {
            "1.20": [
                'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: '
                "`selector` does not match template `labels`"
            ],
            "1.37": [
                'spec.template.metadata.labels: Invalid value: {"app":"web"}: '
                "`selector` does not match template `labels`"
            ],
        },
        id="deployment-selector-mismatch",
    ),
    pytest.param(
        job("Always"),
        Invalid,
        ["spec.template.spec.restartPolicy"],
        id="job-restart-always",
    ),
    pytest.param(
        service({"port": 80}, {"port": 443}),
        Invalid,
        ["spec.ports[0].name: Required value"],
        id="service-unnamed-ports",
    ),
    pytest.param(
        deployment({"matchLabels": {"app": "web"}}, replicas="3"),
        BadRequest,
        ["cannot be handled as a Deployment"],
        id="replicas-as-a-string",
    ),
    pytest.param(
        pod(containers=[{"name": "c", "image": "x", "resources": {"limits": {"cpu": "lots"}}}]),
        BadRequest,
        ["quantities must match the regular expression"],
        id="bad-quantity",
    ),
    pytest.param(
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "l"},
            "spec": {"holderIdentity": "x", "leaseDurationSeconds": 3_000_000_000},
        },
        BadRequest,
        ["cannot be handled as a Lease", "3000000000"],
        id="int32-overflow",
    ),
    pytest.param(
        deployment({"matchLabels": {"app": "web"}}, replicas=2**31),
        BadRequest,
        ["cannot be handled as a Deployment", "2147483648"],
        id="replicas-overflow",
    ),
    pytest.param(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "big", "annotations": {"a": "x" * (256 * 1024)}},
        },
        Invalid,
        {
            "1.20": ["metadata.annotations: Too long: must have at most 262144 bytes"],
            "1.37": ["metadata.annotations: Too long: may not be more than 262144 bytes"],
        },
        id="annotations-over-256KiB",
    ),
    pytest.param(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": "big",
                "annotations": {f"k{i}": "x" * (32 * 1024) for i in range(8)},
            },
        },
        Invalid,
        ["metadata.annotations: Too long"],
        id="annotations-over-256KiB-together",
    ),
]


@pytest.mark.parametrize(("obj", "error", "phrases"), REFUSED)
def test_invalid_built_in_objects_are_refused(
    backend: Backend,
    namespace: str,
    kube_release: str,
    obj: Obj,
    error: type[ApiError],
    phrases: list[str] | dict[str, list[str]],
) -> None:
    with pytest.raises(error) as refused:
        create(backend, namespace, obj)
    for phrase in phrases_of(phrases, kube_release):
        assert phrase in refused.value.message


def test_unknown_fields_are_dropped(backend: Backend, namespace: str) -> None:
    body = pod()
    body["spec"]["containers"][0]["imagePullPolicyy"] = "Never"
    body["spec"]["bogus"] = {"a": 1}
    created = create(backend, namespace, body)
    assert "bogus" not in created["spec"]
    assert "imagePullPolicyy" not in created["spec"]["containers"][0]


def set_path(path: str, value: Any) -> Any:
    def change(obj: Obj) -> None:
        *parents, last = path.split(".")
        here: Any = obj
        for key in parents:
            here = here[int(key)] if isinstance(here, list) else here.setdefault(key, {})
        if isinstance(here, list):
            here[int(last)] = value
        else:
            here[last] = value

    return change


def claim() -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "c"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }


IMMUTABLE = [
    pytest.param(
        pod(),
        "spec.containers.0.command",
        ["sh"],
        {
            "1.20": [
                "pod updates may not change fields other than `spec.containers[*].image`, "
                "`spec.initContainers[*].image`, `spec.activeDeadlineSeconds` or "
                "`spec.tolerations` (only additions to existing tolerations)"
            ],
            "1.37": [
                "pod updates may not change fields other than `spec.containers[*].image`,"
                "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` "
                "(only additions to existing tolerations),`spec.terminationGracePeriodSeconds` "
                "(allow it to be set to 1 if it was previously negative)"
            ],
        },
        id="pod",
    ),
    pytest.param(
        deployment({"matchLabels": {"app": "web"}}, labels={"app": "web", "tier": "x"}),
        "spec.selector",
        {"matchLabels": {"app": "web", "tier": "x"}},
        {
            "1.20": ["spec.selector", "field is immutable"],
            "1.37": [
                'spec.selector: Invalid value: {"matchLabels":{"app":"web","tier":"x"}}: '
                "field is immutable"
            ],
        },
        id="deployment-selector",
    ),
    pytest.param(
        job(),
        "spec.template.spec.containers.0.image",
        "y",
        ["spec.template", "field is immutable"],
        id="job-template",
    ),
    pytest.param(
        service({"port": 80}),
        "spec.clusterIP",
        "10.0.0.250",
        {
            "1.20": [
                'spec.clusterIPs[0]: Invalid value: []string{"10.0.0.250"}: may not change once set'
            ],
            "1.37": ['spec.clusterIPs[0]: Invalid value: ["10.0.0.250"]: may not change once set'],
        },
        id="service-cluster-ip",
    ),
    pytest.param(
        claim(),
        "spec.accessModes",
        ["ReadWriteMany"],
        ["spec is immutable after creation"],
        id="claim-spec",
    ),
    pytest.param(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "m"},
            "immutable": True,
            "data": {"a": "1"},
        },
        "data.a",
        "2",
        ["field is immutable when `immutable` is set"],
        id="immutable-configmap",
    ),
]


@pytest.mark.parametrize(("obj", "path", "value", "phrases"), IMMUTABLE)
def test_immutable_fields_are_refused(
    backend: Backend,
    namespace: str,
    kube_release: str,
    obj: Obj,
    path: str,
    value: Any,
    phrases: list[str] | dict[str, list[str]],
) -> None:
    created = create(backend, namespace, obj)
    with pytest.raises(Invalid) as refused:
        update(backend, created, set_path(path, value))
    for phrase in phrases_of(phrases, kube_release):
        assert phrase in refused.value.message


def test_mutable_fields_of_immutable_objects_change(backend: Backend, namespace: str) -> None:
    created = create(backend, namespace, pod())
    updated = update(backend, created, set_path("spec.containers.0.image", "busybox:1.36"))
    assert updated["spec"]["containers"][0]["image"] == "busybox:1.36"
    grown = update(
        backend,
        create(backend, namespace, claim()),
        set_path("spec.accessModes", ["ReadWriteOnce"]),
    )
    assert grown["spec"]["resources"]["requests"]["storage"] == "1Gi"
