"""Ingresses between networking.k8s.io/v1 and v1beta1 (extensions/v1beta1 is the same shape), as
kube-apiserver converts them: `spec.backend` is v1's `spec.defaultBackend`, a backend's
`serviceName` and `servicePort` are v1's `service.name` and `service.port.number` (or `.name`,
for a named port), and v1beta1 defaults a path's `pathType` to `ImplementationSpecific`."""

from __future__ import annotations

from typing import Any

from reconcile.objects.jsondata import normalized_copy
from reconcile.objects.meta import Obj


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _paths(spec: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for rule in spec.get("rules") or []:
        http = _dict(_dict(rule).get("http"))
        found += [p for p in http.get("paths") or [] if isinstance(p, dict)]
    return found


def version_defaults(obj: Obj) -> None:
    """v1beta1's defaults: a path's `pathType`."""
    for path in _paths(_dict(obj.get("spec"))):
        path.setdefault("pathType", "ImplementationSpecific")


def to_v1(obj: Obj) -> Obj:
    out: Obj = normalized_copy(obj)
    spec = _dict(out.get("spec"))
    if "backend" in spec:
        spec["defaultBackend"] = _backend_to_v1(spec.pop("backend"))
    for path in _paths(spec):
        if "backend" in path:
            path["backend"] = _backend_to_v1(path["backend"])
    return out


def to_v1beta1(obj: Obj) -> Obj:
    out: Obj = normalized_copy(obj)
    spec = _dict(out.get("spec"))
    if "defaultBackend" in spec:
        spec["backend"] = _backend_to_v1beta1(spec.pop("defaultBackend"))
    for path in _paths(spec):
        if "backend" in path:
            path["backend"] = _backend_to_v1beta1(path["backend"])
    return out


def _backend_to_v1(backend: Any) -> Any:
    if not isinstance(backend, dict):
        return backend
    out = {k: v for k, v in backend.items() if k not in ("serviceName", "servicePort")}
    if "serviceName" in backend or "servicePort" in backend:
        service: dict[str, Any] = {"name": backend.get("serviceName", "")}
        port = backend.get("servicePort")
        if isinstance(port, str) and not port.isdigit():
            service["port"] = {"name": port}
        elif port is not None:
            service["port"] = {"number": int(port)}
        out["service"] = service
    return out


def _backend_to_v1beta1(backend: Any) -> Any:
    if not isinstance(backend, dict):
        return backend
    out = {k: v for k, v in backend.items() if k != "service"}
    service = backend.get("service")
    if isinstance(service, dict):
        out["serviceName"] = service.get("name", "")
        port = _dict(service.get("port"))
        if port.get("name"):
            out["servicePort"] = port["name"]
        elif "number" in port:
            out["servicePort"] = port["number"]
        else:
            out["servicePort"] = 0
    return out
