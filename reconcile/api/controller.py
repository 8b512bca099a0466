"""What every metacontroller.k8s.io controller spec shares: its name and where it came from, the
rule lists that may not repeat a resource, and the hooks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from reconcile.api.fields import Fields
from reconcile.api.hooks import HookSpec
from reconcile.api.hooks_parse import optional_hook


class _Rule(Protocol):
    @property
    def api_version(self) -> str: ...

    @property
    def resource(self) -> str: ...


def controller_spec(obj: dict[str, Any], kind: str, source: str) -> tuple[str, str, Fields]:
    """(name, how errors name the controller, its `spec` fields); SpecError without a name."""
    name = str((obj.get("metadata") or {}).get("name") or "")
    where = f"{kind} {name or '(unnamed)'}"
    if source != "cluster":
        where += f" ({source})"
    root = Fields(where, "", obj)
    if not name:
        raise root.error("metadata.name", "is required")
    return name, where, root.child("spec")


def no_repeats(spec: Fields, field: str, rules: Sequence[_Rule]) -> None:
    """SpecError when a list names the same resource of the same apiVersion twice."""
    seen: dict[tuple[str, str], int] = {}
    for i, rule in enumerate(rules):
        key = (rule.api_version, rule.resource)
        if key in seen:
            raise spec.error(
                f"{field}[{i}]",
                f"{rule.resource} ({rule.api_version}) is already listed at {field}[{seen[key]}]",
            )
        seen[key] = i


def controller_hooks(
    spec: Fields, where: str, base_dir: str | None
) -> tuple[HookSpec, HookSpec | None, HookSpec | None]:
    """(sync, finalize, customize); SpecError without a sync hook."""
    hooks = spec.child("hooks")
    hooks.reject_unknown({"sync", "finalize", "customize"})
    sync = optional_hook(hooks, "sync", where, base_dir)
    if sync is None:
        raise hooks.error("sync", "is required")
    return (
        sync,
        optional_hook(hooks, "finalize", where, base_dir),
        optional_hook(hooks, "customize", where, base_dir),
    )
