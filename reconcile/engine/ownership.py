"""ControllerRef rules: which candidate children a parent claims, adopts or releases."""

from __future__ import annotations

import copy
from dataclasses import field
from enum import StrEnum
from typing import Any

from reconcile.objects.meta import Obj, controller_ref, is_deleting, metadata, uid_of
from reconcile.objects.selectors import LabelSelector
from reconcile.records import dataclass


class Claim(StrEnum):
    OWNED = "owned"  # ours and matching: kept
    ADOPT = "adopt"  # an orphan that matches: becomes ours
    RELEASE = "release"  # ours but no longer matching: our owner reference is removed
    IGNORE = "ignore"  # someone else's, or not ours and not matching


def owner_reference(parent: Obj) -> dict[str, Any]:
    return {
        "apiVersion": parent["apiVersion"],
        "kind": parent["kind"],
        "name": metadata(parent)["name"],
        "uid": uid_of(parent),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def classify(parent: Obj, selector: LabelSelector, child: Obj) -> Claim:
    ref = controller_ref(child)
    matches = selector.matches(child)
    if ref is not None:
        if ref.get("uid") != uid_of(parent):
            return Claim.IGNORE
        if matches:
            return Claim.OWNED
        # A parent being deleted keeps what it has: releasing now would orphan mid-teardown.
        return Claim.IGNORE if is_deleting(parent) else Claim.RELEASE
    if not matches or is_deleting(parent) or is_deleting(child):
        return Claim.IGNORE
    return Claim.ADOPT


def with_owner(parent: Obj, child: Obj) -> Obj:
    """A copy of child with the parent's controller reference added."""
    adopted = copy.deepcopy(child)
    refs = [
        r for r in metadata(adopted).get("ownerReferences") or [] if r.get("uid") != uid_of(parent)
    ]
    adopted["metadata"]["ownerReferences"] = [*refs, owner_reference(parent)]
    return adopted


def without_owner(parent: Obj, child: Obj) -> Obj:
    """A copy of child with the parent's owner reference removed."""
    released = copy.deepcopy(child)
    refs = [
        r for r in metadata(released).get("ownerReferences") or [] if r.get("uid") != uid_of(parent)
    ]
    if refs:
        released["metadata"]["ownerReferences"] = refs
    else:
        released["metadata"].pop("ownerReferences", None)
    return released


@dataclass
class ClaimResult:
    """`observed` are the children as the hook sees them (adopted ones already carrying our
    owner reference); `adopted` maps their keys to the object as it is in the cluster."""

    observed: dict[str, Obj] = field(default_factory=dict)
    adopted: dict[str, Obj] = field(default_factory=dict)
    released: list[Obj] = field(default_factory=list)
    foreign: dict[str, Obj] = field(default_factory=dict)  # same key, someone else's


def claim(
    parent: Obj,
    selector: LabelSelector,
    candidates: list[Obj],
    key: Any,
) -> ClaimResult:
    """Sort the candidates of one child type; `key(obj)` gives the relative key."""
    result = ClaimResult()
    for child in candidates:
        verdict = classify(parent, selector, child)
        k = key(child)
        if verdict is Claim.OWNED:
            result.observed[k] = child
        elif verdict is Claim.ADOPT:
            result.observed[k] = with_owner(parent, child)
            result.adopted[k] = child
        elif verdict is Claim.RELEASE:
            result.released.append(child)
        else:
            result.foreign[k] = child
    return result
