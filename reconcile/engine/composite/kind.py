"""A CompositeController's pieces of a pass (`engine/flow.py`), in the order the pass takes
them: its resources (the parent, the children, and ControllerRevisions when a child rule
rolls); its parents, each with its mode (`finalizers.py`); one parent's selector, claims and
live revisions; its sync (or finalize) hook called once per live revision; the answers as one
(`sync_revisions`); and the plan (`sync.plan_parent`)."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from reconcile.engine.composite.sync import (
    ChildType,
    ParentContext,
    claim_children,
    finalizer,
    mode_for,
    parent_selector,
    plan_parent,
    sync_request,
)
from reconcile.engine.finalizers import Mode
from reconcile.engine.flow import (
    Context,
    ControllerError,
    Customize,
    Facts,
    HookRequest,
    Lookup,
    Named,
    ParentKind,
    ParentPlan,
    Plan,
    Resolved,
    Selected,
    View,
    customize,
    lookup_in,
    within_parent_scope,
)
from reconcile.engine.ownership import ClaimResult
from reconcile.engine.responses import SyncResponse, parse_sync_response
from reconcile.objects.meta import Obj, namespace_of, uid_of
from reconcile.objects.resource import ResourceInfo
from reconcile.objects.selectors import LabelSelector
from reconcile.records import dataclass
from reconcile.specs.composite import CompositeController

if TYPE_CHECKING:  # the rollout engine is loaded by controllers with rolling updates only
    from reconcile.engine.composite.rollout import RolloutPlan
    from reconcile.engine.composite.rollout_revisions import RevisionPlan

PARENT = "spec.parentResource"
# ControllerRevisions are needed when a child rule rolls: a missing CRD is that field's error
REVISIONS = "spec.childResources"


@dataclass(frozen=True)
class Seen:
    """What one parent's sync observed. `revisions`: when a child rule rolls and the parent
    syncs (a parent being finalized tears down at its current spec, without a rollout)."""

    ctx: ParentContext
    mode: Mode
    selector: LabelSelector | None = None  # None: only the finalizer is taken off
    claims: Mapping[str, ClaimResult] = dataclasses.field(default_factory=dict)
    revisions: RevisionPlan | None = None
    lookup: Lookup | None = None


@dataclass(frozen=True)
class Merged:
    """The sync hook's answers as one, and the rollout that merged them (if any)."""

    response: SyncResponse
    rollout: RolloutPlan | None = None

    @property
    def status(self) -> Mapping[str, Any] | None:
        return self.response.status

    @property
    def resync_after(self) -> float | None:
        return self.response.resync_after


