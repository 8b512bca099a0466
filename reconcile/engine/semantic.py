"""Equality by meaning: what the API server stores for what a hook wrote.

The server rewrites some values without changing what they mean, and an apply that compared
text would update the object on every pass, forever. Every such rule lives here, and each one
was seen on a real API server:

* a quantity is stored in canonical form: `0.5` as `500m`, `1024Mi` as `1Gi`, `1` as `"1"`;
* a `null` value is dropped (built-in kinds, and CRDs whose schema does not allow null);
* in built-in kinds, empty maps and lists are dropped (`labels: {}`, `env: []`), and so are
  the zero values of the plain (non-pointer) fields listed in OMITTED_WHEN_ZERO
  (`hostNetwork: false`, `readOnly: false`, `minReadySeconds: 0`).

Defaults the server fills in (`imagePullPolicy`, `protocol: TCP`, `strategy`) need no rule: the
three-way merge keeps fields that only the observed object has.
"""

from __future__ import annotations

from typing import Any

from reconcile.objects.quantity import same_quantity

# API groups served by kube-apiserver itself (never by a CRD). Exact names: CRD groups such as
# snapshot.storage.k8s.io end in .k8s.io too.
BUILTIN_GROUPS: frozenset[str] = frozenset(
    {
        "",
        "admissionregistration.k8s.io",
        "apiextensions.k8s.io",
        "apiregistration.k8s.io",
        "apps",
        "authentication.k8s.io",
        "authorization.k8s.io",
        "autoscaling",
        "batch",
        "certificates.k8s.io",
        "coordination.k8s.io",
        "discovery.k8s.io",
        "events.k8s.io",
        "flowcontrol.apiserver.k8s.io",
        "internal.apiserver.k8s.io",
        "networking.k8s.io",
        "node.k8s.io",
        "policy",
        "rbac.authorization.k8s.io",
        "resource.k8s.io",
        "scheduling.k8s.io",
        "storage.k8s.io",
        "storagemigration.k8s.io",
    }
)

# Plain Go fields with `omitempty` that people write with their zero value: the server drops
# them, so "absent" means the same. (Pointer fields such as `privileged` or
# `automountServiceAccountToken` are stored as written and are not listed.)
OMITTED_WHEN_ZERO: frozenset[str] = frozenset(
    {
        "hostNetwork",
        "hostPID",
        "hostIPC",
        "readOnly",
        "stdin",
        "stdinOnce",
        "tty",
        "paused",
        "publishNotReadyAddresses",
        "minReadySeconds",
        "initialDelaySeconds",
        "subPath",
        "subPathExpr",
        "hostPort",
        "hostIP",
        "nodeName",
        "serviceAccountName",
        "hostname",
        "subdomain",
        "priorityClassName",
        "workingDir",
    }
)

# A scalar is a quantity when its map sits under one of these keys (`resources.limits.cpu`,
# ResourceQuota `spec.hard`, PV `capacity`, Pod `overhead`, LimitRange `max`, ...), or when it
# is itself one of QUANTITY_FIELDS (`emptyDir.sizeLimit`).
QUANTITY_MAPS: frozenset[str] = frozenset(
    {
        "limits",
        "requests",
        "hard",
        "capacity",
        "allocatable",
        "overhead",
        "max",
        "min",
        "default",
        "defaultRequest",
        "maxLimitRequestRatio",
    }
)
QUANTITY_FIELDS: frozenset[str] = frozenset({"sizeLimit"})

Path = tuple[str | int, ...]


def is_builtin(api_version: str) -> bool:
    if not api_version:
        return False  # not an object the server would know
    group = api_version.rpartition("/")[0] if "/" in api_version else ""
    return group in BUILTIN_GROUPS


def same_scalar(path: Path, observed: Any, desired: Any, *, builtin: bool) -> bool:
    """Whether a desired scalar means what the observed one says (see the module rules)."""
    if _json_scalar_equal(observed, desired):
        return True
    return builtin and is_quantity_path(path) and same_quantity(observed, desired)


def dropped_by_server(key: str, value: Any, builtin: bool) -> bool:
    """Whether the server would store nothing for `key: value` (so absent means the same)."""
    if value is None:
        return True
    if not builtin:
        return False
    if isinstance(value, dict | list) and not value:
        return True
    if key in OMITTED_WHEN_ZERO:
        return value is False or value == "" or (type(value) is int and value == 0)
    return False


def _json_scalar_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    return bool(a == b)


def is_quantity_path(path: Path) -> bool:
    if not path or not isinstance(path[-1], str):
        return False
    if path[-1] in QUANTITY_FIELDS:
        return True
    return len(path) >= 2 and isinstance(path[-2], str) and path[-2] in QUANTITY_MAPS
