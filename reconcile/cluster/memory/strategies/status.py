"""A built-in object's status written through its status subresource (PUT .../status), as
kube-apiserver's status strategies write it.

The body is decoded against the kind's schema as any write is (unknown fields dropped with a
warning, quantities canonical, a value of the wrong type refused) and defaulted as every decode
is (a Namespace's `kubernetes.io/metadata.name` label). Then everything but `metadata` and
`status` is reset from the stored object, and the server-set metadata with it; the kind's status
strategy may keep more (a Deployment's labels, a Pod's owner references) and defaults its status
again (a Namespace's `phase: Active`). Labels, annotations, finalizers and owner references are
the body's, as the built-in status strategies leave them (a custom resource's status write keeps
the stored metadata instead). Last, what Go always prints is filled in as the server's answer
shows it: a status of `{}` at least, a condition's times as `null` and its required strings as
`""`, a Service's `loadBalancer: {}`. The schema's `enum`s and `required` lists refuse nothing
here: the server checks a status only by the kind's own rules (`kinds`: `status_errors`).
"""

from __future__ import annotations

from typing import Any

from reconcile.cluster.memory.openapi.decoding import ReleaseSchemas
from reconcile.objects.jsondata import normalized_copy
from reconcile.objects.meta import Obj

Schema = dict[str, Any]
_REF_PREFIX = "#/$defs/"

# What a status write takes from its body; the rest is the stored object's.
WRITTEN = ("apiVersion", "kind", "metadata", "status")

_TIME = (
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime",
)
# Definitions whose time fields are Go structs, not pointers: printed `null` when unset.
_TIMES_ALWAYS_PRINTED = ("Condition", "ContainerStateRunning", "ContainerStateTerminated")
# Struct fields (not pointers) Go prints as `{}` when empty, by definition name.
_STRUCTS_ALWAYS_PRINTED: dict[str, tuple[str, ...]] = {
    "io.k8s.api.core.v1.ServiceStatus": ("loadBalancer",),
    "io.k8s.api.networking.v1.IngressStatus": ("loadBalancer",),
    "io.k8s.api.networking.v1beta1.IngressStatus": ("loadBalancer",),
    "io.k8s.api.extensions.v1beta1.IngressStatus": ("loadBalancer",),
    "io.k8s.api.core.v1.ContainerStatus": ("state", "lastState"),
}


def reset_to_stored(stored: Obj, body: Obj) -> None:
    """Everything but what a status write takes from its body, from the stored object."""
    for key in [k for k in body if k not in WRITTEN]:
        del body[key]
    for key, value in stored.items():
        if key not in WRITTEN:
            body[key] = normalized_copy(value)


class ZeroValues:
    """The zero values Go prints in a built-in kind's status, from one release's schemas."""

    def __init__(self, schemas: ReleaseSchemas) -> None:
        self.schemas = schemas

    def fill(self, root: Schema | None, obj: Obj) -> None:
        """Fill `obj["status"]` (made `{}` when absent) by the kind's schema `root`."""
        status = obj.get("status")
        if not isinstance(status, dict):
            status = obj["status"] = {}
        schema = ((root or {}).get("properties") or {}).get("status")
        if isinstance(schema, dict):
            self._value(schema, status)

    def _resolve(self, schema: Schema) -> tuple[Schema, str]:
        ref = schema.get("$ref")
        name = ref.split(_REF_PREFIX, 1)[1] if isinstance(ref, str) and _REF_PREFIX in ref else ""
        return self.schemas.resolve(schema), name

    def _value(self, schema: Schema, value: Any) -> None:
        schema, name = self._resolve(schema)
        if isinstance(value, list) and isinstance(schema.get("items"), dict):
            for item in value:
                self._value(schema["items"], item)
        elif isinstance(value, dict) and "properties" in schema:
            self._object(schema, name, value)

    def _object(self, schema: Schema, name: str, obj: dict[str, Any]) -> None:
        properties: dict[str, Schema] = schema["properties"]
        required = set(schema.get("required") or ())
        times = name.endswith(_TIMES_ALWAYS_PRINTED)
        structs = _STRUCTS_ALWAYS_PRINTED.get(name, ())
        for key, prop in properties.items():
            if key in obj:
                self._value(prop, obj[key])
                continue
            resolved, prop_name = self._resolve(prop)
            if prop_name in _TIME:
                if times or key in required:
                    obj[key] = None
            elif key in structs:
                obj[key] = {}
                self._value(prop, obj[key])
            elif key in required:
                obj[key] = self._zero(resolved)

    def _zero(self, schema: Schema) -> Any:
        declared = schema.get("type")
        types = {declared} if isinstance(declared, str) else set(declared or ())
        if "string" in types:
            return ""
        if "integer" in types or "number" in types:
            return 0
        if "boolean" in types:
            return False
        if "properties" in schema:
            value: dict[str, Any] = {}
            self._object(schema, "", value)
            return value
        return None  # a nil slice, map or pointer
