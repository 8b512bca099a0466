"""The JSON report: `report_dict` (its JSON Schema: report.schema.json beside this module)."""

from __future__ import annotations

import json
from typing import IO, TYPE_CHECKING, Any

from reconcile.report.model import (
    ActionView,
    headline,
    ms,
    outcome,
    split_parent,
    stop_note,
    totals,
    view,
)
from reconcile.results import (
    ControllerResult,
    HookCall,
    ParentResult,
    PassResult,
    RunResult,
)

if TYPE_CHECKING:
    from reconcile.engine.rollout_summary import RolloutSummary

REPORT_SCHEMA_VERSION = "reconcile.report/v2"


# As `render` writes it: compact (the C encoder is an order of magnitude faster on large runs;
# `jq .` indents).
_COMPACT: dict[str, Any] = {"ensure_ascii": False, "separators": (",", ":")}


def report_dict(result: RunResult) -> dict[str, Any]:
    """The whole run as plain JSON data: camelCase keys, controllers, parents and actions in
    result order, Secret values redacted."""
    return {**_head(result), "passes": [_pass(p) for p in result.passes]}


def write_json(stream: IO[str], result: RunResult) -> None:
    """`report_dict(result)` as compact JSON and a newline, written parent by parent: the
    same text as one `json.dumps`, without the whole report in memory at once."""
    stream.write(_open_last(_head(result), "passes"))
    for i, pass_ in enumerate(result.passes):
        stream.write("," if i else "")
        stream.write(_open_last(_pass_head(pass_), "controllers"))
        for j, controller in enumerate(pass_.controllers):
            stream.write("," if j else "")
            stream.write(_open_last(_controller_head(controller), "parents"))
            for k, parent in enumerate(controller.parents):
                stream.write("," if k else "")
                stream.write(json.dumps(_parent(parent), **_COMPACT))
            stream.write("]}")
        stream.write("]}")
    stream.write("]}\n")


def _open_last(head: dict[str, Any], key: str) -> str:
    """`head` as JSON, open for a last member `key` holding a list: `{...,"key":[`."""
    text = json.dumps(head, **_COMPACT)
    return f"{text[:-1]}{',' if head else ''}{json.dumps(key)}:["


def _head(result: RunResult) -> dict[str, Any]:
    """The report but its passes."""
    t = totals(result)
    return {
        "schemaVersion": REPORT_SCHEMA_VERSION,
        "outcome": outcome(t).value,
        "headline": headline(t),
        "dryRun": result.dry_run,
        "dryRunMode": ("server" if result.server_dry_run else "client") if result.dry_run else None,
        "source": None
        if result.source is None
        else {
            "url": result.source.url,
            "ref": result.source.ref,
            "commit": result.source.commit,
            "subject": result.source.subject,
        },
        "shard": result.shard,
        "applyStrategy": result.apply_strategy,
        "converged": result.converged,
        "durationSeconds": round(result.duration, 3),
        "hookCalls": result.hook_calls,
        "requests": dict(result.requests),
        "interrupted": result.interrupted,
        "stopped": stop_note(result),
        "skipped": result.skipped,
        "loadErrors": list(result.load_errors),
        "warnings": list(result.warnings),
        "dueNextRun": list(result.due_next_run),
        "errors": list(result.errors),
        "notConverging": [
            {
                "object": stuck.object,
                "how": stuck.how.value,
                "pass": stuck.pass_number,
                "fields": [
                    {"path": c.path, "hookReturns": c.wanted, "clusterKeeps": c.kept}
                    for c in stuck.changes
                ],
            }
            for stuck in result.not_converging
        ],
        "summary": {
            "passes": t.passes,
            "parents": t.parents,
            "applied": t.applied,
            "pending": t.pending,
            "serverValidated": t.validated,
            "failed": t.failed,
            "waits": t.waits,
            "errors": t.errors,
            "actions": {kind: dict(counts) for kind, counts in t.by_kind.items()},
            "hooks": {**t.hooks, "total": sum(t.hooks.values())},
            "requests": t.requests,
        },
    }


def _pass(pass_: PassResult) -> dict[str, Any]:
    return {**_pass_head(pass_), "controllers": [_controller(c) for c in pass_.controllers]}


def _pass_head(pass_: PassResult) -> dict[str, Any]:
    return {
        "number": pass_.number,
        "durationSeconds": round(pass_.duration, 3),
        "requests": dict(pass_.requests),
        "requestSeconds": round(pass_.request_seconds, 3),
    }


def _controller(controller: ControllerResult) -> dict[str, Any]:
    return {**_controller_head(controller), "parents": [_parent(p) for p in controller.parents]}


def _controller_head(controller: ControllerResult) -> dict[str, Any]:
    return {
        "name": controller.name,
        "kind": controller.kind or None,
        "resyncPeriodSeconds": controller.resync_period,
        "errors": list(controller.errors),
    }


def _parent(parent: ParentResult) -> dict[str, Any]:
    kind, namespace, name = split_parent(parent.parent)
    return {
        "parent": parent.parent,
        "kind": kind,
        "namespace": namespace,
        "name": name,
        "mode": parent.mode,
        "resyncAfterSeconds": parent.resync_after,
        "hooks": [_hook(h) for h in parent.hooks],
        "actions": [action_dict(view(a)) for a in parent.actions],
        "waits": list(parent.waits),
        "errors": list(parent.errors),
        "rollout": _rollout(parent.rollout) if parent.rollout is not None else None,
    }


def _rollout(summary: RolloutSummary) -> dict[str, Any]:
    return {
        "latestRevision": summary.latest,
        "onLatest": summary.on_latest,
        "total": summary.total,
        "moving": list(summary.moved),
        "waitingFor": summary.waiting,
        "revisions": [{"name": r.name, "children": r.children} for r in summary.revisions],
    }


def _hook(hook: HookCall) -> dict[str, Any]:
    return {
        "hook": hook.hook,
        "target": hook.target,
        "outcome": hook.outcome.value,
        "durationMs": ms(hook.duration),
        "error": hook.error or None,
    }


def action_dict(action: ActionView) -> dict[str, Any]:
    obj = action.object
    return {
        "action": action.kind.value,
        "object": {
            "apiVersion": obj.api_version,
            "kind": obj.kind,
            "namespace": obj.namespace,
            "name": obj.name,
        },
        "resource": action.result.action.resource.group_resource,
        "reason": action.reason,
        "for": action.result.action.group or None,
        "state": action.state.value,
        "serverValidated": action.result.validated,
        "notValidated": action.result.not_validated or None,
        "error": action.error or None,
        "diff": [
            {
                "path": c.dotted,
                "op": c.op.value,
                "before": c.before,
                "after": c.after,
            }
            for c in action.diff.changes
        ],
        "patch": action.diff.patch,
    }
