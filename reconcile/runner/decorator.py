"""One pass of one DecoratorController: resolve its resources, then sync every target."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from reconcile.api.decorator import DecoratorController
from reconcile.api.hooks import HookSpec
from reconcile.budget import BudgetExhausted
from reconcile.cluster.errors import ApiError, is_transient
from reconcile.engine.decorator import (
    AttachmentType,
    finalizing,
    is_attachment,
    parse_response,
    plan_target,
    sync_request,
)
from reconcile.engine.responses import ResponseError, parse_customize_response
from reconcile.hooks import HookError
from reconcile.objects.meta import Obj, identity, uid_of
from reconcile.objects.resource import ResourceInfo
from reconcile.runner.controller_pass import ControllerPass
from reconcile.runner.hookcall import call_hook
from reconcile.runner.related import related_objects
from reconcile.runner.results import ControllerResult, ParentResult


class DecoratorRunner(ControllerPass):
    """Syncs the targets of one decorator in one pass, `workers` at a time."""

    def run(self, controller: DecoratorController) -> ControllerResult:
        result = ControllerResult(
            controller.name, resync_period=controller.resync_period, kind="DecoratorController"
        )
        where = f"DecoratorController {controller.name}"
        try:
            self.budget.check(where)
            rules = [
                (rule, self.cluster.discover(rule.api_version, rule.resource))
                for rule in controller.resources
            ]
            types = [
                AttachmentType(rule, self.cluster.discover(rule.api_version, rule.resource))
                for rule in controller.attachments
            ]
            # A target matches when any rule of its resource matches it; each is synced once.
            matched: dict[str, tuple[ResourceInfo, Obj, bool]] = {}
            for rule, resource in rules:
                for obj in self.snapshot.objects(resource):
                    seen = matched.get(uid_of(obj))
                    matches = rule.matches(obj) or (seen is not None and seen[2])
                    matched[uid_of(obj)] = (resource, obj, matches)
            work = [
                (resource, obj, matches)
                for resource, obj, matches in matched.values()
                if (matches or finalizing(controller, obj, matches)) and self.shard.owns(obj)
            ]
        except BudgetExhausted:
            result.stopped = True
            return result
        except ApiError as exc:
            result.errors.append(f"{where}: {exc.message}")
            result.transient = is_transient(exc)
            return result
        if any(not t.resource.namespaced for t in types) and any(r.namespaced for _, r in rules):
            result.errors.append(
                f"{where}: spec.attachments: a namespaced target cannot have cluster-scoped "
                "attachments"
            )
            return result

        def sync(item: tuple[ResourceInfo, Obj, bool]) -> ParentResult | None:
            if self.budget.expired:
                return None
            resource, target, matches = item
            return self._sync(controller, resource, types, target, matches)

        if self.workers == 1 or len(work) <= 1:
            synced = [sync(item) for item in work]
        else:
            with ThreadPoolExecutor(self.workers, thread_name_prefix="target") as pool:
                synced = list(pool.map(sync, work))
        result.parents = [p for p in synced if p is not None]
        result.not_synced = len(synced) - len(result.parents)
        return result

    def _sync(
        self,
        controller: DecoratorController,
        resource: ResourceInfo,
        types: list[AttachmentType],
        target: Obj,
        matches: bool,
    ) -> ParentResult:
        finalize = finalizing(controller, target, matches)
        hook = controller.hooks.finalize if finalize and controller.hooks.finalize else None
        mode = "finalize" if hook is not None else "sync"
        result = ParentResult(controller.name, identity(target), mode)
        hook = hook or controller.hooks.sync
        try:
            observed = {
                kind.key: [
                    obj
                    for obj in self.snapshot.controlled_by(kind.resource, uid_of(target))
                    if is_attachment(controller, target, obj)
                ]
                for kind in types
            }
            related = self._related(controller, target, resource.namespaced, result)
            request = sync_request(
                controller, target, resource.namespaced, observed, related, finalizing=finalize
            )
            response = parse_response(self._call(hook, request, result), hook.name)
            result.resync_after = response.resync_after
            plan = plan_target(
                controller,
                resource,
                target,
                types,
                observed,
                response,
                finalizing=finalize,
                strategy=self.executor.strategy,
            )
            result.waits += plan.waits
            self.executor.execute(plan.actions, result.actions)
        except BudgetExhausted as exc:
            result.interrupt(exc)
            return result
        except (HookError, ResponseError, ApiError) as exc:
            self.executor.sync_failed(target, result, str(exc), transient=is_transient(exc))
        except RecursionError:  # input nested deeper than some step can follow: its parent's
            self.executor.sync_failed(target, result, "an object nested too deeply to process")
            return result
        self.executor.record_outcome(target, result)
        return result

    def _related(
        self, controller: DecoratorController, target: Obj, namespaced: bool, result: ParentResult
    ) -> dict[str, dict[str, Obj]]:
        """The customize hook's related objects (`{controller, parent}` as in Metacontroller)."""
        hook = controller.hooks.customize
        if hook is None:
            return {}
        request = {"controller": controller.raw, "parent": target}
        rules = parse_customize_response(self._call(hook, request, result))
        return related_objects(self.cluster, self.snapshot, rules, target, namespaced)

    def _call(self, hook: HookSpec, request: dict[str, Any], result: ParentResult) -> Any:
        return call_hook(self.hooks, hook, request, result)
