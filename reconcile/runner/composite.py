"""One pass of one CompositeController: resolve its resources, then sync every parent."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import dataclass, replace
from typing import Any

from reconcile.cluster.errors import ApiError
from reconcile.cluster.protocol import Cluster
from reconcile.engine.composite import (
    ChildType,
    Context,
    Lookup,
    Mode,
    PlanError,
    claim_children,
    customize_request,
    desired_children,
    finalizer_actions,
    mode_for,
    parent_selector,
    plan_parent,
    sync_request,
)
from reconcile.engine.ownership import ClaimResult
from reconcile.engine.related import parse_customize_response
from reconcile.engine.responses import (
    SyncResponse,
    parse_sync_response,
)
from reconcile.objects.meta import Obj, identity, name_of, namespace_of, uid_of
from reconcile.objects.resource import ResourceInfo
from reconcile.objects.selectors import LabelSelector
from reconcile.results import ParentResult
from reconcile.runner.controller_pass import ControllerKind, PassEnv, Refused
from reconcile.runner.hookcall import call_hook
from reconcile.runner.overlaps import refuse_shared_objects
from reconcile.runner.related import related_objects
from reconcile.runner.resolving import (
    ControllerError,
    discover,
    parent_resource,
    within_parent_scope,
)
from reconcile.specs.composite import CompositeController
from reconcile.specs.hooks import HookSpec


@dataclass(frozen=True)
class Resolved:
    parent: ResourceInfo
    children: tuple[ChildType, ...]
    revisions: ResourceInfo | None = None  # set when some child rule rolls out


def resolve(cluster: Cluster, controller: CompositeController) -> Resolved:
    where = f"CompositeController {controller.name}"
    rule = controller.parent
    parent = parent_resource(cluster, where, rule.api_version, rule.resource)
    revisions: ResourceInfo | None = None
    if controller.rolling:
        from reconcile.engine.revisions import REVISION_API_VERSION  # rolling updates only

        if not parent.namespaced:
            raise ControllerError(
                f"{where}: spec.childResources: rolling updates need a namespaced parent "
                "(ControllerRevisions live in the parent's namespace)"
            )
        try:
            revisions = cluster.discover(REVISION_API_VERSION, "controllerrevisions")
        except ApiError as exc:
            raise ControllerError(
                f"{where}: rolling updates need the ControllerRevision CRD "
                f"(kubectl apply -k manifests/crds): {exc.message}"
            ) from exc
    children = []
    for i, child_rule in enumerate(controller.children):
        field = f"spec.childResources[{i}]"
        info = discover(cluster, where, field, child_rule.api_version, child_rule.resource)
        within_parent_scope(where, field, parent, info)
        children.append(ChildType(child_rule, info))
    return Resolved(parent, tuple(children), revisions)


@dataclass(frozen=True)
class ParentWork:
    parent: Obj
    mode: Mode
    rivals: tuple[str, ...] = ()  # other controllers selecting the parent too


class CompositeKind(ControllerKind[ParentWork]):
    """A CompositeController's part of a pass: its parents by mode, each synced through its
    sync or finalize hook (and rolled out when a child rule rolls)."""

    kind = "CompositeController"

    def __init__(
        self,
        env: PassEnv,
        controller: CompositeController,
        contested: Mapping[str, list[str]] | None = None,
    ) -> None:
        """`contested`: parent uid -> the controllers that select it; such a parent gets an
        error naming them all."""
        from_cluster = controller.raw if controller.source == "cluster" else None
        super().__init__(env, controller.name, controller.resync_period, from_cluster)
        self.controller = controller
        self.contested = contested or {}
        self.cluster, self.snapshot, self.executor = env.cluster, env.snapshot, env.executor

    def prepare(self, scope: ExitStack) -> list[ParentWork]:
        resolved = resolve(self.cluster, self.controller)
        self.resolved = replace(resolved, children=self.env.with_schemas(resolved.children))
        children = [t.resource for t in self.resolved.children]
        refuse_shared_objects(self.where, "spec.childResources", children, self.snapshot)
        work = []
        for parent in self.snapshot.objects(self.resolved.parent):
            mode = mode_for(self.controller, parent)
            if mode is Mode.SKIP or not self.env.shard.owns(parent):
                continue
            rivals = self.contested.get(uid_of(parent), []) if mode is Mode.SYNC else []
            work.append(ParentWork(parent, mode, tuple(rivals)))
        return work

    def parent(self, work: ParentWork) -> Obj:
        return work.parent

    def begin(self, work: ParentWork) -> ParentResult:
        return ParentResult(self.name, identity(work.parent), work.mode.value)

    def sync(self, work: ParentWork, result: ParentResult) -> None:
        if work.rivals:
            raise Refused(
                f"selected by more than one CompositeController ({', '.join(work.rivals)}: "
                "their parentResource.labelSelectors all match); none of them syncs it until "
                "the selectors are made disjoint"
            )
        resolved = self.resolved
        ctx = Context(
            self.controller,
            work.parent,
            resolved.parent,
            resolved.children,
            self.executor.strategy,
            stamp_generation=self.env.stamps_generation(resolved.parent),
            status_schema=self.env.parent_schema(resolved.parent),
        )
        if resolved.revisions is not None and work.mode is Mode.SYNC:
            self._sync_rolling(ctx, resolved.revisions, result)
        else:
            # A parent being finalized tears down at its current spec: no rollout then.
            self._sync_parent(ctx, work.mode, result)

    def after(self, work: ParentWork, result: ParentResult) -> None:
        if result.rollout is not None and result.rollout.moved:
            self.executor.record_event(
                work.parent, "RolloutStep", result.rollout.describe(), normal=True
            )

    def _sync_parent(self, ctx: Context, mode: Mode, result: ParentResult) -> None:
        if mode is Mode.REMOVE_FINALIZER:
            self.executor.execute(finalizer_actions(ctx, mode), result.actions)
            return
        selector = parent_selector(ctx)
        related = self._related(ctx, result)
        claims = self._claims(ctx, selector)
        finalizing = mode is Mode.FINALIZE
        hook = ctx.controller.hooks.finalize if finalizing else ctx.controller.hooks.sync
        assert hook is not None
        request = sync_request(ctx, claims, related, finalizing, uniform=hook.uniform_keys)
        response = self._call(hook, request, result)
        sync = parse_sync_response(response, hook.name, strict=hook.strict)
        result.resync_after = sync.resync_after
        self.env.note_dropped_status(ctx.parent_resource, self.name, sync.status)
        plan = plan_parent(ctx, mode, selector, claims, sync, self._lookup(ctx))
        self.env.note_dropped_fields(self.name, plan.dropped)
        result.waits = plan.waits
        self.executor.execute(plan.actions, result.actions, together=True)

    def _claims(self, ctx: Context, selector: LabelSelector) -> dict[str, ClaimResult]:
        """Claims over the parent's own children and its namespace's orphans."""
        namespace = namespace_of(ctx.parent) if ctx.namespaced else None
        candidates = {
            t.key: self.snapshot.claim_candidates(t.resource, uid_of(ctx.parent), namespace)
            for t in ctx.child_types
        }
        return claim_children(ctx, selector, candidates)

    def _sync_rolling(self, ctx: Context, revisions: ResourceInfo, result: ParentResult) -> None:
        """Sync with rolling updates: the sync hook once per live revision, the rollout
        decision, the revision writes (the recorded intent), then the children's actions."""
        # Imported here: only controllers with rolling updates need them.
        from reconcile.engine.revisions import claim_revisions, selector_labels
        from reconcile.engine.rollout import apply_child_types, plan_rollout, rollout_response
        from reconcile.engine.rollout_revisions import plan_revisions

        selector = parent_selector(ctx)
        related = self._related(ctx, result)
        claims = self._claims(ctx, selector)
        namespace = namespace_of(ctx.parent)
        owned = claim_revisions(
            ctx.parent,
            ctx.parent_resource,
            selector,
            self.snapshot.in_namespace(revisions, namespace),
        )
        plan = plan_revisions(
            ctx.parent,
            ctx.parent_resource,
            ctx.controller.parent.revision_field_paths,
            owned,
            ctx.child_types,
            selector_labels(selector),
        )
        hook = ctx.controller.hooks.sync
        responses: dict[str, SyncResponse] = {}
        desired: dict[str, dict[str, dict[str, Obj]]] = {}
        for live in plan.live:
            seen_as = replace(ctx, parent=live.parent)
            request = sync_request(seen_as, claims, related, False, uniform=hook.uniform_keys)
            answer = self._call(hook, request, result)
            responses[live.name] = parse_sync_response(answer, hook.name, strict=hook.strict)
            children, problems = desired_children(seen_as, selector, responses[live.name])
            if problems:
                raise PlanError(ctx.parent, [f"revision {live.name}: {p}" for p in problems])
            desired[live.name] = children
        rollout = plan_rollout(
            plan,
            desired,
            {k: c.observed for k, c in claims.items()},
            ctx.child_types,
            revision_resource=revisions,
            strategy=ctx.strategy,
            hook_order=[
                (f"{raw['kind']}.{raw['apiVersion']}", name_of(raw))
                for raw in responses[plan.latest.name].children
            ],
        )
        result.rollout = rollout.summary
        response = rollout_response(rollout, responses)
        result.resync_after = response.resync_after
        self.env.note_dropped_status(ctx.parent_resource, self.name, response.status)
        children_plan = plan_parent(
            replace(ctx, child_types=apply_child_types(ctx.child_types)),
            Mode.SYNC,
            selector,
            claims,
            response,
            self._lookup(ctx),
        )
        self.env.note_dropped_fields(self.name, children_plan.dropped)
        result.waits = rollout.waits + children_plan.waits
        # The revisions first: if one write fails, no child is touched (Executor stops).
        self.executor.execute(rollout.writes + children_plan.actions, result.actions)

    def _call(
        self, hook: HookSpec, request: dict[str, Any], result: ParentResult
    ) -> dict[str, Any]:
        response: dict[str, Any] = call_hook(self.env.hooks, hook, request, result)
        return response

    def _lookup(self, ctx: Context) -> Lookup:
        resources = {t.key: t.resource for t in ctx.child_types}

        def lookup(key: str, namespace: str, name: str) -> Obj | None:
            return self.snapshot.find(resources[key], namespace, name)

        return lookup

    def _related(self, ctx: Context, result: ParentResult) -> dict[str, dict[str, Obj]]:
        hook = ctx.controller.hooks.customize
        if hook is None:
            return {}
        answer = self._call(hook, customize_request(ctx), result)
        rules = parse_customize_response(answer, strict=hook.strict)
        return related_objects(
            self.cluster,
            self.snapshot,
            rules,
            ctx.parent,
            ctx.namespaced,
            uniform=hook.uniform_keys,
        )
