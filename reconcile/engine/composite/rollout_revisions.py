"""Rolling updates, step 1: the latest revision (the parent's rolling fields now) and the live
revisions (the latest, and older ones that still have children of a rolling type); for each,
the parent as the sync hook must see it. And, once step 2 has decided, the ControllerRevision
writes that record it. The rules are `rollout.py`'s."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from reconcile.engine.actions import Action, ActionKind
from reconcile.engine.composite.revisions import (
    GroupKind,
    Revision,
    RevisionError,
    parent_patch,
    patched_parent,
    revision_name,
)
from reconcile.engine.composite.sync import ChildType
from reconcile.engine.responses import PlanError
from reconcile.objects.jsondata import json_equal
from reconcile.objects.meta import Obj, metadata, uid_of
from reconcile.objects.resource import ResourceInfo
from reconcile.records import dataclass


@dataclass(frozen=True)
class LiveRevision:
    """A revision the sync hook is called for, with the parent as the hook sees it (the
    parent's rolling fields replaced by the revision's patch)."""

    revision: Revision
    parent: Obj
    latest: bool

    @property
    def name(self) -> str:
        return self.revision.name


@dataclass(frozen=True)
class RevisionPlan:
    parent: Obj
    parent_resource: ResourceInfo
    field_paths: tuple[str, ...]
    selector_labels: dict[str, str]
    live: tuple[LiveRevision, ...]  # the latest first, then older ones, newest first
    retired: tuple[Revision, ...]  # observed but not live: plan_rollout deletes them

    @property
    def latest(self) -> Revision:
        return self.live[0].revision


def _rolling_group_kinds(child_types: Sequence[ChildType]) -> set[GroupKind]:
    return {
        (t.resource.group, t.resource.kind) for t in child_types if t.rule.update_method.rolling
    }


def _newest_first(revisions: list[Revision]) -> list[Revision]:
    by_name = sorted(revisions, key=lambda r: r.name)
    return sorted(
        by_name,
        key=lambda r: str(metadata(r.raw or {}).get("creationTimestamp") or ""),
        reverse=True,
    )


def plan_revisions(
    parent: Obj,
    parent_resource: ResourceInfo,
    field_paths: Sequence[str],
    observed_revisions: Sequence[Obj],
    child_types: Sequence[ChildType],
    selector_labels: Mapping[str, str],
) -> RevisionPlan:
    """The latest revision (observed with the same name, or with an equal patch, or new) and
    the live revisions: the latest, then every older one that still has a child of a rolling
    type not listed in a newer one. Observed revisions with the latest's patch are merged into
    it; they and the ones left without children are `retired`. A malformed revision is a
    PlanError: nothing is changed for the parent rather than losing its progress."""
    paths = tuple(field_paths) or ("spec",)
    patch = parent_patch(parent, paths)
    name = revision_name(parent_resource, uid_of(parent), patch)
    try:
        parsed = [Revision.from_object(obj) for obj in observed_revisions]
    except RevisionError as exc:
        raise PlanError(parent, [str(exc)]) from exc

    exact = [r for r in parsed if r.name == name]
    equal = sorted(
        (r for r in parsed if r.name != name and json_equal(r.patch, patch)),
        key=lambda r: r.name,
    )
    if exact:
        latest, duplicates = exact[0], equal
    elif equal:
        latest, duplicates = equal[0], equal[1:]
    else:
        latest, duplicates = Revision.new(parent_resource, parent, patch), []
    merged: dict[GroupKind, list[str]] = {}
    for revision in (latest, *duplicates):
        for group_kind, names in revision.children.items():
            merged.setdefault(group_kind, []).extend(names)
    latest = latest.with_children(merged)

    rolling = _rolling_group_kinds(child_types)
    seen = {(gk, n) for gk, names in latest.children.items() if gk in rolling for n in names}
    live = [LiveRevision(latest, parent, latest=True)]
    retired = list(duplicates)
    skip = {latest.name, *(r.name for r in duplicates)}
    for revision in _newest_first([r for r in parsed if r.name not in skip]):
        own = {
            (gk, n)
            for gk, names in revision.children.items()
            if gk in rolling
            for n in names
            if (gk, n) not in seen
        }
        if own:
            seen |= own
            live.append(
                LiveRevision(revision, patched_parent(parent, revision.patch, paths), latest=False)
            )
        else:
            retired.append(revision)
    return RevisionPlan(
        parent=parent,
        parent_resource=parent_resource,
        field_paths=paths,
        selector_labels=dict(selector_labels),
        live=tuple(live),
        retired=tuple(sorted(retired, key=lambda r: r.name)),
    )


def _change(before: Revision, after: Revision) -> str:
    def listed(revision: Revision) -> set[tuple[str, str]]:
        return {(kind, n) for (_, kind), names in revision.children.items() for n in names}

    old, new = listed(before), listed(after)
    changes = [f"+{k} {n}" for k, n in sorted(new - old)] + [
        f"-{k} {n}" for k, n in sorted(old - new)
    ]
    return "children " + ", ".join(changes) if changes else "labels and owner reference"


def revision_writes(
    revisions: RevisionPlan, after: Mapping[str, Revision], resource: ResourceInfo
) -> tuple[list[Action], dict[str, str]]:
    """In order: the latest revision (create / update), older ones that changed (update), then
    the deletes of older ones left without children and of retired ones (never the latest)."""
    parent, labels = revisions.parent, revisions.selector_labels
    first: list[Action] = []
    updates: list[Action] = []
    deletes: list[Action] = []
    written: dict[str, str] = {}
    for live in revisions.live:
        before, now = live.revision, after[live.name]
        obj = now.to_object(parent, revisions.parent_resource, labels)
        if before.raw is None:
            paths = ", ".join(revisions.field_paths)
            first.append(
                Action(ActionKind.CREATE, resource, None, obj, f"the parent's new {paths}")
            )
            written[live.name] = "create"
        elif not live.latest and not now.children:
            deletes.append(
                Action(ActionKind.DELETE, resource, before.raw, None, "no children left")
            )
            written[live.name] = "delete"
        elif not json_equal(obj, before.raw):
            action = Action(ActionKind.UPDATE, resource, before.raw, obj, _change(before, now))
            (first if live.latest else updates).append(action)
            written[live.name] = "update"
    for revision in revisions.retired:
        assert revision.raw is not None, "retired revisions were observed"
        reason = (
            "the latest revision's patch: merged into it"
            if json_equal(revision.patch, revisions.latest.patch)
            else "no children left"
        )
        deletes.append(Action(ActionKind.DELETE, resource, revision.raw, None, reason))
    return first + updates + deletes, written
