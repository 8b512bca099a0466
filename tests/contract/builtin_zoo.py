"""Built-in objects written the way people write them, and what kube-apiserver stored for each,
server-set values abstracted (`comparable`): 1.20's here beside each object, 1.37's in
`builtin_zoo_1_37.json` (in the same order, as a real 1.37 API server answered; that release
defaults more: Services' IP families and traffic policy, StatefulSets' PVC retention, Jobs'
completion mode and selector labels, no `creationTimestamp: null` in templates)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

Obj = dict[str, Any]

ZOO: list[tuple[Obj, Obj]] = [
    (
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "pod"},
            "spec": {
                "containers": [
                    {
                        "name": "web",
                        "image": "nginx:1.25",
                        "ports": [{"containerPort": 80}],
                        "resources": {"limits": {"cpu": 0.5, "memory": "1024Mi"}},
                    },
                    {"name": "side", "image": "busybox"},
                ],
                "initContainers": [{"name": "init", "image": "busybox:latest"}],
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "pod"},
            "spec": {
                "containers": [
                    {
                        "image": "nginx:1.25",
                        "imagePullPolicy": "IfNotPresent",
                        "name": "web",
                        "ports": [{"containerPort": 80, "protocol": "TCP"}],
                        "resources": {
                            "limits": {"cpu": "500m", "memory": "1Gi"},
                            "requests": {"cpu": "500m", "memory": "1Gi"},
                        },
                        "terminationMessagePath": "/dev/termination-log",
                        "terminationMessagePolicy": "File",
                    },
                    {
                        "image": "busybox",
                        "imagePullPolicy": "Always",
                        "name": "side",
                        "resources": {},
                        "terminationMessagePath": "/dev/termination-log",
                        "terminationMessagePolicy": "File",
                    },
                ],
                "dnsPolicy": "ClusterFirst",
                "enableServiceLinks": True,
                "initContainers": [
                    {
                        "image": "busybox:latest",
                        "imagePullPolicy": "Always",
                        "name": "init",
                        "resources": {},
                        "terminationMessagePath": "/dev/termination-log",
                        "terminationMessagePolicy": "File",
                    }
                ],
                "preemptionPolicy": "PreemptLowerPriority",
                "priority": 0,
                "restartPolicy": "Always",
                "schedulerName": "default-scheduler",
                "securityContext": {},
                "terminationGracePeriodSeconds": 30,
                "tolerations": [
                    {
                        "effect": "NoExecute",
                        "key": "node.kubernetes.io/not-ready",
                        "operator": "Exists",
                        "tolerationSeconds": 300,
                    },
                    {
                        "effect": "NoExecute",
                        "key": "node.kubernetes.io/unreachable",
                        "operator": "Exists",
                        "tolerationSeconds": 300,
                    },
                ],
            },
            "status": {"phase": "Pending", "qosClass": "Burstable"},
        },
    ),
    (
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "svc"},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]},
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "svc"},
            "spec": {
                "clusterIP": "<ip>",
                "clusterIPs": ["<ip>"],
                "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}],
                "selector": {"app": "web"},
                "sessionAffinity": "None",
                "type": "ClusterIP",
            },
            "status": {"loadBalancer": {}},
        },
    ),
    (
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "svc-np"},
            "spec": {
                "type": "NodePort",
                "selector": {"app": "web"},
                "ports": [
                    {"port": 80, "targetPort": "http", "name": "http"},
                    {"port": 53, "protocol": "UDP", "name": "dns"},
                ],
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "svc-np"},
            "spec": {
                "clusterIP": "<ip>",
                "clusterIPs": ["<ip>"],
                "externalTrafficPolicy": "Cluster",
                "ports": [
                    {
                        "name": "http",
                        "nodePort": "<port>",
                        "port": 80,
                        "protocol": "TCP",
                        "targetPort": "http",
                    },
                    {
                        "name": "dns",
                        "nodePort": "<port>",
                        "port": 53,
                        "protocol": "UDP",
                        "targetPort": 53,
                    },
                ],
                "selector": {"app": "web"},
                "sessionAffinity": "None",
                "type": "NodePort",
            },
            "status": {"loadBalancer": {}},
        },
    ),
    (
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "svc-headless"},
            "spec": {"clusterIP": "None", "selector": {"app": "web"}, "ports": [{"port": 80}]},
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "svc-headless"},
            "spec": {
                "clusterIP": "None",
                "clusterIPs": ["None"],
                "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}],
                "selector": {"app": "web"},
                "sessionAffinity": "None",
                "type": "ClusterIP",
            },
            "status": {"loadBalancer": {}},
        },
    ),
    (
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "dep"},
            "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "web", "image": "nginx"}]},
                },
            },
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "dep"},
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
            },
            "status": {},
        },
    ),
    (
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": "sts"},
            "spec": {
                "serviceName": "sts",
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
                            "resources": {"requests": {"storage": "1Gi"}},
                        },
                    }
                ],
            },
        },
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": "sts"},
            "spec": {
                "podManagementPolicy": "OrderedReady",
                "replicas": 1,
                "revisionHistoryLimit": 10,
                "selector": {"matchLabels": {"app": "db"}},
                "serviceName": "sts",
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
            "status": {"replicas": 0},
        },
    ),
    (
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"name": "ds"},
            "spec": {
                "selector": {"matchLabels": {"app": "ds"}},
                "template": {
                    "metadata": {"labels": {"app": "ds"}},
                    "spec": {"containers": [{"name": "ds", "image": "fluentd"}]},
                },
            },
        },
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {
                "annotations": {"deprecated.daemonset.template.generation": "1"},
                "name": "ds",
            },
            "spec": {
                "revisionHistoryLimit": 10,
                "selector": {"matchLabels": {"app": "ds"}},
                "template": {
                    "metadata": {"creationTimestamp": None, "labels": {"app": "ds"}},
                    "spec": {
                        "containers": [
                            {
                                "image": "fluentd",
                                "imagePullPolicy": "Always",
                                "name": "ds",
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
                "updateStrategy": {"rollingUpdate": {"maxUnavailable": 1}, "type": "RollingUpdate"},
            },
            "status": {
                "currentNumberScheduled": 0,
                "desiredNumberScheduled": 0,
                "numberMisscheduled": 0,
                "numberReady": 0,
            },
        },
    ),
    (
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": "rs"},
            "spec": {
                "selector": {"matchLabels": {"app": "rs"}},
                "template": {
                    "metadata": {"labels": {"app": "rs"}},
                    "spec": {"containers": [{"name": "rs", "image": "nginx"}]},
                },
            },
        },
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": "rs"},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "rs"}},
                "template": {
                    "metadata": {"creationTimestamp": None, "labels": {"app": "rs"}},
                    "spec": {
                        "containers": [
                            {
                                "image": "nginx",
                                "imagePullPolicy": "Always",
                                "name": "rs",
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
            },
            "status": {"replicas": 0},
        },
    ),
    (
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "job"},
            "spec": {
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [
                            {"name": "job", "image": "busybox", "command": ["echo", "hi"]}
                        ],
                    }
                }
            },
        },
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"labels": {"controller-uid": "<uid>", "job-name": "job"}, "name": "job"},
            "spec": {
                "backoffLimit": 6,
                "completions": 1,
                "parallelism": 1,
                "selector": {"matchLabels": {"controller-uid": "<uid>"}},
                "template": {
                    "metadata": {
                        "creationTimestamp": None,
                        "labels": {"controller-uid": "<uid>", "job-name": "job"},
                    },
                    "spec": {
                        "containers": [
                            {
                                "command": ["echo", "hi"],
                                "image": "busybox",
                                "imagePullPolicy": "Always",
                                "name": "job",
                                "resources": {},
                                "terminationMessagePath": "/dev/termination-log",
                                "terminationMessagePolicy": "File",
                            }
                        ],
                        "dnsPolicy": "ClusterFirst",
                        "restartPolicy": "Never",
                        "schedulerName": "default-scheduler",
                        "securityContext": {},
                        "terminationGracePeriodSeconds": 30,
                    },
                },
            },
            "status": {},
        },
    ),
    (
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "pvc"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "0.5Gi"}},
            },
        },
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"finalizers": ["kubernetes.io/pvc-protection"], "name": "pvc"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "512Mi"}},
                "volumeMode": "Filesystem",
            },
            "status": {"phase": "Pending"},
        },
    ),
    (
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "sec"},
            "stringData": {"password": "hunter22"},
        },
        {
            "apiVersion": "v1",
            "data": {"password": "aHVudGVyMjI="},
            "kind": "Secret",
            "metadata": {"name": "sec"},
            "type": "Opaque",
        },
    ),
    (
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"a": "b"}},
        {"apiVersion": "v1", "data": {"a": "b"}, "kind": "ConfigMap", "metadata": {"name": "cm"}},
    ),
    (
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa"}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa"}},
    ),
    (
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": {"name": "np"},
            "spec": {"podSelector": {}},
        },
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": {"name": "np"},
            "spec": {"podSelector": {}, "policyTypes": ["Ingress"]},
        },
    ),
]


def stored_by(release: str) -> list[Obj]:
    """What `release` stored for each object of `ZOO`, in its order."""
    if release == "1.20":
        return [stored for _, stored in ZOO]
    path = Path(__file__).with_name(f"builtin_zoo_{release.replace('.', '_')}.json")
    found: list[Obj] = json.loads(path.read_text())
    return found
