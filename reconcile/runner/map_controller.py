"""One pass of one MapController: resolve its resources, then sync every parent.

A parent's map and tombstone hooks are called concurrently (`workers` at a time, across all
parents), each map key's writes run on their own, and the aggregated status is written last.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from reconcile.budget import BudgetExhausted
from reconcile.cluster.protocol import Cluster
from reconcile.engine.map_controller import (
    DetachedKey,
    KeyPlan,
    LiveKey,
    MapContext,
    MapInput,
    OutputType,
    aggregated_status,
    detached_input,
    input_selector,
    map_request,
    outputs_after,
    outputs_by_key,
    parse_outputs,
    plan_parent_outputs,
    select_inputs,
    status_action,
    tombstone_request,
)
from reconcile.engine.responses import ResponseError
from reconcile.hooks import HookError
from reconcile.objects.meta import Obj, identity, is_deleting, namespace_of, uid_of
from reconcile.objects.resource import ResourceInfo
from reconcile.results import ActionResult, ParentResult
from reconcile.runner.controller_pass import ControllerKind, PassEnv
from reconcile.runner.hookcall import call_hook
from reconcile.runner.overlaps import refuse_shared_objects
from reconcile.runner.resolving import (
    discover,
    parent_resource,
    within_parent_scope,
)
from reconcile.specs.map_controller import MapController

_T = TypeVar("_T")


@dataclass(frozen=True)
class Resolved:
    parent: ResourceInfo
    inputs: tuple[ResourceInfo, ...]
    outputs: tuple[OutputType, ...]


def resolve(cluster: Cluster, controller: MapController) -> Resolved:
    where = f"MapController {controller.name}"
    rule = controller.parent
    parent = parent_resource(cluster, where, rule.api_version, rule.resource)
    inputs = tuple(
        discover(cluster, where, f"spec.inputResources[{i}]", r.api_version, r.resource)
        for i, r in enumerate(controller.inputs)
    )
    outputs = []
    for i, output in enumerate(controller.outputs):
        field = f"spec.outputResources[{i}]"
        resource = discover(cluster, where, field, output.api_version, output.resource)
        within_parent_scope(where, field, parent, resource)
        outputs.append(OutputType(output, resource))
    return Resolved(parent, inputs, tuple(outputs))


class MapKind(ControllerKind[Obj]):
    """A MapController's part of a pass: its parents, each with its hook calls (on a pool
    shared by the pass) and the writes for each of its map keys."""

    kind = "MapController"

    def __init__(self, env: PassEnv, controller: MapController) -> None:
        from_cluster = controller.raw if controller.source == "cluster" else None
        super().__init__(env, controller.name, controller.resync_period, from_cluster)
        self.controller = controller

    def prepare(self, scope: ExitStack) -> list[Obj]:
        resolved = resolve(self.env.cluster, self.controller)
        self.resolved = replace(resolved, outputs=self.env.with_schemas(resolved.outputs))
        outputs = [t.resource for t in self.resolved.outputs]
        refuse_shared_objects(self.where, "spec.outputResources", outputs, self.env.snapshot)
        self.calls = scope.enter_context(
            ThreadPoolExecutor(self.env.workers, thread_name_prefix="map-call")
        )
        return [
            p
            for p in self.env.snapshot.objects(self.resolved.parent)
            if not is_deleting(p) and self.env.shard.owns(p)
        ]

    def parent(self, work: Obj) -> Obj:
        return work

    def begin(self, work: Obj) -> ParentResult:
        return ParentResult(self.name, identity(work), "map")

    def sync(self, work: Obj, result: ParentResult) -> None:
        _ParentSync(self, work, result).sync()


class _ParentSync:
    """One parent's hook calls and the writes for each of its map keys."""

    def __init__(self, kind: MapKind, parent: Obj, result: ParentResult) -> None:
        env = kind.env
        self.env, self.snapshot, self.executor = env, env.snapshot, env.executor
        self.calls = kind.calls
        self.resolved = kind.resolved
        self.name = kind.name
        self.ctx = MapContext(
            kind.controller,
            parent,
            kind.resolved.parent,
            kind.resolved.outputs,
            env.executor.strategy,
            stamp_generation=env.stamps_generation(kind.resolved.parent),
            status_schema=env.parent_schema(kind.resolved.parent),
        )
        self.result = result

    def sync(self) -> None:
        ctx, snapshot = self.ctx, self.snapshot
        selector = input_selector(ctx.parent)
        namespace = namespace_of(ctx.parent) if ctx.namespaced else None
        candidates = [(r, snapshot.in_namespace(r, namespace)) for r in self.resolved.inputs]
        inputs = select_inputs(ctx.parent, selector, candidates)
        controlled = {
            t.key: snapshot.controlled_by(t.resource, uid_of(ctx.parent)) for t in ctx.output_types
        }
        observed = outputs_by_key(ctx.output_types, controlled)
        live_keys = {item.key for item in inputs}
        map_calls = [
            (item, self._submit(self._map, item, observed.get(item.key, {}))) for item in inputs
        ]
        detached_calls = [
            (key, self._submit(self._tombstone, key, outputs))
            for key, outputs in sorted(observed.items())
            if key not in live_keys
        ]
        live: list[LiveKey] = []
        detached: list[DetachedKey] = []
        for item, future in map_calls:
            answer = self._answer(future, f"map hook for {item.name}")
            if answer is not None:
                live.append(LiveKey(item, answer))
        for key, detached_future in detached_calls:
            name = detached_input(observed[key])
            kept = self._answer(detached_future, f"tombstone hook for the outputs of {name}")
            if kept is not None:
                detached.append(DetachedKey(key, name, kept))
        plans = plan_parent_outputs(ctx, live, detached, observed, self._lookup)
        for plan in plans:
            self.env.note_dropped_fields(self.name, plan.dropped)
            self.result.waits += plan.waits
            for problem in plan.problems:
                self._key_error(f"{plan.input}: {problem}")
        self._execute(p for p in plans if not p.problems and p.actions)
        done = [r.action for r in self.result.actions if not r.error]
        after = outputs_after(ctx.output_types, observed, done)
        aggregated = aggregated_status(list(self.resolved.inputs), inputs, ctx.output_types, after)
        self.env.note_dropped_status(ctx.parent_resource, self.name, aggregated)
        status = status_action(ctx, aggregated)
        if status is not None:
            self.executor.execute([status], self.result.actions)

    def _submit(self, call: Callable[..., _T], *args: Any) -> Future[_T] | None:
        if self.env.budget.expired:
            return None
        return self.calls.submit(call, *args)

    def _answer(self, future: Future[list[Obj]] | None, what: str) -> list[Obj] | None:
        """A hook's outputs, or None after recording why not (this key then changes nothing)."""
        if future is None:
            raise BudgetExhausted(what, self.env.budget.why())
        try:
            return future.result()
        except (HookError, ResponseError) as exc:
            self._key_error(f"{what}: {exc}")
            return None

    def _key_error(self, message: str) -> None:
        self.executor.sync_failed(self.ctx.parent, self.result, message)

    def _map(self, item: MapInput, outputs: dict[str, list[Obj]]) -> list[Obj]:
        hook = self.ctx.controller.hooks.map
        request = map_request(self.ctx, item, outputs, uniform=hook.uniform_keys)
        answer = call_hook(self.env.hooks, hook, request, self.result)
        return parse_outputs(answer, "map", strict=hook.strict)

    def _tombstone(self, key: str, outputs: dict[str, list[Obj]]) -> list[Obj]:
        hook = self.ctx.controller.hooks.tombstone
        if hook is None:
            return []  # no tombstone hook: detached outputs are deleted
        request = tombstone_request(self.ctx, key, outputs, uniform=hook.uniform_keys)
        answer = call_hook(self.env.hooks, hook, request, self.result)
        return parse_outputs(answer, "tombstone", strict=hook.strict)

    def _lookup(self, type_key: str, namespace: str, name: str) -> Obj | None:
        output_type = next(t for t in self.ctx.output_types if t.key == type_key)
        return self.snapshot.find(output_type.resource, namespace, name)

    def _execute(self, plans: Iterable[KeyPlan]) -> None:
        """Each key's actions in order, keys side by side; results kept in key order."""
        batches: list[tuple[list[ActionResult], Future[list[ActionResult]]]] = []
        for plan in plans:
            done: list[ActionResult] = []
            batches.append((done, self.calls.submit(self.executor.execute, plan.actions, done)))
        stopped: BudgetExhausted | None = None
        for done, future in batches:
            try:
                future.result()
            except BudgetExhausted as exc:
                stopped = stopped or exc
            self.result.actions += done
        if stopped is not None:
            raise stopped
