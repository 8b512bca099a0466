"""One pass of one CompositeController: resolve its resources, then sync every parent."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

from reconcile.api.composite import CompositeController
from reconcile.api.hooks import HookSpec
from reconcile.budget import Budget, BudgetExhausted
from reconcile.cluster.errors import ApiError, is_transient
from reconcile.cluster.protocol import Cluster
from reconcile.config import Shard
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
from reconcile.engine.responses import (
    ResponseError,
    SyncResponse,
    parse_customize_response,
    parse_sync_response,
)
from reconcile.engine.revisions import (
    REVISION_API_VERSION,
    claim_revisions,
    selector_labels,
)
from reconcile.engine.rollout import (
    apply_child_types,
    plan_revisions,
    plan_rollout,
    rollout_response,
)
from reconcile.hooks import HookCaller, HookError
from reconcile.objects.meta import Obj, identity, namespace_of, uid_of
from reconcile.objects.resource import ResourceInfo
from reconcile.objects.selectors import LabelSelector
from reconcile.runner.controller_pass import ControllerPass
from reconcile.runner.execute import Executor
from reconcile.runner.hookcall import call_hook
from reconcile.runner.progress import NoProgress, Progress
from reconcile.runner.related import related_objects
from reconcile.runner.resolving import (
    ControllerError,
    discover,
    parent_resource,
    within_parent_scope,
)
from reconcile.runner.results import ControllerResult, ParentResult
from reconcile.runner.snapshot import Snapshot


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


class CompositeRunner(ControllerPass):
    """Syncs the parents of one controller in one pass, `workers` at a time."""

    def __init__(
        self,
        cluster: Cluster,
        hooks: HookCaller,
        executor: Executor,
        snapshot: Snapshot,
        workers: int,
        progress: Progress | None = None,
        *,
        budget: Budget | None = None,
        shard: Shard | None = None,
    ) -> None:
        super().__init__(cluster, hooks, executor, snapshot, workers, budget=budget, shard=shard)
        self.progress = progress or NoProgress()

    def run(
        self, controller: CompositeController, contested: dict[str, list[str]] | None = None
    ) -> ControllerResult:
        """Sync every parent of `controller`, except those another controller selects too
        (`contested`: parent uid -> controller names), which get an error naming both."""
        result = ControllerResult(
            controller.name, resync_period=controller.resync_period, kind="CompositeController"
        )
        try:
            self.budget.check(f"CompositeController {controller.name}")
            resolved = resolve(self.cluster, controller)
            parents = self.snapshot.objects(resolved.parent)
        except BudgetExhausted:
            result.stopped = True  # the run stopped before this controller's turn
            return result
        except (ControllerError, ApiError) as exc:
            result.errors.append(str(exc))
            result.transient = is_transient(exc) or is_transient(exc.__cause__)
            return result
        work = [(p, mode_for(controller, p)) for p in parents if self.shard.owns(p)]
        work = [(p, m) for p, m in work if m is not Mode.SKIP]
        self.progress.start(controller.name, len(work))
        contested = contested or {}

        def sync(parent: Obj, mode: Mode) -> ParentResult | None:
            if self.budget.expired:
                return None  # counted as not synced: the run is stopping
            rivals = contested.get(uid_of(parent)) if mode is Mode.SYNC else None
            if rivals:
                return self._refuse_contested(controller, parent, mode, rivals)
            return self._sync(controller, resolved, parent, mode)

        if self.workers == 1 or len(work) <= 1:
            synced = [sync(p, m) for p, m in work]
        else:
            with ThreadPoolExecutor(self.workers, thread_name_prefix="parent") as pool:
                synced = list(pool.map(lambda pm: sync(*pm), work))
        result.parents = [p for p in synced if p is not None]
        result.not_synced = len(synced) - len(result.parents)
        return result

    def _refuse_contested(
        self, controller: CompositeController, parent: Obj, mode: Mode, rivals: list[str]
    ) -> ParentResult:
        result = ParentResult(controller.name, identity(parent), mode.value)
        result.errors.append(
            f"{result.parent}: selected by more than one CompositeController "
            f"({', '.join(rivals)}: their parentResource.labelSelectors all match); none of "
            "them syncs it until the selectors are made disjoint"
        )
        self.progress.advance()
        return result

    # -- one parent ----------------------------------------------------------------------------

    def _sync(
        self, controller: CompositeController, resolved: Resolved, parent: Obj, mode: Mode
    ) -> ParentResult:
        result = ParentResult(controller.name, identity(parent), mode.value)
        ctx = Context(
            controller, parent, resolved.parent, resolved.children, self.executor.strategy
        )
        try:
            if resolved.revisions is not None and mode is Mode.SYNC:
                self._sync_rolling(ctx, resolved.revisions, result)
            else:
                # A parent being finalized tears down at its current spec: no rollout then.
                self._sync_parent(ctx, mode, result)
        except BudgetExhausted as exc:
            result.interrupt(exc)
            self.progress.advance()
            return result
        except (HookError, ResponseError, PlanError, ApiError) as exc:
            self.executor.sync_failed(parent, result, str(exc), transient=is_transient(exc))
        except RecursionError:  # input nested deeper than some step can follow: its parent's
            self.executor.sync_failed(parent, result, "an object nested too deeply to process")
        if result.rollout is not None and result.rollout.moved:
            self.executor.record_event(
                parent, "RolloutStep", result.rollout.describe(), normal=True
            )
        self.executor.record_outcome(parent, result)
        self.progress.advance()
        return result

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
        response = self._call(hook, sync_request(ctx, claims, related, finalizing), result)
        sync = parse_sync_response(response, hook.name)
        result.resync_after = sync.resync_after
        plan = plan_parent(ctx, mode, selector, claims, sync, self._lookup(ctx))
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
            answer = self._call(hook, sync_request(seen_as, claims, related, False), result)
            responses[live.name] = parse_sync_response(answer, hook.name)
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
        )
        result.rollout = rollout.summary
        response = rollout_response(rollout, responses)
        result.resync_after = response.resync_after
        children_plan = plan_parent(
            replace(ctx, child_types=apply_child_types(ctx.child_types)),
            Mode.SYNC,
            selector,
            claims,
            response,
            self._lookup(ctx),
        )
        result.waits = rollout.waits + children_plan.waits
        # The revisions first: if one write fails, no child is touched (Executor stops).
        self.executor.execute(rollout.writes + children_plan.actions, result.actions)

    def _call(
        self, hook: HookSpec, request: dict[str, Any], result: ParentResult
    ) -> dict[str, Any]:
        response: dict[str, Any] = call_hook(self.hooks, hook, request, result)
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
        rules = parse_customize_response(self._call(hook, customize_request(ctx), result))
        return related_objects(self.cluster, self.snapshot, rules, ctx.parent, ctx.namespaced)
