"""HorizontalPodAutoscalers between autoscaling/v1, v2beta1, v2beta2 and v2, as kube-apiserver
converts them: through the v2 form (v2beta2 is the same shape). autoscaling/v1 holds one CPU
utilization target; what else v2 says lives in its annotations (`autoscaling.alpha.kubernetes.io/
metrics`, `behavior`, `conditions`, `current-metrics`), in the words the server writes there, so
that nothing is lost in a round trip; one without any metric targets CPU at 80%."""

from __future__ import annotations

import json
from typing import Any

from reconcile.objects.jsondata import normalized_copy
from reconcile.objects.meta import Obj

_PREFIX = "autoscaling.alpha.kubernetes.io/"
METRICS, BEHAVIOR = _PREFIX + "metrics", _PREFIX + "behavior"
CONDITIONS, CURRENT_METRICS = _PREFIX + "conditions", _PREFIX + "current-metrics"
DEFAULT_CPU = 80
# The HPA scaling rules' `Tolerance` (1.33) shows in the behavior annotation from then on.
_TOLERANCE_SINCE = 33
_SOURCES = ("object", "pods", "resource", "containerResource", "external")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[dict[str, Any]]:
    return [x for x in value if isinstance(x, dict)] if isinstance(value, list) else []


def _cpu_target(metric: dict[str, Any]) -> Any:
    resource = _dict(metric.get("resource"))
    target = _dict(resource.get("target"))
    cpu = metric.get("type") == "Resource" and resource.get("name") == "cpu"
    return target.get("averageUtilization") if cpu and target.get("type") == "Utilization" else None


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


# --- the v2beta1 shape (autoscaling/v1's annotations use it too) -------------------------------


def _target(kind: str, value: Any) -> dict[str, Any]:
    key = {"Utilization": "averageUtilization", "AverageValue": "averageValue"}.get(kind, "value")
    return {"type": kind, key: value}


def metric_from_beta1(metric: dict[str, Any]) -> dict[str, Any]:
    """A v2beta1 MetricSpec in the v2 shape."""
    out: dict[str, Any] = {"type": metric.get("type")}
    source_type = next((s for s in _SOURCES if isinstance(metric.get(s), dict)), None)
    if source_type is None:
        return out
    old = metric[source_type]
    new: dict[str, Any] = {}
    if source_type in ("resource", "containerResource"):
        new["name"] = old.get("name")
        if "targetAverageUtilization" in old:
            new["target"] = _target("Utilization", old["targetAverageUtilization"])
        elif "targetAverageValue" in old:
            new["target"] = _target("AverageValue", old["targetAverageValue"])
        if "container" in old:
            new["container"] = old["container"]
    else:
        selector = old.get("metricSelector" if source_type == "external" else "selector")
        new["metric"] = {
            "name": old.get("metricName"),
            **({"selector": selector} if selector else {}),
        }
        if source_type == "object":
            new["describedObject"] = old.get("target")
            if "averageValue" in old:
                new["target"] = _target("AverageValue", old["averageValue"])
            else:
                new["target"] = _target("Value", old.get("targetValue"))
        elif "targetAverageValue" in old:
            new["target"] = _target("AverageValue", old["targetAverageValue"])
        else:
            new["target"] = _target("Value", old.get("targetValue"))
    out[source_type] = new
    return out


