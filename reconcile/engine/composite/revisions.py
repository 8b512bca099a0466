"""ControllerRevisions (metacontroller.k8s.io/v1alpha1): the values a rollout is recorded in.

A revision stores the parent's rolling fields (`parentPatch`: only the
`revisionHistory.fieldPaths` of the parent) and which children belong to it (`children`:
names grouped by API group and kind). Its name is a hash of the parent's uid and the patch, so
creating it is idempotent. Names of children are their relative keys (`name`, or
`namespace/name` under a cluster-scoped parent), as in hook requests.

Also here: the per-child checks a rollout waits for (status conditions, observedGeneration).
Everything is pure and never mutates its arguments.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field
from typing import Any

from reconcile.engine.ownership import owner_reference
from reconcile.objects.meta import (
    Obj,
    controller_ref,
    is_deleting,
    labels_of,
    metadata,
    name_of,
    namespace_of,
    uid_of,
)
from reconcile.objects.resource import ResourceInfo
from reconcile.objects.selectors import LabelSelector
from reconcile.records import dataclass
from reconcile.specs.composite import ConditionCheck
from reconcile.specs.controller import UpdateMethod

REVISION_GROUP = "metacontroller.k8s.io"
REVISION_API_VERSION = f"{REVISION_GROUP}/v1alpha1"
REVISION_KIND = "ControllerRevision"
REVISION_RESOURCE = ResourceInfo(
    REVISION_GROUP, "v1alpha1", "controllerrevisions", REVISION_KIND, namespaced=True
)
API_GROUP_LABEL = "metacontroller.k8s.io/apiGroup"
RESOURCE_LABEL = "metacontroller.k8s.io/resource"

# Kubernetes names are at most 253 characters: the prefix leaves room for `-` and 40 hex digits.
_MAX_PREFIX = 253 - 41

GroupKind = tuple[str, str]  # (API group without version, kind); "" is the core group


class RevisionError(ValueError):
    """A ControllerRevision object that cannot be read; the message names the field."""


# -- the parent patch -----------------------------------------------------------------------


def _split(path: str) -> list[str]:
    return path.split(".")


def _get(obj: Mapping[str, Any], parts: Sequence[str]) -> tuple[bool, Any]:
    current: Any = obj
    for part in parts:
        if not isinstance(current, dict) or part not in current:
            return False, None
        current = current[part]
    return True, current


def _set(obj: dict[str, Any], parts: Sequence[str], value: Any) -> None:
    current = obj
    for part in parts[:-1]:
        child = current.get(part)
        if not isinstance(child, dict):
            child = current[part] = {}
        current = child
    current[parts[-1]] = copy.deepcopy(value)


def _remove(obj: dict[str, Any], parts: Sequence[str]) -> None:
    found, container = _get(obj, parts[:-1])
    if found and isinstance(container, dict):
        container.pop(parts[-1], None)


def parent_patch(parent: Obj, field_paths: Sequence[str]) -> dict[str, Any]:
    """Only those dotted field paths of the parent, as nested dicts; a missing path (or one
    that runs through something that is not an object) is left out."""
    patch: dict[str, Any] = {}
    for path in field_paths:
        parts = _split(path)
        found, value = _get(parent, parts)
        if found:
            _set(patch, parts, value)
    return patch


def patched_parent(parent: Obj, patch: Mapping[str, Any], field_paths: Sequence[str]) -> Obj:
    """A deep copy of the parent with its rolling fields taken from the patch (a path absent
    from the patch is removed from the copy); other fields are the parent's. What the sync hook
    sees for an older revision."""
    result = copy.deepcopy(parent)
    for path in field_paths:
        parts = _split(path)
        found, value = _get(patch, parts)
        if found:
            _set(result, parts, value)
        else:
            _remove(result, parts)
    return result


# -- names and labels -----------------------------------------------------------------------


def _go_number(value: Any) -> Any:
    """Numbers as Go's encoding/json writes a float64: an integral float without `.0`."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return int(value)
    if isinstance(value, dict):
        return {k: _go_number(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_go_number(v) for v in value]
    return value


def patch_json(patch: Mapping[str, Any]) -> bytes:
    """The patch as Go's json.Marshal writes a map (what Metacontroller hashes): sorted keys,
    no spaces, UTF-8, and `<`, `>`, `&`, U+2028, U+2029 escaped."""
    text = json.dumps(_go_number(patch), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(char, escaped)
    return text.encode("utf-8")


def revision_name(parent_resource: ResourceInfo, parent_uid: str, patch: Mapping[str, Any]) -> str:
    """`<plural>.<group or "core">-<sha1 hex of the parent uid bytes + the patch JSON>`."""
    prefix = f"{parent_resource.resource}.{parent_resource.group or 'core'}"[:_MAX_PREFIX]
    digest = hashlib.sha1(parent_uid.encode("utf-8"), usedforsecurity=False)
    digest.update(patch_json(patch))
    return f"{prefix}-{digest.hexdigest()}"


def selector_labels(selector: LabelSelector) -> dict[str, str]:
    """The `key=value` requirements of a parent selector (its matchLabels, or `controller-uid`
    for a generated selector): the labels revisions carry so that they can be found again."""
    return {
        r.key: r.values[0]
        for r in selector.requirements
        if r.operator == "Equals" and len(r.values) == 1
    }


def revision_labels(
    parent_selector_labels: Mapping[str, str], parent_resource: ResourceInfo
) -> dict[str, str]:
    """The selector's labels plus the parent's API group and resource (so that revisions of
    different parent types never overlap)."""
    return {
        **parent_selector_labels,
        API_GROUP_LABEL: parent_resource.group,
        RESOURCE_LABEL: parent_resource.resource,
    }


def claim_revisions(
    parent: Obj,
    parent_resource: ResourceInfo,
    selector: LabelSelector,
    candidates: Iterable[Obj],
) -> list[Obj]:
    """The revisions of this parent among the candidates (revisions in the parent's namespace):
    those it controls, and orphans that match its selector and carry its resource labels (they
    are adopted when the rollout writes them: `Revision.to_object` adds the owner reference).
    Revisions are never released: a parent keeps its rollout progress when its selector
    changes."""
    wanted = {API_GROUP_LABEL: parent_resource.group, RESOURCE_LABEL: parent_resource.resource}
    claimed: list[Obj] = []
    for obj in candidates:
        if obj.get("kind") != REVISION_KIND or namespace_of(obj) != namespace_of(parent):
            continue
        ref = controller_ref(obj)
        if ref is not None:
            if ref.get("uid") == uid_of(parent):
                claimed.append(obj)
            continue
        labels = labels_of(obj)
        if (
            not is_deleting(parent)
            and not is_deleting(obj)
            and all(labels.get(k) == v for k, v in wanted.items())
            and selector.matches_labels(labels)
        ):
            claimed.append(obj)
    return claimed


# -- the revision value ---------------------------------------------------------------------


def normalize_children(
    children: Mapping[GroupKind, Iterable[str]],
) -> dict[GroupKind, tuple[str, ...]]:
    """Sorted groups and sorted, unique names; empty groups left out."""
    result: dict[GroupKind, tuple[str, ...]] = {}
    for group_kind in sorted(children):
        names = tuple(sorted(set(children[group_kind])))
        if names:
            result[group_kind] = names
    return result


def _field_error(name: str, where: str, problem: str) -> RevisionError:
    return RevisionError(f"{REVISION_KIND} {name or '(unnamed)'}: {where}: {problem}")


def _string(item: Mapping[str, Any], key: str, name: str, where: str, *, required: bool) -> str:
    value = item.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value):
        raise _field_error(name, f"{where}.{key}", "must be a non-empty string")
    return value


@dataclass(frozen=True)
class Revision:
    """One revision of a parent: its name, its parent patch, the children that belong to it
    (per (apiGroup, kind): sorted relative names) and the object as observed (None when it is
    new and not created yet)."""

    name: str
    patch: dict[str, Any]
    children: dict[GroupKind, tuple[str, ...]] = field(default_factory=dict)
    raw: Obj | None = None

    @classmethod
    def new(cls, parent_resource: ResourceInfo, parent: Obj, patch: dict[str, Any]) -> Revision:
        return cls(revision_name(parent_resource, uid_of(parent), patch), copy.deepcopy(patch))

    @classmethod
    def from_object(cls, obj: Obj) -> Revision:
        """Read an observed ControllerRevision; RevisionError (a ValueError) names the field."""
        if not isinstance(obj, dict):
            raise RevisionError(f"{REVISION_KIND}: must be an object")
        name = name_of(obj)
        if not name:
            raise _field_error("", "metadata.name", "is required")
        if obj.get("apiVersion") != REVISION_API_VERSION:
            raise _field_error(
                name, "apiVersion", f"{obj.get('apiVersion')!r} is not {REVISION_API_VERSION}"
            )
        if obj.get("kind") != REVISION_KIND:
            raise _field_error(name, "kind", f"{obj.get('kind')!r} is not {REVISION_KIND}")
        patch = obj.get("parentPatch")
        if patch is None:
            patch = {}
        if not isinstance(patch, dict):
            raise _field_error(name, "parentPatch", "must be an object")
        raw_children = obj.get("children")
        if raw_children is None:
            raw_children = []
        if not isinstance(raw_children, list):
            raise _field_error(name, "children", "must be a list")
        children: dict[GroupKind, list[str]] = {}
        for i, item in enumerate(raw_children):
            where = f"children[{i}]"
            if not isinstance(item, dict):
                raise _field_error(name, where, "must be an object")
            group = _string(item, "apiGroup", name, where, required=False)
            kind = _string(item, "kind", name, where, required=True)
            names = item.get("names")
            if names is None:
                names = []
            if not isinstance(names, list):
                raise _field_error(name, f"{where}.names", "must be a list of strings")
            for j, child in enumerate(names):
                if not isinstance(child, str) or not child:
                    raise _field_error(name, f"{where}.names[{j}]", "must be a non-empty string")
            children.setdefault((group, kind), []).extend(names)
        return cls(name, copy.deepcopy(patch), normalize_children(children), obj)

    def names(self, group: str, kind: str) -> tuple[str, ...]:
        return self.children.get((group, kind), ())

    def with_children(self, children: Mapping[GroupKind, Iterable[str]]) -> Revision:
        return Revision(self.name, self.patch, normalize_children(children), self.raw)

    def children_list(self) -> list[dict[str, Any]]:
        """The `children` field: `[{apiGroup, kind, names}]` sorted by (apiGroup, kind)."""
        return [
            {"apiGroup": group, "kind": kind, "names": list(names)}
            for (group, kind), names in sorted(self.children.items())
            if names
        ]

    def to_object(
        self,
        parent: Obj,
        parent_resource: ResourceInfo,
        parent_selector_labels: Mapping[str, str],
    ) -> Obj:
        """The object to create (when new) or to update (the observed object with these
        children, our labels and our owner reference; the rest, such as resourceVersion and
        the parent patch, as observed)."""
        labels = revision_labels(parent_selector_labels, parent_resource)
        ref = owner_reference(parent)
        if self.raw is None:
            meta: dict[str, Any] = {"name": self.name}
            if namespace_of(parent):
                meta["namespace"] = namespace_of(parent)
            meta["labels"] = labels
            meta["ownerReferences"] = [ref]
            return {
                "apiVersion": REVISION_API_VERSION,
                "kind": REVISION_KIND,
                "metadata": meta,
                "parentPatch": copy.deepcopy(self.patch),
                "children": self.children_list(),
            }
        obj = copy.deepcopy(self.raw)
        meta = obj.setdefault("metadata", {})
        meta["labels"] = {**labels_of(obj), **labels}
        refs = [r for r in metadata(obj).get("ownerReferences") or [] if isinstance(r, dict)]
        if any(r.get("uid") == ref["uid"] for r in refs):
            refs = [ref if r.get("uid") == ref["uid"] else r for r in refs]
        else:
            refs.append(ref)
        meta["ownerReferences"] = refs
        obj["children"] = self.children_list()
        return obj


# -- child checks ---------------------------------------------------------------------------


def _conditions(child: Obj) -> list[dict[str, Any]]:
    status = child.get("status")
    conditions = status.get("conditions") if isinstance(status, dict) else None
    if not isinstance(conditions, list):
        return []
    return [c for c in conditions if isinstance(c, dict)]


def describe_check(check: ConditionCheck) -> str:
    """`Ready`, `Ready=True`, `Ready=True (reason PodCompleted)`."""
    text = check.type if check.status is None else f"{check.type}={check.status}"
    return text if check.reason is None else f"{text} (reason {check.reason})"


def failed_check(child: Obj, checks: Sequence[ConditionCheck]) -> ConditionCheck | None:
    """The first check the child does not pass, or None."""
    conditions = _conditions(child)
    for check in checks:
        found = next((c for c in conditions if c.get("type") == check.type), None)
        if (
            found is None
            or (check.status is not None and str(found.get("status")) != check.status)
            or (check.reason is not None and str(found.get("reason")) != check.reason)
        ):
            return check
    return None


def readiness_problem(
    child: Obj | None, method: UpdateMethod, checks: Sequence[ConditionCheck]
) -> str | None:
    """What the child still has to do before a rollout goes on (`to be created`, `to pass
    Ready=True`, ...), or None when it is ready."""
    if child is None:
        return "to be created"
    if is_deleting(child):
        return "to be deleted"
    if method is UpdateMethod.ROLLING_IN_PLACE:
        # Not every controller writes observedGeneration: only check it when it is there.
        status = child.get("status")
        observed = status.get("observedGeneration") if isinstance(status, dict) else None
        generation = metadata(child).get("generation")
        if (
            isinstance(observed, int)
            and not isinstance(observed, bool)
            and isinstance(generation, int)
            and observed < generation
        ):
            return f"to observe generation {generation} (observedGeneration is {observed})"
    check = failed_check(child, checks)
    if check is not None:
        return f"to pass {describe_check(check)}"
    return None
