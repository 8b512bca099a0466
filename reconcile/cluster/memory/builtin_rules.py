"""Validation of built-in kinds beyond their schemas: the checks of kube-apiserver's
`pkg/apis/*/validation` that controllers run into, with the server's wording.

On create: containers and images present, unique container names, supported restart policies,
workload selectors present, non-empty and matching their template's labels, Service ports named
and in range, claims with access modes and a storage request. On update, the fields the server
keeps immutable: a Pod's spec (but images, `activeDeadlineSeconds`, added tolerations and
`terminationGracePeriodSeconds`), workload selectors, a StatefulSet's spec outside the fields it
may change, a Job's template, selector and completions, a Service's cluster IP, a claim's spec
(but its requests), a Secret's type and the data of ConfigMaps and Secrets marked `immutable`.
"""

from __future__ import annotations

from typing import Any

from reconcile.cluster.memory import validation as v
from reconcile.objects.meta import Obj
from reconcile.objects.selectors import SelectorError, label_selector_from_spec

Errors = list[v.FieldError]

_WORKLOADS = {
    "deployments.apps": "deployment",
    "replicasets.apps": "replicaset",
    "statefulsets.apps": "statefulset",
    "daemonsets.apps": "daemonset",
}
_STATEFULSET_MUTABLE = (
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
)


def create_errors(group_resource: str, obj: Obj) -> Errors:
    spec = _dict(obj.get("spec"))
    if group_resource == "pods":
        return pod_spec_errors(spec, "spec", ("Always", "OnFailure", "Never"))
    if group_resource in _WORKLOADS:
        return _workload_errors(_WORKLOADS[group_resource], spec)
    if group_resource == "jobs.batch":
        return _job_errors(spec, "spec")
    if group_resource == "cronjobs.batch":
        return _job_errors(
            _dict(_dict(spec.get("jobTemplate")).get("spec")), "spec.jobTemplate.spec"
        )
    if group_resource == "services":
        return _service_errors(spec)
    if group_resource == "persistentvolumeclaims":
        return _claim_errors(spec, "spec")
    return []


def update_errors(group_resource: str, old: Obj, new: Obj, minor: int) -> Errors:
    errors = create_errors(group_resource, new)
    old_spec, new_spec = _dict(old.get("spec")), _dict(new.get("spec"))
    if group_resource == "pods":
        errors += _pod_update_errors(old_spec, new_spec, minor)
    elif group_resource in _WORKLOADS:
        errors += _immutable(old_spec.get("selector"), new_spec.get("selector"), "spec.selector")
        if group_resource == "statefulsets.apps":
            errors += _statefulset_update_errors(old_spec, new_spec, minor)
    elif group_resource == "jobs.batch":
        for name in ("selector", "template", "completions"):
            errors += _immutable(old_spec.get(name), new_spec.get(name), f"spec.{name}")
    elif group_resource == "services":
        errors += _cluster_ip_errors(old_spec, new_spec)
    elif group_resource == "persistentvolumeclaims":
        errors += _claim_update_errors(old_spec, new_spec, minor)
    elif group_resource in ("configmaps", "secrets"):
        errors += _immutable_data_errors(old, new)
    if group_resource == "secrets" and old.get("type") != new.get("type"):
        errors += _immutable(old.get("type"), new.get("type"), "type")
    return errors


def pod_spec_errors(spec: Obj, path: str, restart_policies: tuple[str, ...]) -> Errors:
    errors: Errors = []
    containers = spec.get("containers")
    if not isinstance(containers, list) or not containers:
        errors.append(v.required(f"{path}.containers"))
    seen: set[str] = set()
    for field in ("initContainers", "containers"):
        for index, container in enumerate(_list(spec.get(field))):
            where = f"{path}.{field}[{index}]"
            name = container.get("name")
            if isinstance(name, str) and name:
                if name in seen:
                    errors.append(v.FieldError(f"{where}.name", "Duplicate value", "", name, True))
                seen.add(name)
                errors += [
                    v.invalid_value(f"{where}.name", name, m) for m in v.dns1123_label_errors(name)
                ]
            if not container.get("image"):
                errors.append(v.required(f"{where}.image"))
            for port_index, port in enumerate(_list(container.get("ports"))):
                number = port.get("containerPort")
                if isinstance(number, int) and not 1 <= number <= 65535:
                    errors.append(
                        v.invalid_value(
                            f"{where}.ports[{port_index}].containerPort",
                            number,
                            "must be between 1 and 65535, inclusive",
                        )
                    )
    policy = spec.get("restartPolicy")
    if policy is not None and policy not in restart_policies:
        errors.append(v.unsupported(f"{path}.restartPolicy", policy, list(restart_policies)))
    return errors