def metric_to_beta1(metric: dict[str, Any]) -> dict[str, Any]:
    """A v2 MetricSpec in the v2beta1 shape, its keys in Go's order."""
    out: dict[str, Any] = {"type": metric.get("type")}
    source_type = next((s for s in _SOURCES if isinstance(metric.get(s), dict)), None)
    if source_type is None:
        return out
    new, target = metric[source_type], _dict(metric[source_type].get("target"))
    name, selector = _dict(new.get("metric")).get("name"), _dict(new.get("metric")).get("selector")
    old: dict[str, Any] = {}
    if source_type in ("resource", "containerResource"):
        old["name"] = new.get("name")
        if target.get("type") == "Utilization":
            old["targetAverageUtilization"] = target.get("averageUtilization")
        elif target.get("type") == "AverageValue":
            old["targetAverageValue"] = target.get("averageValue")
        if source_type == "containerResource":
            old["container"] = new.get("container")
    elif source_type == "object":
        old = {"target": new.get("describedObject"), "metricName": name}
        old["targetValue"] = target.get("value", "0")
        if selector:
            old["selector"] = selector
        if target.get("type") == "AverageValue":
            old["averageValue"] = target.get("averageValue")
    else:
        old = {"metricName": name}
        if selector:
            old["metricSelector" if source_type == "external" else "selector"] = selector
        if target.get("type") == "Value":
            old["targetValue"] = target.get("value")
        else:
            old["targetAverageValue"] = target.get("averageValue")
        if source_type == "pods" and selector:
            old["selector"] = old.pop("selector")
    out[source_type] = old
    return out


def _current_from_beta1(metric: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"type": metric.get("type")}
    for source_type in _SOURCES:
        old = metric.get(source_type)
        if not isinstance(old, dict):
            continue
        current: dict[str, Any] = {}
        for key, new_key in (
            ("currentAverageUtilization", "averageUtilization"),
            ("currentAverageValue", "averageValue"),
            ("averageValue", "averageValue"),
            ("currentValue", "value"),
        ):
            if key in old:
                current[new_key] = old[key]
        new: dict[str, Any] = {"current": current}
        if source_type in ("resource", "containerResource"):
            new["name"] = old.get("name")
        else:
            new["metric"] = {"name": old.get("metricName")}
        if source_type == "object":
            new["describedObject"] = old.get("target")
        out[source_type] = new
    return out


def _current_to_beta1(metric: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"type": metric.get("type")}
    for source_type in _SOURCES:
        new = metric.get(source_type)
        if not isinstance(new, dict):
            continue
        current = _dict(new.get("current"))
        old: dict[str, Any] = {}
        if source_type in ("resource", "containerResource"):
            old["name"] = new.get("name")
        if source_type == "object":
            old["target"] = new.get("describedObject")
        if source_type not in ("resource", "containerResource"):
            old["metricName"] = _dict(new.get("metric")).get("name")
        for key, old_key in (
            ("averageUtilization", "currentAverageUtilization"),
            ("averageValue", "currentAverageValue"),
            ("value", "currentValue"),
        ):
            if key in current:
                old[old_key] = current[key]
        out[source_type] = old
    return out


# --- autoscaling/v1's behavior annotation: Go's field names ------------------------------------


def _behavior_to_go(behavior: dict[str, Any], minor: int) -> dict[str, Any]:
    def rules(value: Any) -> Any:
        if not isinstance(value, dict):
            return None
        out: dict[str, Any] = {
            "StabilizationWindowSeconds": value.get("stabilizationWindowSeconds"),
            "SelectPolicy": value.get("selectPolicy"),
            "Policies": [
                {
                    "Type": p.get("type"),
                    "Value": p.get("value"),
                    "PeriodSeconds": p.get("periodSeconds"),
                }
                for p in _list(value.get("policies"))
            ]
            or None,
        }
        if minor >= _TOLERANCE_SINCE:
            out["Tolerance"] = value.get("tolerance")
        return out

    return {
        "ScaleUp": rules(behavior.get("scaleUp")),
        "ScaleDown": rules(behavior.get("scaleDown")),
    }


