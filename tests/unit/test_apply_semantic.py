"""Children written the way people write them, against what a real kube-apiserver stored for
them (transcribed from a 1.20 control plane): applying the same desired state again must be no
change, or a CronJob would update them every run, forever."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from reconcile.engine.apply import apply, needs_update, prepare_desired
from reconcile.objects.quantity import parse_quantity, same_quantity

POD_WRITTEN: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web", "namespace": "zoo", "labels": {}},
    "spec": {
        "hostNetwork": False,
        "containers": [
            {
                "name": "web",
                "image": "nginx",
                "env": [],
                "ports": [{"containerPort": 80}],
                "resources": {
                    "requests": {"cpu": "0.5", "memory": "1024Mi"},
                    "limits": {"cpu": 1, "memory": "1.5Gi", "ephemeral-storage": "2G"},
                },
                "volumeMounts": [{"name": "data", "mountPath": "/data", "readOnly": False}],
            }
        ],
        "volumes": [{"name": "data", "emptyDir": {"sizeLimit": "1024Mi"}}],
    },
}
POD_STORED: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web", "namespace": "zoo", "uid": "u1", "resourceVersion": "7"},
    "spec": {
        "containers": [
            {
                "image": "nginx",
                "imagePullPolicy": "Always",
                "name": "web",
                "ports": [{"containerPort": 80, "protocol": "TCP"}],
                "resources": {
                    "limits": {"cpu": "1", "ephemeral-storage": "2G", "memory": "1536Mi"},
                    "requests": {"cpu": "500m", "ephemeral-storage": "2G", "memory": "1Gi"},
                },
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "volumeMounts": [{"mountPath": "/data", "name": "data"}],
            }
        ],
        "dnsPolicy": "ClusterFirst",
        "enableServiceLinks": True,
        "restartPolicy": "Always",
        "securityContext": {},
        "terminationGracePeriodSeconds": 30,
        "tolerations": [
            {
                "effect": "NoExecute",
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "tolerationSeconds": 300,
            }
        ],
        "volumes": [{"emptyDir": {"sizeLimit": "1Gi"}, "name": "data"}],
    },
    "status": {"phase": "Pending"},
}
STATEFULSET_WRITTEN: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "StatefulSet",
    "metadata": {"name": "db", "namespace": "zoo"},
    "spec": {
        "serviceName": "db",
        "selector": {"matchLabels": {"app": "db"}},
        "template": {
            "metadata": {"labels": {"app": "db"}},
            "spec": {"containers": [{"name": "db", "image": "postgres"}]},
        },
        "volumeClaimTemplates": [
            {
                "metadata": {"name": "data"},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "1024Mi"}},
                },
            }
        ],
    },
}
STATEFULSET_STORED: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "StatefulSet",
    "metadata": {"name": "db", "namespace": "zoo", "generation": 1},
    "spec": {
        "podManagementPolicy": "OrderedReady",
        "replicas": 1,
        "revisionHistoryLimit": 10,
        "selector": {"matchLabels": {"app": "db"}},
        "serviceName": "db",
        "template": {
            "metadata": {"creationTimestamp": None, "labels": {"app": "db"}},
            "spec": {
                "containers": [
                    {
                        "image": "postgres",
                        "imagePullPolicy": "Always",
                        "name": "db",
                        "resources": {},
                        "terminationMessagePath": "/dev/termination-log",
                        "terminationMessagePolicy": "File",
                    }
                ],
                "dnsPolicy": "ClusterFirst",
                "restartPolicy": "Always",
                "schedulerName": "default-scheduler",
                "securityContext": {},
                "terminationGracePeriodSeconds": 30,
            },
        },
        "updateStrategy": {"rollingUpdate": {"partition": 0}, "type": "RollingUpdate"},
        "volumeClaimTemplates": [
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"creationTimestamp": None, "name": "data"},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "1Gi"}},
                    "volumeMode": "Filesystem",
                },
                "status": {"phase": "Pending"},
            }
        ],
    },
}
DEPLOYMENT_WRITTEN: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "zoo"},
    "spec": {
        "selector": {"matchLabels": {"app": "web"}},
        "strategy": {},
        "template": {
            "metadata": {"labels": {"app": "web"}, "creationTimestamp": None},
            "spec": {
                "containers": [
                    {
                        "name": "web",
                        "image": "nginx",
                        "resources": {},
                        "ports": [{"containerPort": 80}],
                    }
                ]
            },
        },
    },
}
DEPLOYMENT_STORED: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "zoo"},
    "spec": {
        "progressDeadlineSeconds": 600,
        "replicas": 1,
        "revisionHistoryLimit": 10,
        "selector": {"matchLabels": {"app": "web"}},
        "strategy": {
            "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
            "type": "RollingUpdate",
        },
        "template": {
            "metadata": {"creationTimestamp": None, "labels": {"app": "web"}},
            "spec": {
                "containers": [
                    {
                        "image": "nginx",
                        "imagePullPolicy": "Always",
                        "name": "web",
                        "ports": [{"containerPort": 80, "protocol": "TCP"}],
                        "resources": {},
                        "terminationMessagePath": "/dev/termination-log",
                        "terminationMessagePolicy": "File",
                    }
                ],
                "dnsPolicy": "ClusterFirst",
                "restartPolicy": "Always",
            },
        },
    },
}
PVC_WRITTEN: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "PersistentVolumeClaim",
    "metadata": {"name": "claim", "namespace": "zoo"},
    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "0.5Gi"}}},
}
PVC_STORED: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "PersistentVolumeClaim",
    "metadata": {
        "name": "claim",
        "namespace": "zoo",
        "finalizers": ["kubernetes.io/pvc-protection"],
    },
    "spec": {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "512Mi"}},
        "volumeMode": "Filesystem",
    },
}
CONFIGMAP_WRITTEN: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "cfg", "namespace": "zoo", "annotations": {}},
    "data": {},
}
CONFIGMAP_STORED: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "cfg", "namespace": "zoo"},
}

ZOO = [
    pytest.param(POD_WRITTEN, POD_STORED, id="pod"),
    pytest.param(STATEFULSET_WRITTEN, STATEFULSET_STORED, id="statefulset"),
    pytest.param(DEPLOYMENT_WRITTEN, DEPLOYMENT_STORED, id="deployment"),
    pytest.param(PVC_WRITTEN, PVC_STORED, id="pvc"),
    pytest.param(CONFIGMAP_WRITTEN, CONFIGMAP_STORED, id="configmap"),
]


def as_stored(stored: dict[str, Any], written: dict[str, Any]) -> dict[str, Any]:
    """What the server holds after our create: its form, plus our last-applied annotation."""
    observed = copy.deepcopy(stored)
    annotation = prepare_desired(written)["metadata"]["annotations"]
    observed["metadata"].setdefault("annotations", {}).update(annotation)
    return observed


@pytest.mark.parametrize(("written", "stored"), ZOO)
def test_applying_the_same_child_again_is_no_change(
    written: dict[str, Any], stored: dict[str, Any]
) -> None:
    observed = as_stored(stored, written)
    assert not needs_update(observed, apply(observed, written))


@pytest.mark.parametrize(("written", "stored"), ZOO)
def test_the_written_form_means_the_stored_one(
    written: dict[str, Any], stored: dict[str, Any]
) -> None:
    merged = apply(as_stored(stored, written), written)
    assert (
        merged["spec" if "spec" in stored else "metadata"]
        == as_stored(stored, written)["spec" if "spec" in stored else "metadata"]
    )


def unchanged(api_version: str, stored: dict[str, Any], written: dict[str, Any]) -> bool:
    """Whether applying `written` over `stored` (as our create left it) is no change."""
    observed = as_stored(
        {"apiVersion": api_version, **stored}, {"apiVersion": api_version, **written}
    )
    return not needs_update(observed, apply(observed, {"apiVersion": api_version, **written}))


def test_same_meaning_rules() -> None:
    meta = {"metadata": {"name": "x"}}
    stored = {**meta, "spec": {"resources": {"limits": {"cpu": "500m"}}}}
    written = {**meta, "spec": {"resources": {"limits": {"cpu": "0.5"}}, "env": [], "x": None}}
    assert unchanged("v1", stored, written)
    assert not unchanged("example.com/v1", stored, written)  # a CRD stores them as written
    assert not unchanged("v1", stored, {**meta, "spec": {"resources": {"limits": {"cpu": "1"}}}})
    assert unchanged("v1", {**meta, "spec": {}}, {**meta, "spec": {"hostNetwork": False}})
    assert not unchanged("v1", {**meta, "spec": {}}, {**meta, "spec": {"privileged": False}})


def test_a_real_change_is_still_a_change() -> None:
    observed = as_stored(POD_STORED, POD_WRITTEN)
    changed = copy.deepcopy(POD_WRITTEN)
    changed["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "0.6"
    changed["spec"]["hostNetwork"] = True
    merged = apply(observed, changed)
    assert needs_update(observed, merged)
    assert merged["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "0.6"
    assert merged["spec"]["hostNetwork"] is True


def test_fields_dropped_from_desired_are_still_removed() -> None:
    written = copy.deepcopy(STATEFULSET_WRITTEN)
    written["spec"]["template"]["spec"]["containers"][0]["args"] = ["--fast"]
    observed = as_stored(STATEFULSET_STORED, written)
    observed["spec"]["template"]["spec"]["containers"][0]["args"] = ["--fast"]
    merged = apply(observed, STATEFULSET_WRITTEN)
    assert "args" not in merged["spec"]["template"]["spec"]["containers"][0]
    # and fields set by others (the server's defaults) are kept
    assert merged["spec"]["volumeClaimTemplates"][0]["spec"]["volumeMode"] == "Filesystem"


def test_custom_resources_keep_their_zero_values_and_quantities_as_written() -> None:
    observed = {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"}}
    desired = {
        **observed,
        "spec": {"enabled": False, "items": [], "size": {"limits": {"cpu": "0.5"}}},
    }
    merged = apply(observed, desired)
    assert merged["spec"] == desired["spec"]  # a CRD stores them as written
    stored = copy.deepcopy(merged)
    stored["spec"]["size"]["limits"]["cpu"] = "500m"
    assert apply(stored, desired)["spec"]["size"]["limits"]["cpu"] == "0.5"


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("0.5", "500m", True),
        ("1024Mi", "1Gi", True),
        (1, "1", True),
        ("1.5Gi", "1536Mi", True),
        ("1e3", "1k", True),
        ("2G", "2Gi", False),
        ("1", "1.1", False),
        (True, "1", False),
        ("abc", "abc", False),
    ],
)
def test_quantities_compare_by_value(a: Any, b: Any, same: bool) -> None:
    assert same_quantity(a, b) is same


def test_not_quantities() -> None:
    assert parse_quantity("1.5.5") is None and parse_quantity("Gi") is None