def _workload_errors(kind: str, spec: Obj) -> Errors:
    template = _dict(spec.get("template"))
    errors = pod_spec_errors(_dict(template.get("spec")), "spec.template.spec", ("Always",))
    labels = _dict(_dict(template.get("metadata")).get("labels"))
    mismatch = v.invalid_value(
        "spec.template.metadata.labels", labels, "`selector` does not match template `labels`"
    )
    selector = spec.get("selector")
    if selector is None:  # a missing selector matches no labels
        return [v.required("spec.selector"), mismatch, *errors]
    selector = _dict(selector)
    if not selector.get("matchLabels") and not selector.get("matchExpressions"):
        errors.append(
            v.invalid_value("spec.selector", selector, f"empty selector is invalid for {kind}")
        )
        return errors
    try:
        matches = label_selector_from_spec(selector, "spec.selector").matches_labels(labels)
    except SelectorError as exc:
        errors.append(v.invalid_value("spec.selector", selector, str(exc)))
        return errors
    if not matches:
        errors.append(
            v.invalid_value(
                "spec.template.metadata.labels",
                labels,
                "`selector` does not match template `labels`",
            )
        )
    return errors


def _job_errors(spec: Obj, path: str) -> Errors:
    template = _dict(spec.get("template"))
    pod_spec = _dict(template.get("spec"))
    errors = pod_spec_errors(pod_spec, f"{path}.template.spec", ("Always", "OnFailure", "Never"))
    policy = pod_spec.get("restartPolicy")
    if policy not in ("OnFailure", "Never"):
        errors.append(
            v.required(f"{path}.template.spec.restartPolicy", 'valid values: "OnFailure", "Never"')
            if policy is None or policy == "Always"
            else v.unsupported(
                f"{path}.template.spec.restartPolicy", policy, ["OnFailure", "Never"]
            )
        )
    return errors


def _service_errors(spec: Obj) -> Errors:
    errors: Errors = []
    kind = spec.get("type", "ClusterIP")
    supported = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]
    if kind not in supported:
        errors.append(v.unsupported("spec.type", kind, supported))
    ports = _list(spec.get("ports"))
    headless = spec.get("clusterIP") == "None"
    if not ports and kind != "ExternalName" and not headless:
        errors.append(v.required("spec.ports"))
    names: set[str] = set()
    for index, port in enumerate(ports):
        where = f"spec.ports[{index}]"
        name = port.get("name")
        if len(ports) > 1 and not name:
            errors.append(v.required(f"{where}.name"))
        elif isinstance(name, str) and name:
            if name in names:
                errors.append(v.FieldError(f"{where}.name", "Duplicate value", "", name, True))
            names.add(name)
        number = port.get("port")
        if isinstance(number, int) and not 1 <= number <= 65535:
            errors.append(
                v.invalid_value(f"{where}.port", number, "must be between 1 and 65535, inclusive")
            )
    return errors


def _claim_errors(spec: Obj, path: str) -> Errors:
    errors: Errors = []
    if not spec.get("accessModes"):
        errors.append(v.required(f"{path}.accessModes", "at least 1 access mode is required"))
    requests = _dict(_dict(spec.get("resources")).get("requests"))
    if "storage" not in requests:
        errors.append(v.required(f"{path}.resources[storage]"))
    return errors