def _behavior_from_go(encoded: dict[str, Any]) -> dict[str, Any]:
    def rules(value: Any) -> dict[str, Any] | None:
        if not isinstance(value, dict):
            return None
        out: dict[str, Any] = {}
        for key, new_key in (
            ("StabilizationWindowSeconds", "stabilizationWindowSeconds"),
            ("SelectPolicy", "selectPolicy"),
            ("Tolerance", "tolerance"),
        ):
            if value.get(key) is not None:
                out[new_key] = value[key]
        policies = [
            {
                "type": p.get("Type"),
                "value": p.get("Value"),
                "periodSeconds": p.get("PeriodSeconds"),
            }
            for p in _list(value.get("Policies"))
        ]
        if policies:
            out["policies"] = policies
        return out

    pairs = (("scaleUp", encoded.get("ScaleUp")), ("scaleDown", encoded.get("ScaleDown")))
    return {key: found for key, value in pairs if (found := rules(value)) is not None}


# --- to and from the v2 shape ------------------------------------------------------------------


def to_hub(obj: Obj) -> Obj:
    """Any version's HPA in the v2 shape."""
    version = str(obj.get("apiVersion") or "").rpartition("/")[2]
    out: Obj = normalized_copy(obj)
    if version == "v1":
        return _from_v1(out)
    if version == "v2beta1":
        spec, status = _dict(out.get("spec")), _dict(out.get("status"))
        if "metrics" in spec:
            spec["metrics"] = [metric_from_beta1(m) for m in _list(spec["metrics"])]
        if "currentMetrics" in status:
            status["currentMetrics"] = [
                _current_from_beta1(m) for m in _list(status["currentMetrics"])
            ]
        meta = _dict(out.get("metadata"))
        annotations = dict(_dict(meta.get("annotations")))
        behavior = _decoded(annotations.pop(BEHAVIOR, None))
        if isinstance(behavior, dict):
            spec["behavior"] = _behavior_from_go(behavior)
            if annotations:
                meta["annotations"] = annotations
            else:
                meta.pop("annotations", None)
    return out


def _from_v1(out: Obj) -> Obj:
    meta = _dict(out.get("metadata"))
    annotations = dict(_dict(meta.get("annotations")))
    spec = _dict(out.get("spec"))
    status = _dict(out.get("status"))
    metrics = [metric_from_beta1(m) for m in _list(_decoded(annotations.pop(METRICS, None)))]
    cpu = spec.pop("targetCPUUtilizationPercentage", None)
    if cpu is not None:
        metrics.append(_resource_target("cpu", cpu))
    spec["metrics"] = metrics or [_resource_target("cpu", DEFAULT_CPU)]
    behavior = _decoded(annotations.pop(BEHAVIOR, None))
    if isinstance(behavior, dict):
        spec["behavior"] = _behavior_from_go(behavior)
    current = _decoded(annotations.pop(CURRENT_METRICS, None))
    utilization = status.pop("currentCPUUtilizationPercentage", None)
    if isinstance(current, list):
        status["currentMetrics"] = [_current_from_beta1(m) for m in _list(current)]
    elif utilization is not None:
        status["currentMetrics"] = [
            {
                "type": "Resource",
                "resource": {"name": "cpu", "current": {"averageUtilization": utilization}},
            }
        ]
    conditions = _decoded(annotations.pop(CONDITIONS, None))
    if isinstance(conditions, list):
        status["conditions"] = conditions
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)
    return out


def from_hub(hub: Obj, api_version: str, minor: int) -> Obj:
    """The v2-shaped `hub` as `api_version` shows it."""
    out: Obj = normalized_copy(hub)
    out["apiVersion"] = api_version
    version = api_version.rpartition("/")[2]
    spec, status = _dict(out.get("spec")), _dict(out.get("status"))
    if version == "v1":
        return _to_v1(out, spec, status, minor)
    if version == "v2beta1":
        if "metrics" in spec:
            spec["metrics"] = [metric_to_beta1(m) for m in _list(spec["metrics"])]
        if isinstance(status.get("currentMetrics"), list):
            status["currentMetrics"] = [
                _current_to_beta1(m) for m in _list(status["currentMetrics"])
            ]
        behavior = spec.pop("behavior", None)
        if isinstance(behavior, dict):  # v2beta1 has no place for it but its annotation
            meta = out.setdefault("metadata", {})
            encoded = _compact(_behavior_to_go(behavior, minor))
            meta["annotations"] = {**_dict(meta.get("annotations")), BEHAVIOR: encoded}
    if "status" in out:
        # Go prints these lists, `omitempty` or not, as the release's types say
        status.setdefault("currentMetrics", None)
        if version in ("v2beta1", "v2beta2"):
            status.setdefault("conditions", None)
            status.setdefault("currentReplicas", 0)
    return out


