"""Rolling updates for one parent: which revision each child belongs to, which child moves to
the latest revision next, and the ControllerRevision writes that record it.

Two steps, with the sync hook's calls in between (`kind.py` takes them in order):

1. `rollout_revisions.plan_revisions`: the latest revision (the parent's rolling fields now)
   and the live revisions (the latest, and older ones that still have children); for each, the
   parent as the sync hook must see it.
2. `roll`: each live revision's answer read (`sync.desired_children`), then `plan_rollout`:
   from those desired children, the observed children and the child rules, the revision writes
   (to execute BEFORE any child action), the desired children to hand to `sync.plan_parent`
   (each from the revision it belongs to), the parent's `Updated` condition and a summary; and
   the one answer they make (`rollout_response`).

Rules (Metacontroller's, level-triggered: every decision is made from the observed state and
the revisions alone):

* Only child types with a Rolling method are tracked in revisions; every other child follows
  the latest revision at once.
* A child listed in a revision belongs to it (the latest wins over older ones, newer older ones
  over older ones). A child listed nowhere belongs to the latest: new children are created
  there. A child the latest revision no longer desires is dropped from every revision (and
  deleted, wherever it is). A child deleted by someone else is recreated at its own revision.
* At most one child moves to the latest revision per call (children that already match the
  latest desired state move for free, they are not touched), and only when every child already
  on the latest revision exists, is up to date and ready. Children move in the order the latest
  revision's sync hook listed them (Metacontroller's: a CatSet lists its Pods highest first to
  roll them so); children it did not list come after, by child type then name (digits compared
  as numbers: web-2 before web-10). A child already disrupted on an older revision (missing,
  being deleted, not updated or not ready there) goes first, so that a parent change mid-rollout
  never takes a second child down.
* A move is written to the revisions before the child is touched, so a run killed in between
  finds the child on the latest revision but not updated: that child blocks every further move
  until it has been updated, and its desired state now comes from the latest revision.
* When the parent changes mid-rollout, the new latest revision takes children from any older
  revision; intermediate revisions are never rolled through, and deleted once empty.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import field
from enum import StrEnum
from typing import Any

from reconcile.engine.actions import Action
from reconcile.engine.composite.revisions import (
    REVISION_RESOURCE,
    GroupKind,
    Revision,
    readiness_problem,
)
from reconcile.engine.composite.rollout_revisions import RevisionPlan, revision_writes
from reconcile.engine.composite.sync import ChildType, ParentContext, desired_children
from reconcile.engine.ownership import ClaimResult
from reconcile.engine.responses import PlanError, SyncResponse
from reconcile.engine.rollout_summary import RevisionSummary, RolloutSummary
from reconcile.engine.writes import CLIENT_SIDE, ApplyStrategy
from reconcile.objects.meta import Obj, is_deleting, name_of
from reconcile.objects.resource import ResourceInfo
from reconcile.objects.selectors import LabelSelector
from reconcile.records import dataclass
from reconcile.specs.controller import UpdateMethod

UPDATED_CONDITION = "Updated"

# Desired or observed children of one parent: child type key -> relative name -> object.
ChildMap = Mapping[str, Mapping[str, Obj]]


class RolloutReason(StrEnum):
    ON_LATEST = "OnLatestRevision"
    PROGRESSING = "RolloutProgressing"
    WAITING = "RolloutWaiting"


# -- step 2: the rollout --------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class ChildRef:
    key: str  # the child type key, e.g. `Pod.v1`
    kind: str
    name: str  # the relative name

    def describe(self) -> str:
        return f"{self.kind} {self.name}"


@dataclass(frozen=True)
class Move:
    """A child recorded on the latest revision by this decision. `method` is how
    sync.plan_parent changes it (InPlace: updated now; Recreate: deleted now, created on
    a later pass); `changed` is False when it already matched and is not touched."""

    child: ChildRef
    from_revision: str
    to_revision: str
    method: UpdateMethod
    changed: bool = True


@dataclass
class RolloutPlan:
    """One rollout decision. Execute `writes` first, in order, and stop at the first failure;
    only then the child actions that `sync.plan_parent` derives from `desired` (with the
    child types of `apply_child_types`)."""

    latest: str
    writes: list[Action]
    desired: dict[str, dict[str, Obj]]  # child type key -> relative name -> desired object
    owners: dict[str, dict[str, str]]  # rolling child type key -> relative name -> revision
    moves: list[Move]
    condition: dict[str, str]
    summary: RolloutSummary
    waits: list[str] = field(default_factory=list)


def effective_method(method: UpdateMethod) -> UpdateMethod:
    """How sync.plan_parent changes a child of a rolling type: the rollout picks which
    revision's desired state it gets; changing it is then an in-place update or a recreate."""
    if method is UpdateMethod.ROLLING_IN_PLACE:
        return UpdateMethod.IN_PLACE
    if method is UpdateMethod.ROLLING_RECREATE:
        return UpdateMethod.RECREATE
    return method


def apply_child_types(child_types: Sequence[ChildType]) -> tuple[ChildType, ...]:
    """The child types to plan a rollout's children with (Rolling* -> InPlace / Recreate)."""
    return tuple(
        dataclasses.replace(
            t,
            rule=dataclasses.replace(t.rule, update_method=effective_method(t.rule.update_method)),
        )
        for t in child_types
    )


def _natural(name: str) -> tuple[list[Any], str]:
    parts: list[Any] = [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]
    return parts, name


def _names(revision: Revision, kinds: Mapping[GroupKind, str]) -> list[str]:
    return [
        f"{kind} {name}"
        for (group, kind), names in revision.children.items()
        if (group, kind) in kinds
        for name in names
    ]


def plan_rollout(
    revisions: RevisionPlan,
    desired: Mapping[str, ChildMap],
    observed_children: ChildMap,
    child_types: Sequence[ChildType],
    *,
    move_unchanged: bool = True,
    revision_resource: ResourceInfo = REVISION_RESOURCE,
    strategy: ApplyStrategy = CLIENT_SIDE,
    hook_order: Sequence[tuple[str, str]] = (),
) -> RolloutPlan:
    """The rollout decision (see the module's rules). `desired` maps each live revision's name
    to its sync response's children (child type key -> relative name -> validated object);
    `observed_children` are the children the parent holds, keyed the same way.
    `move_unchanged=False` moves even children that already match one at a time.
    `hook_order`: (child type key, name) as the latest revision's sync hook listed them: the
    order children move in."""
    missing = [live.name for live in revisions.live if live.name not in desired]
    if missing:
        raise ValueError(f"no desired children for revision(s) {', '.join(missing)}")
    rollout = _Rollout(revisions, desired, observed_children, child_types, strategy, hook_order)
    if move_unchanged:
        rollout.move_unchanged()
    was_pending = bool(rollout.pending())
    blocker = rollout.blocker()
    condition, waits = rollout.decide(blocker)
    return rollout.plan(revision_resource, condition, waits, blocker if was_pending else None)


Child = tuple[str, str]  # (child type key, relative name)


class _Rollout:
    """One decision's state: which revision each child of a rolling type belongs to
    (`owners`), and the moves made so far."""

    def __init__(
        self,
        revisions: RevisionPlan,
        desired: Mapping[str, ChildMap],
        observed_children: ChildMap,
        child_types: Sequence[ChildType],
        strategy: ApplyStrategy,
        hook_order: Sequence[Child] = (),
    ) -> None:
        self.revisions, self.desired, self.observed_children = revisions, desired, observed_children
        self.child_types, self.strategy = child_types, strategy
        self.latest = revisions.latest.name
        self.order = {t.key: i for i, t in enumerate(child_types)}
        self.rank = {child: i for i, child in reversed(list(enumerate(hook_order)))}
        self.rolling = {t.key: t for t in child_types if t.rule.update_method.rolling}
        self.moves: list[Move] = []
        self.owners = self._owners()

    def wanted(self, revision: str, key: str) -> Mapping[str, Obj]:
        return self.desired[revision].get(key) or {}

    def observed(self, key: str, name: str) -> Obj | None:
        return (self.observed_children.get(key) or {}).get(name)

    def ref(self, key: str, name: str) -> ChildRef:
        return ChildRef(key, self.rolling[key].resource.kind, name)

    def ordered(self, children: Sequence[Child]) -> list[Child]:
        """In the order the latest sync hook listed them (Metacontroller's rolling order);
        children it did not list after, by child type then name."""
        last = len(self.rank)
        return sorted(
            children, key=lambda k: (self.rank.get(k, last), self.order[k[0]], _natural(k[1]))
        )

    def _owners(self) -> dict[Child, str]:
        """A child stays with the newest live revision that lists it and whose desired state
        (and the latest's) still has it; a new child belongs to the latest."""
        by_group_kind: dict[GroupKind, ChildType] = {}
        for t in self.child_types:
            by_group_kind.setdefault((t.resource.group, t.resource.kind), t)
        owners: dict[Child, str] = {}
        for live in self.revisions.live:
            for group_kind, names in live.revision.children.items():
                child_type = by_group_kind.get(group_kind)
                if child_type is None or child_type.key not in self.rolling:
                    continue
                for name in names:
                    child = (child_type.key, name)
                    if (
                        child not in owners
                        and name in self.wanted(self.latest, child_type.key)
                        and name in self.wanted(live.name, child_type.key)
                    ):
                        owners[child] = live.name
        for key in self.rolling:
            for name in self.wanted(self.latest, key):
                owners.setdefault((key, name), self.latest)
        return owners

    def pending(self) -> list[Child]:
        return self.ordered([c for c, r in self.owners.items() if r != self.latest])

    def move(self, child: Child, changed: bool) -> None:
        method = effective_method(self.rolling[child[0]].rule.update_method)
        self.moves.append(Move(self.ref(*child), self.owners[child], self.latest, method, changed))
        self.owners[child] = self.latest

    def move_unchanged(self) -> None:
        """Children that already match the latest's desired state move at once."""
        for child in self.pending():
            current = self.observed(*child)
            if (
                current is not None
                and not is_deleting(current)
                and self.strategy.up_to_date(current, self.wanted(self.latest, child[0])[child[1]])
            ):
                self.move(child, changed=False)

    def problem(self, child: Child) -> str | None:
        """What the child lacks at the revision it belongs to, or None when it is settled."""
        key, name = child
        current = self.observed(key, name)
        rule = self.rolling[key].rule
        if (
            current is not None
            and not is_deleting(current)
            and not self.strategy.up_to_date(current, self.wanted(self.owners[child], key)[name])
        ):
            return "to be updated"
        return readiness_problem(current, rule.update_method, rule.status_checks)

    def blocker(self) -> str | None:
        """The gate: every child already on the latest revision exists, is updated and
        ready; else what the first one that is not waits for."""
        for child in self.ordered([c for c, r in self.owners.items() if r == self.latest]):
            found = self.problem(child)
            if found is not None:
                return f"waiting for {self.ref(*child).describe()} {found}"
        return None

    def decide(self, blocker: str | None) -> tuple[dict[str, str], list[str]]:
        """The `Updated` condition and the waits, moving one child when the gate is open."""
        pending = self.pending()
        if not pending:
            latest = f"latest ControllerRevision: {self.latest}"
            return _condition(RolloutReason.ON_LATEST, latest), []
        if blocker is not None:
            return _condition(RolloutReason.WAITING, blocker), [blocker]
        # A child that is already disrupted at its older revision (e.g. mid-update on a
        # revision the parent has since left) goes first: it is down anyway, and moving
        # another one would take a second child down.
        chosen = next((c for c in pending if self.problem(c) is not None), pending[0])
        self.move(chosen, changed=True)
        updating = f"updating {self.ref(*chosen).describe()}"
        return _condition(RolloutReason.PROGRESSING, updating), []

    def plan(
        self,
        revision_resource: ResourceInfo,
        condition: dict[str, str],
        waits: list[str],
        waiting: str | None,
    ) -> RolloutPlan:
        """The revisions after this decision, the writes that get them there, and each
        child's desired state at the revision it belongs to."""
        revisions, latest, rolling = self.revisions, self.latest, self.rolling
        children: dict[str, dict[GroupKind, list[str]]] = {live.name: {} for live in revisions.live}
        for (key, name), revision in self.owners.items():
            group_kind = (rolling[key].resource.group, rolling[key].resource.kind)
            children[revision].setdefault(group_kind, []).append(name)
        after = {
            live.name: live.revision.with_children(children[live.name]) for live in revisions.live
        }
        writes, written = revision_writes(revisions, after, revision_resource)
        out: dict[str, dict[str, Obj]] = {}
        owner_map: dict[str, dict[str, str]] = {}
        for t in self.child_types:
            if t.key in rolling:
                mine = self.ordered([c for c in self.owners if c[0] == t.key])
                out[t.key] = {n: self.wanted(self.owners[(k, n)], k)[n] for k, n in mine}
                owner_map[t.key] = {n: self.owners[(k, n)] for k, n in mine}
            else:
                out[t.key] = dict(self.wanted(latest, t.key))
        kinds = {(t.resource.group, t.resource.kind): t.resource.kind for t in rolling.values()}
        summaries = [
            RevisionSummary(name, name == latest, tuple(_names(rev, kinds)), written.get(name))
            for name, rev in after.items()
        ] + [RevisionSummary(r.name, False, (), "delete") for r in revisions.retired]
        summary = RolloutSummary(
            latest=latest,
            revisions=tuple(summaries),
            on_latest=sum(1 for r in self.owners.values() if r == latest),
            total=len(self.owners),
            moved=tuple(m.child.describe() for m in self.moves),
            waiting=waiting,
        )
        return RolloutPlan(latest, writes, out, owner_map, self.moves, condition, summary, waits)