class CompositeKind(ParentKind[CompositeController, Seen, SyncResponse, Merged]):
    """A CompositeController's parents by mode, each synced through its sync or finalize hook
    (and rolled out when a child rule rolls)."""

    kind = "CompositeController"

    def __init__(
        self, controller: CompositeController, contested: Mapping[str, list[str]] | None = None
    ) -> None:
        """`contested`: parent uid -> the controllers that select it; such a parent gets an
        error naming them all."""
        super().__init__(controller)
        self.contested = contested or {}

    def named(self) -> list[Named]:
        rule = self.controller.parent
        named = [Named(PARENT, rule.api_version, rule.resource, parent=True)]
        if self.controller.rolling:
            from reconcile.engine.composite.revisions import REVISION_API_VERSION

            needed_for = (
                "rolling updates need the ControllerRevision CRD (kubectl apply -k manifests/crds)"
            )
            named.append(
                Named(REVISIONS, REVISION_API_VERSION, "controllerrevisions", needed_for=needed_for)
            )
        return named + [
            Named(f"spec.childResources[{i}]", child.api_version, child.resource, owned=True)
            for i, child in enumerate(self.controller.children)
        ]

    def bind(self, resolved: Resolved) -> None:
        self.parent_type = resolved.found[PARENT]
        children = [n for n in self.named() if n.owned]
        self.child_types: tuple[ChildType, ...] = tuple(
            resolved.owned(named, rule)
            for named, rule in zip(children, self.controller.children, strict=True)
        )
        for named, child_type in zip(children, self.child_types, strict=True):
            within_parent_scope(self.where, named.field, self.parent_type, child_type.resource)
        self.revision_type = resolved.found.get(REVISIONS)
        if self.revision_type is not None and not self.parent_type.namespaced:
            raise ControllerError(
                f"{self.where}: spec.childResources: rolling updates need a namespaced parent "
                "(ControllerRevisions live in the parent's namespace)"
            )

    def select(self, view: View) -> list[Selected]:
        """Its parents by mode; one another controller selects too is refused (neither would
        let the other's children be)."""
        selected = []
        for parent in view.objects(self.parent_type):
            mode = mode_for(self.controller, parent)
            if mode is Mode.SKIP:
                continue
            rivals = self.contested.get(uid_of(parent), []) if mode is Mode.SYNC else []
            refused = (
                f"selected by more than one CompositeController ({', '.join(rivals)}: their "
                "parentResource.labelSelectors all match); none of them syncs it until the "
                "selectors are made disjoint"
                if rivals
                else ""
            )
            selected.append(Selected(parent, self.parent_type, mode, refused))
        return selected

    def observe(self, selected: Selected, view: View, facts: Facts) -> Seen:
        # the class itself: a call through the generic alias costs as much again
        ctx: ParentContext = Context(
            self.controller,
            selected.parent,
            self.parent_type,
            self.child_types,
            facts.strategy,
            facts.stamp_generation,
            facts.status_schema,
        )
        mode = selected.mode
        if mode is Mode.REMOVE_FINALIZER:
            return Seen(ctx, mode)
        selector = parent_selector(ctx)
        uid = uid_of(ctx.parent)
        namespace = namespace_of(ctx.parent) if ctx.namespaced else None
        candidates = {t.key: view.claim_candidates(t.resource, uid, namespace) for t in ctx.owned}
        claims = claim_children(ctx, selector, candidates)
        lookup = lookup_in(view, ctx.owned)
        if self.revision_type is None or mode is not Mode.SYNC:
            return Seen(ctx, mode, selector, claims, None, lookup)
        from reconcile.engine.composite.revisions import claim_revisions, selector_labels
        from reconcile.engine.composite.rollout_revisions import plan_revisions

        owned_revisions = claim_revisions(
            ctx.parent,
            ctx.parent_resource,
            selector,
            view.in_namespace(self.revision_type, namespace_of(ctx.parent)),
        )
        revisions = plan_revisions(
            ctx.parent,
            ctx.parent_resource,
            self.controller.parent.revision_field_paths,
            owned_revisions,
            ctx.owned,
            selector_labels(selector),
        )
        return Seen(ctx, mode, selector, claims, revisions, lookup)

    def related(self, seen: Seen) -> Customize | None:
        if seen.mode is Mode.REMOVE_FINALIZER:
            return None
        ctx = seen.ctx
        hook = self.controller.hooks.customize
        return customize(hook, self.controller.raw, ctx.parent, ctx.namespaced)

    def requests(
        self, seen: Seen, related: Mapping[str, Mapping[str, Obj]]
    ) -> list[HookRequest[SyncResponse]]:
        """The sync hook once per live revision, seeing the parent as that revision has it
        (without a rollout, once); the finalize hook once."""
        if seen.mode is Mode.REMOVE_FINALIZER:
            return []
        finalizing = seen.mode is Mode.FINALIZE
        hook = self.controller.hooks.finalize if finalizing else self.controller.hooks.sync
        assert hook is not None  # a parent is finalized only with a finalize hook
        parse = functools.partial(parse_sync_response, hook=hook.name, strict=hook.strict)
        revisions = seen.revisions.live if seen.revisions is not None else ()
        parents = [live.parent for live in revisions] or [seen.ctx.parent]
        return [
            HookRequest(
                hook,
                sync_request(
                    dataclasses.replace(seen.ctx, parent=parent),
                    seen.claims,
                    related,
                    finalizing,
                    uniform=hook.uniform_keys,
                ),
                parse,
            )
            for parent in parents
        ]

    def respond(self, seen: Seen, answers: Sequence[SyncResponse | None]) -> Merged:
        return sync_revisions(seen, [a for a in answers if a is not None], self.revision_type)

    def plan(self, seen: Seen, response: Merged) -> ParentPlan:
        ctx = seen.ctx
        if seen.mode is Mode.REMOVE_FINALIZER:
            ours = finalizer(self.controller)
            return ParentPlan([Plan(ours.sync(ctx.parent_resource, ctx.parent, seen.mode))])
        assert seen.selector is not None
        rollout = response.rollout
        if rollout is not None:
            from reconcile.engine.composite.rollout import apply_child_types

            ctx = dataclasses.replace(ctx, owned=apply_child_types(ctx.owned))
        plan = plan_parent(
            ctx, seen.mode, seen.selector, seen.claims, response.response, seen.lookup
        )
        if rollout is None:
            return ParentPlan([plan], together=True)
        # The revisions first: if one write fails, no child is touched (the executor stops).
        plan.actions = rollout.writes + plan.actions
        plan.waits = rollout.waits + plan.waits
        return ParentPlan([plan], rollout=rollout.summary)


def sync_revisions(
    seen: Seen, responses: Sequence[SyncResponse], revision_type: ResourceInfo | None
) -> Merged:
    """The hook's answers as one (Metacontroller's `syncRevisions`): without a rollout (no
    child rule rolls, or the parent is being finalized) the one answer as it is; else each live
    revision's children, the rollout's decision, and the answer it makes of them."""
    if seen.revisions is None:
        if not responses:  # only the finalizer is taken off: no hook was called
            return Merged(SyncResponse())
        (response,) = responses
        return Merged(response)
    from reconcile.engine.composite.rollout import roll

    assert seen.selector is not None and revision_type is not None
    response, rollout = roll(
        seen.ctx, seen.selector, seen.claims, seen.revisions, responses, revision_type
    )
    return Merged(response, rollout)