def _to_v1(out: Obj, spec: dict[str, Any], status: dict[str, Any], minor: int) -> Obj:
    metrics = _list(spec.pop("metrics", None))
    cpu = next((_cpu_target(m) for m in metrics if _cpu_target(m) is not None), None)
    others = [m for m in metrics if _cpu_target(m) is None]
    if cpu is not None:
        spec["targetCPUUtilizationPercentage"] = cpu
    added: dict[str, str] = {}
    if others:
        added[METRICS] = _compact([metric_to_beta1(m) for m in others])
    behavior = spec.pop("behavior", None)
    if isinstance(behavior, dict):
        added[BEHAVIOR] = _compact(_behavior_to_go(behavior, minor))
    current = _list(status.pop("currentMetrics", None))
    for metric in current:
        resource = _dict(metric.get("resource"))
        utilization = _dict(resource.get("current")).get("averageUtilization")
        if resource.get("name") == "cpu" and utilization is not None:
            status["currentCPUUtilizationPercentage"] = utilization
    if current:
        added[CURRENT_METRICS] = _compact([_current_to_beta1(m) for m in current])
    conditions = status.pop("conditions", None)
    if conditions:
        added[CONDITIONS] = _compact(conditions)
    if added:
        meta = out.setdefault("metadata", {})
        meta["annotations"] = {**_dict(meta.get("annotations")), **added}
    if "status" in out:
        status.setdefault("currentReplicas", 0)
        status.setdefault("desiredReplicas", 0)
    return out


def _resource_target(name: str, utilization: Any) -> dict[str, Any]:
    return {
        "type": "Resource",
        "resource": {
            "name": name,
            "target": {"type": "Utilization", "averageUtilization": utilization},
        },
    }


def _decoded(text: Any) -> Any:
    if not isinstance(text, str):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


_SCALING = {
    "scaleUp": (0, [("Pods", 4), ("Percent", 100)]),
    "scaleDown": (300, [("Percent", 100)]),
}


def default_behavior(spec: dict[str, Any]) -> None:
    """v2's scaling rules, where `spec.behavior` is given: each direction's stabilization
    window, `selectPolicy: Max` and policies."""
    behavior = spec.get("behavior")
    if not isinstance(behavior, dict):
        return
    for direction, (window, policies) in _SCALING.items():
        rules = behavior.setdefault(direction, {})
        if not isinstance(rules, dict):
            continue
        rules.setdefault("stabilizationWindowSeconds", window)
        rules.setdefault("selectPolicy", "Max")
        if not rules.get("policies"):
            rules["policies"] = [
                {"type": kind, "value": value, "periodSeconds": 15} for kind, value in policies
            ]


def version_defaults(obj: Obj) -> None:
    """What each version's defaulting gives an HPA written through it (v1: `minReplicas` only;
    its CPU target comes with the conversion)."""
    spec = obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    spec.setdefault("minReplicas", 1)
    version = str(obj.get("apiVersion") or "").rpartition("/")[2]
    if version != "v1" and not spec.get("metrics"):
        metric = _resource_target("cpu", DEFAULT_CPU)
        spec["metrics"] = [metric_to_beta1(metric) if version == "v2beta1" else metric]
    if version not in ("v1", "v2beta1"):
        default_behavior(spec)