def _condition(reason: RolloutReason, message: str) -> dict[str, str]:
    status = "True" if reason is RolloutReason.ON_LATEST else "False"
    return {"type": UPDATED_CONDITION, "status": status, "reason": reason.value, "message": message}


# -- the merged response --------------------------------------------------------------------


def set_condition(status: Mapping[str, Any] | None, condition: Mapping[str, str]) -> dict[str, Any]:
    """A copy of status with the condition replacing the one of the same type (or added)."""
    result = copy.deepcopy(dict(status or {}))
    conditions = result.get("conditions")
    if not isinstance(conditions, list):
        conditions = []
    kept = [
        c for c in conditions if not (isinstance(c, dict) and c.get("type") == condition["type"])
    ]
    result["conditions"] = [*kept, dict(condition)]
    return result


def rollout_response(plan: RolloutPlan, responses: Mapping[str, SyncResponse]) -> SyncResponse:
    """One sync response for sync.plan_parent: the latest revision's status with the
    `Updated` condition, the rollout's desired children, the smallest positive
    resyncAfterSeconds of all revisions, finalized only when every revision says so."""
    latest = responses[plan.latest]
    resyncs = [r.resync_after for r in responses.values() if r.resync_after]
    return SyncResponse(
        status=set_condition(latest.status, plan.condition),
        children=[
            copy.deepcopy(obj) for objects in plan.desired.values() for obj in objects.values()
        ],
        resync_after=min(resyncs) if resyncs else None,
        finalized=all(r.finalized for r in responses.values()),
    )


def roll(
    ctx: ParentContext,
    selector: LabelSelector,
    claims: Mapping[str, ClaimResult],
    revisions: RevisionPlan,
    responses: Sequence[SyncResponse],
    revision_resource: ResourceInfo = REVISION_RESOURCE,
) -> tuple[SyncResponse, RolloutPlan]:
    """From the sync hook's answer for each live revision (in `revisions.live`'s order): the
    rollout decision and the one answer it makes. A revision's unusable children stop the
    parent (PlanError naming the revision)."""
    desired: dict[str, dict[str, dict[str, Obj]]] = {}
    answers: dict[str, SyncResponse] = {}
    for live, response in zip(revisions.live, responses, strict=True):
        children, problems = desired_children(
            dataclasses.replace(ctx, parent=live.parent), selector, response
        )
        if problems:
            raise PlanError(ctx.parent, [f"revision {live.name}: {p}" for p in problems])
        desired[live.name], answers[live.name] = children, response
    rollout = plan_rollout(
        revisions,
        desired,
        {k: c.observed for k, c in claims.items()},
        ctx.owned,
        revision_resource=revision_resource,
        strategy=ctx.strategy,
        hook_order=[
            (f"{raw['kind']}.{raw['apiVersion']}", name_of(raw))
            for raw in answers[revisions.latest.name].children
        ],
    )
    return rollout_response(rollout, answers), rollout