def _pod_update_errors(old: Obj, new: Obj, minor: int) -> Errors:
    """Only images, activeDeadlineSeconds, added tolerations and the grace period may change."""

    def comparable(spec: Obj) -> Obj:
        copy = {
            k: val
            for k, val in spec.items()
            if k not in ("activeDeadlineSeconds", "terminationGracePeriodSeconds", "tolerations")
        }
        for field in ("containers", "initContainers"):
            if isinstance(copy.get(field), list):
                copy[field] = [
                    {k: val for k, val in c.items() if k != "image"} if isinstance(c, dict) else c
                    for c in copy[field]
                ]
        return copy

    old_tolerations = _list(old.get("tolerations"))
    new_tolerations = _list(new.get("tolerations"))
    removed = any(t not in new_tolerations for t in old_tolerations)
    if comparable(old) == comparable(new) and not removed:
        return []
    detail = (
        "pod updates may not change fields other than `spec.containers[*].image`, "
        "`spec.initContainers[*].image`, `spec.activeDeadlineSeconds`"
    )
    if minor >= 21:
        detail += (
            ", `spec.tolerations` (only additions to existing tolerations) or "
            "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously "
            "negative)"
        )
    else:
        detail += " or `spec.tolerations` (only additions to existing tolerations)"
    return [v.forbidden("spec", detail)]


def _statefulset_update_errors(old: Obj, new: Obj, minor: int) -> Errors:
    mutable = _STATEFULSET_MUTABLE if minor >= 25 else ("replicas", "template", "updateStrategy")

    def rest(spec: Obj) -> Obj:
        return {k: val for k, val in spec.items() if k not in mutable}

    if rest(old) == rest(new):
        return []
    if minor >= 25:
        detail = (
            "updates to statefulset spec for fields other than 'replicas', 'ordinals', "
            "'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and "
            "'minReadySeconds' are forbidden"
        )
    else:
        detail = (
            "updates to statefulset spec for fields other than 'replicas', 'template', and "
            "'updateStrategy' are forbidden"
        )
    return [v.forbidden("spec", detail)]


def _cluster_ip_errors(old: Obj, new: Obj) -> Errors:
    """Allocated addresses stay; a changed `clusterIP` is checked as the `clusterIPs` it
    implies."""
    old_ips = old.get("clusterIPs") or ([old["clusterIP"]] if old.get("clusterIP") else [])
    new_ips = new.get("clusterIPs") or []
    if new.get("clusterIP") and (not new_ips or new_ips[0] != new["clusterIP"]):
        new_ips = [new["clusterIP"], *new_ips[1:]]
    if old_ips and new_ips and new_ips[0] != old_ips[0]:
        return [v.invalid_value("spec.clusterIPs[0]", new_ips, "may not change once set")]
    return []


def _claim_update_errors(old: Obj, new: Obj, minor: int) -> Errors:
    def rest(spec: Obj) -> Obj:
        copy = {k: val for k, val in spec.items() if k != "volumeAttributesClassName"}
        resources = {k: val for k, val in _dict(copy.get("resources")).items() if k != "requests"}
        copy["resources"] = resources
        return copy

    if rest(old) == rest(new):
        return []
    detail = "spec is immutable after creation except resources.requests"
    detail += (
        " and volumeAttributesClassName for bound claims" if minor >= 29 else " for bound claims"
    )
    return [v.forbidden("spec", detail)]


def _immutable_data_errors(old: Obj, new: Obj) -> Errors:
    if old.get("immutable") is not True:
        return []
    errors: Errors = []
    if new.get("immutable") is not True:
        errors.append(v.forbidden("immutable", "field is immutable when `immutable` is set"))
    for field in ("data", "binaryData"):
        if (old.get(field) or {}) != (new.get(field) or {}):
            errors.append(v.forbidden(field, "field is immutable when `immutable` is set"))
    return errors


def _immutable(old: Any, new: Any, path: str) -> Errors:
    if old == new:
        return []
    return [v.invalid_value(path, new, "field is immutable")]


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Obj]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []
