"""Services (and the Ingress's initial status).

Defaults: `type: ClusterIP`, `sessionAffinity: None`, ports' `protocol: TCP` and `targetPort:
<port>`, `clusterIP`/`clusterIPs` allocated from 10.0.0.0/24, `nodePort` allocated for
NodePort/LoadBalancer with `externalTrafficPolicy: Cluster`, `status.loadBalancer: {}`; 1.21+:
`ipFamilies: [IPv4]`, `ipFamilyPolicy: SingleStack`; 1.22+: `internalTrafficPolicy: Cluster`;
1.24+: LoadBalancer `allocateLoadBalancerNodePorts: true`. An update that leaves out what was
allocated keeps it.

Validation: a supported type, ports present (but for ExternalName and headless Services),
named when there are several, unique and in range; on update, the cluster IP may not change.
"""

from __future__ import annotations

import hashlib
import ipaddress

from reconcile.cluster.memory.strategies.kinds.base import (
    Context,
    Errors,
    KindRules,
    as_dict,
    child,
    items,
    spec_of,
)
from reconcile.cluster.memory.validation import fielderrors
from reconcile.objects.meta import Obj

_SERVICE_RANGE = ipaddress.ip_network("10.0.0.0/24")
_NODE_PORTS = (30000, 32767)


def _service(obj: Obj, context: Context) -> None:
    spec = child(obj, "spec")
    kind = spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    if spec["sessionAffinity"] == "ClientIP":
        client = child(child(spec, "sessionAffinityConfig"), "clientIP")
        client.setdefault("timeoutSeconds", 10800)
    for port in items(spec, "ports"):
        port.setdefault("protocol", "TCP")
        if "port" in port:
            port.setdefault("targetPort", port["port"])
        if kind in ("NodePort", "LoadBalancer") and "nodePort" not in port:
            port["nodePort"] = _node_port(obj, port, context)
    if kind == "ExternalName":
        return
    if not spec.get("clusterIP"):
        spec["clusterIP"] = _cluster_ip(obj, context)
    spec.setdefault("clusterIPs", [spec["clusterIP"]])
    if kind in ("NodePort", "LoadBalancer"):
        spec.setdefault("externalTrafficPolicy", "Cluster")
    if context.minor >= 21:
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")
    if context.minor >= 22:
        spec.setdefault("internalTrafficPolicy", "Cluster")
    if context.minor >= 24 and kind == "LoadBalancer":
        spec.setdefault("allocateLoadBalancerNodePorts", True)


def _cluster_ip(obj: Obj, context: Context) -> str:
    """A free address of the service range, chosen from the object's name so that the same
    manifests give the same addresses."""
    hosts = list(_SERVICE_RANGE.hosts())[9:]  # low addresses are the cluster's own services
    start = _stable_index(obj, len(hosts))
    for offset in range(len(hosts)):
        candidate = str(hosts[(start + offset) % len(hosts)])
        if candidate not in context.used_ips:
            context.used_ips.add(candidate)
            return candidate
    return str(hosts[start])


def _node_port(obj: Obj, port: Obj, context: Context) -> int:
    low, high = _NODE_PORTS
    count = high - low + 1
    start = _stable_index({**obj, "port": port.get("port")}, count)
    for offset in range(count):
        candidate = low + (start + offset) % count
        if candidate not in context.used_node_ports:
            context.used_node_ports.add(candidate)
            return candidate
    return low + start


def _stable_index(obj: Obj, modulo: int) -> int:
    meta = as_dict(obj.get("metadata"))
    key = f"{meta.get('namespace', '')}/{meta.get('name', '')}/{obj.get('port', '')}"
    return int(hashlib.sha256(key.encode()).hexdigest(), 16) % modulo


def _keep_allocations(stored: Obj, service: Obj) -> None:
    """An update that leaves out the allocated cluster IPs and node ports keeps them."""
    old, new = spec_of(stored), child(service, "spec")
    for field in ("clusterIP", "clusterIPs", "healthCheckNodePort"):
        if not new.get(field) and field in old:
            new[field] = old[field]
    old_ports = {(p.get("port"), p.get("protocol", "TCP")): p for p in items(old, "ports")}
    for port in items(new, "ports"):
        previous = old_ports.get((port.get("port"), port.get("protocol", "TCP")))
        if previous is not None and "nodePort" not in port and "nodePort" in previous:
            port["nodePort"] = previous["nodePort"]


def note_allocations(services: list[Obj], context: Context) -> None:
    """What the stored Services hold, before a create allocates."""
    ips: set[str] = set()
    ports: set[int] = set()
    for service in services:
        spec = spec_of(service)
        ips.update(str(ip) for ip in spec.get("clusterIPs") or [spec.get("clusterIP")] if ip)
        ports.update(int(p["nodePort"]) for p in items(spec, "ports") if p.get("nodePort"))
    context.used_ips = ips
    context.used_node_ports = ports


def _service_errors(obj: Obj) -> Errors:
    spec = spec_of(obj)
    errors: Errors = []
    kind = spec.get("type", "ClusterIP")
    supported = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]
    if kind not in supported:
        errors.append(fielderrors.unsupported("spec.type", kind, supported))
    ports = items(spec, "ports")
    headless = spec.get("clusterIP") == "None"
    if not ports and kind != "ExternalName" and not headless:
        errors.append(fielderrors.required("spec.ports"))
    names: set[str] = set()
    for index, port in enumerate(ports):
        where = f"spec.ports[{index}]"
        name = port.get("name")
        if len(ports) > 1 and not name:
            errors.append(fielderrors.required(f"{where}.name"))
        elif isinstance(name, str) and name:
            if name in names:
                errors.append(
                    fielderrors.FieldError(f"{where}.name", "Duplicate value", "", name, True)
                )
            names.add(name)
        number = port.get("port")
        if isinstance(number, int) and not 1 <= number <= 65535:
            errors.append(
                fielderrors.invalid_value(
                    f"{where}.port", number, "must be between 1 and 65535, inclusive"
                )
            )
    return errors


def _cluster_ip_errors(old_service: Obj, new_service: Obj, _: int) -> Errors:
    """Allocated addresses stay; a changed `clusterIP` is checked as the `clusterIPs` it
    implies."""
    old, new = spec_of(old_service), spec_of(new_service)
    old_ips = old.get("clusterIPs") or ([old["clusterIP"]] if old.get("clusterIP") else [])
    new_ips = new.get("clusterIPs") or []
    if new.get("clusterIP") and (not new_ips or new_ips[0] != new["clusterIP"]):
        new_ips = [new["clusterIP"], *new_ips[1:]]
    if old_ips and new_ips and new_ips[0] != old_ips[0]:
        return [fielderrors.invalid_value("spec.clusterIPs[0]", new_ips, "may not change once set")]
    return []


def _load_balancer(_: Obj, __: int) -> Obj:
    return {"loadBalancer": {}}


SERVICES = KindRules(
    default=_service,
    keep=_keep_allocations,
    errors=_service_errors,
    update_errors=_cluster_ip_errors,
    initial_status=_load_balancer,
)
INGRESSES = KindRules(initial_status=_load_balancer)
