"""A MapController's pieces of a pass (`engine/flow.py`), in the order the pass takes them:
its resources (the parent, the inputs, the outputs); its parents (while they live: a map has no
finalizer); one parent's inputs and outputs by map key; a map hook call per input and a
tombstone hook call per key whose input is gone; the answers by key; a plan per key; and, from
what the pass made, the parent's aggregated status."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any

from reconcile.engine.actions import Action
from reconcile.engine.finalizers import NO_FINALIZER, Mode
from reconcile.engine.flow import (
    Context,
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
    lookup_in,
    within_parent_scope,
)
from reconcile.engine.map_controller.inputs import (
    MapInput,
    OutputContext,
    OutputType,
    detached_input,
    input_selector,
    map_request,
    outputs_by_key,
    parse_outputs,
    select_inputs,
    tombstone_request,
)
from reconcile.engine.map_controller.plan import DetachedKey, LiveKey, plan_parent_outputs
from reconcile.engine.map_controller.status import aggregated_status, outputs_after
from reconcile.engine.status import status_action
from reconcile.objects.meta import Obj, namespace_of, uid_of
from reconcile.records import dataclass
from reconcile.specs.map_controller import MapController

PARENT = "spec.parentResource"


@dataclass(frozen=True)
class Seen:
    """One parent's inputs, and its outputs by map key then output type; `detached`: the keys
    whose input is gone."""

    ctx: OutputContext
    inputs: list[MapInput]
    outputs: Mapping[str, Mapping[str, list[Obj]]]
    detached: list[str]
    lookup: Lookup


@dataclass(frozen=True)
class ByKey:
    """The answers by map key, for the keys whose hook answered."""

    live: list[LiveKey] = field(default_factory=list)
    detached: list[DetachedKey] = field(default_factory=list)
    status: Mapping[str, Any] | None = None  # the status is counted after the writes
    resync_after: float | None = None


class MapKind(ParentKind[MapController, Seen, list[Obj], ByKey]):
    """A MapController's parents, each with a hook call per map key and the writes for each
    key (keys side by side), then its aggregated status."""

    kind = "MapController"

    def named(self) -> list[Named]:
        controller = self.controller
        rule = controller.parent
        return [
            Named(PARENT, rule.api_version, rule.resource, parent=True),
            *(
                Named(f"spec.inputResources[{i}]", r.api_version, r.resource)
                for i, r in enumerate(controller.inputs)
            ),
            *(
                Named(f"spec.outputResources[{i}]", r.api_version, r.resource, owned=True)
                for i, r in enumerate(controller.outputs)
            ),
        ]

    def bind(self, resolved: Resolved) -> None:
        named = self.named()
        self.parent_type = resolved.found[PARENT]
        count = len(self.controller.inputs)
        self.input_types = tuple(resolved.found[n.field] for n in named[1 : 1 + count])
        outputs = named[1 + count :]
        self.output_types: tuple[OutputType, ...] = tuple(
            resolved.owned(n, rule)
            for n, rule in zip(outputs, self.controller.outputs, strict=True)
        )
        for n, output_type in zip(outputs, self.output_types, strict=True):
            within_parent_scope(self.where, n.field, self.parent_type, output_type.resource)

    def select(self, view: View) -> list[Selected]:
        parents = view.objects(self.parent_type)
        selected = [Selected(p, self.parent_type, NO_FINALIZER.mode(p, True)) for p in parents]
        return [s for s in selected if s.mode is Mode.SYNC]

    def mode_name(self, mode: Mode) -> str:
        return "map"

    def observe(self, selected: Selected, view: View, facts: Facts) -> Seen:
        work = selected.parent
        # the class itself: a call through the generic alias costs as much again
        ctx: OutputContext = Context(
            self.controller,
            work,
            self.parent_type,
            self.output_types,
            facts.strategy,
            facts.stamp_generation,
            facts.status_schema,
        )
        namespace = namespace_of(work) if ctx.namespaced else None
        candidates = [(r, view.in_namespace(r, namespace)) for r in self.input_types]
        inputs = select_inputs(work, input_selector(work), candidates)
        controlled = {t.key: view.controlled_by(t.resource, uid_of(work)) for t in ctx.owned}
        outputs = outputs_by_key(ctx.owned, controlled)
        live = {item.key for item in inputs}
        detached = sorted(key for key in outputs if key not in live)
        return Seen(ctx, inputs, outputs, detached, lookup_in(view, ctx.owned))

    def requests(
        self, seen: Seen, related: Mapping[str, Mapping[str, Obj]]
    ) -> list[HookRequest[list[Obj]]]:
        """The map hook for every input; the tombstone hook, if any, for every key whose input
        is gone (without one, its outputs are deleted)."""
        hooks, ctx = self.controller.hooks, seen.ctx
        parse_map = functools.partial(parse_outputs, hook="map", strict=hooks.map.strict)
        requests = [
            HookRequest(
                hooks.map,
                map_request(
                    ctx, item, seen.outputs.get(item.key, {}), uniform=hooks.map.uniform_keys
                ),
                parse_map,
                key=item.key,
                what=f"map hook for {item.name}",
            )
            for item in seen.inputs
        ]
        tombstone = hooks.tombstone
        if tombstone is None:
            return requests
        parse = functools.partial(parse_outputs, hook="tombstone", strict=tombstone.strict)
        return requests + [
            HookRequest(
                tombstone,
                tombstone_request(ctx, key, seen.outputs[key], uniform=tombstone.uniform_keys),
                parse,
                key=key,
                what=f"tombstone hook for the outputs of {detached_input(seen.outputs[key])}",
            )
            for key in seen.detached
        ]

    def respond(self, seen: Seen, answers: Sequence[list[Obj] | None]) -> ByKey:
        """The keys whose hooks answered (one whose call failed is left as it is)."""
        mapped, kept = answers[: len(seen.inputs)], answers[len(seen.inputs) :]
        if self.controller.hooks.tombstone is None:
            kept = [[] for _ in seen.detached]  # no tombstone hook: nothing is kept
        live = [
            LiveKey(item, out)
            for item, out in zip(seen.inputs, mapped, strict=True)
            if out is not None
        ]
        detached = [
            DetachedKey(key, detached_input(seen.outputs[key]), keep)
            for key, keep in zip(seen.detached, kept, strict=True)
            if keep is not None
        ]
        return ByKey(live, detached)

    def plan(self, seen: Seen, response: ByKey) -> ParentPlan:
        ctx = seen.ctx
        plans = plan_parent_outputs(
            ctx, response.live, response.detached, seen.outputs, seen.lookup
        )

        def then(done: list[Action]) -> ParentPlan:
            """The aggregated status, as what was done leaves the outputs: it says what the
            pass made, without waiting for another pass."""
            after = outputs_after(ctx.owned, seen.outputs, done)
            aggregated = aggregated_status(list(self.input_types), seen.inputs, ctx.owned, after)
            status = status_action(
                ctx.parent_resource,
                ctx.parent,
                aggregated,
                "aggregated status",
                stamp=ctx.stamp_generation,
                schema=ctx.status_schema,
            )
            return ParentPlan([Plan([status] if status is not None else [])], status=aggregated)

        return ParentPlan(plans, then=then)
