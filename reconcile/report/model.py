"""What every format shows, computed once: action states and identities, totals, the headline."""

from __future__ import annotations

from collections import Counter
from dataclasses import field
from enum import StrEnum

from reconcile.engine.actions import ActionKind
from reconcile.records import dataclass
from reconcile.report.diff import ActionDiff, DiffLine, action_diff, diff_lines
from reconcile.report.fit_lines import fit
from reconcile.results import ActionResult, Outcome, ParentResult, RunResult

DIFF_LINES = 300  # per action; the rest is summarised as `... N more lines`
LINE_CHARS = 2000  # per diff line


class ActionState(StrEnum):
    APPLIED = "applied"
    PENDING = "pending"  # decided, not sent (dry run)
    FAILED = "failed"  # sent and refused, or not attempted after an earlier failure


def action_state(result: ActionResult) -> ActionState:
    if result.applied:
        return ActionState.APPLIED
    return ActionState.FAILED if result.error else ActionState.PENDING


SYMBOLS: dict[ActionKind, str] = {ActionKind.CREATE: "+", ActionKind.DELETE: "-"}


def symbol(kind: ActionKind) -> str:
    """`+` create, `-` delete, `~` any other change (update, status, ownership, finalizers)."""
    return SYMBOLS.get(kind, "~")


@dataclass(frozen=True)
class ObjectId:
    api_version: str
    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{self.kind} {where}"


@dataclass(frozen=True)
class ActionView:
    result: ActionResult
    state: ActionState
    object: ObjectId
    diff: ActionDiff

    @property
    def kind(self) -> ActionKind:
        return self.result.action.kind

    @property
    def reason(self) -> str:
        return self.result.action.reason

    @property
    def error(self) -> str:
        return self.result.error

    @property
    def validation(self) -> str:
        """With --dry-run=server: `server-validated` (sent as a dry run and accepted), or
        `not validated: <why>`; "" otherwise (and for a refused action: its error says it)."""
        if self.result.validated:
            return "server-validated"
        if self.result.not_validated:
            return f"not validated: {self.result.not_validated}"
        return ""

    def lines(self) -> list[DiffLine]:
        return diff_lines(self.result.action, self.diff)

    def bounded_lines(self) -> list[DiffLine]:
        """The diff lines, about DIFF_LINES of at most LINE_CHARS characters each: a report
        stays readable (and its size bounded) whatever a hook returns. A longer diff is cut
        part by part (`fit_lines`: long annotations do not hide the role after them)."""
        lines = [
            f"{sign} {text if len(text) <= LINE_CHARS else text[:LINE_CHARS] + ' ...'}"
            for sign, text in self.lines()
        ]
        total = sum(len(line) + 1 for line in lines)
        if len(lines) > DIFF_LINES:
            lines, _ = fit(lines, total * DIFF_LINES // len(lines))
        return [(line[:1], line[2:]) for line in lines]


def view(result: ActionResult) -> ActionView:
    action = result.action
    target = action.target
    obj = ObjectId(
        api_version=str(target.get("apiVersion") or action.resource.api_version),
        kind=str(target.get("kind") or action.resource.kind),
        namespace=action.namespace,
        name=action.name,
    )
    return ActionView(result, action_state(result), obj, diff_of(result))


def diff_of(result: ActionResult) -> ActionDiff:
    """The action's diff: computed from its objects, or read back once stowed."""
    if result.stowed is None:
        return action_diff(result.action)
    diff = result.stowed.load()
    assert isinstance(diff, ActionDiff), "only diffs are stowed"
    return diff


def split_parent(parent: str) -> tuple[str, str, str]:
    """`Kind namespace/name` (or `Kind name`) -> (kind, namespace, name)."""
    kind, _, rest = parent.partition(" ")
    namespace, _, name = rest.rpartition("/")
    return kind, namespace, name


def has_news(parent: ParentResult) -> bool:
    """Whether a parent did (or would do) anything worth more than one line."""
    return bool(
        parent.actions
        or parent.waits
        or parent.errors
        or any(h.outcome is Outcome.FAILED for h in parent.hooks)
    )


def parent_summary(parent: ParentResult) -> str:
    """`3 pending, 1 wait, 1 error` or `in sync`."""
    states = Counter(action_state(a) for a in parent.actions)
    parts = [f"{states[s]} {s.value}" for s in ActionState if states[s]]
    if parent.waits:
        parts.append(plural(len(parent.waits), "wait"))
    if parent.errors:
        parts.append(plural(len(parent.errors), "error"))
    return ", ".join(parts) or "in sync"


@dataclass
class Totals:
    passes: int = 0
    parents: int = 0  # synced in the last pass
    applied: int = 0  # every pass
    pending: int = 0  # the last pass
    validated: int = 0  # of those, sent as dry runs and accepted (--dry-run=server)
    failed: int = 0  # every pass
    waits: int = 0  # the last pass
    errors: int = 0  # load errors + the last pass's errors (RunResult.errors)
    by_kind: dict[str, dict[str, int]] = field(default_factory=dict)
    hooks: dict[str, int] = field(default_factory=dict)  # by outcome, every pass
    requests: int = 0


def totals(result: RunResult) -> Totals:
    out = Totals(passes=len(result.passes), errors=len(result.errors))
    out.by_kind = {k.value: {s.value: 0 for s in ActionState} for k in ActionKind}
    out.hooks = {o.value: 0 for o in Outcome}
    last = result.passes[-1] if result.passes else None
    for pass_ in result.passes:
        for parent in pass_.parents():
            for hook in parent.hooks:
                out.hooks[hook.outcome.value] += 1
            for action in parent.actions:
                state = action_state(action)
                if state is ActionState.PENDING and pass_ is not last:
                    continue  # superseded by the passes after it
                out.by_kind[action.action.kind.value][state.value] += 1
                if state is ActionState.APPLIED:
                    out.applied += 1
                elif state is ActionState.FAILED:
                    out.failed += 1
                else:
                    out.pending += 1
                    out.validated += int(action.validated)
    if last is not None:
        out.parents = len(last.parents())
        out.waits = len(last.waits)
    out.requests = sum(result.requests.values())
    return out


class RunOutcome(StrEnum):
    ERRORS = "errors"
    PENDING = "pending"
    APPLIED = "applied"
    NO_CHANGES = "no-changes"


def outcome(t: Totals) -> RunOutcome:
    if t.errors:
        return RunOutcome.ERRORS
    if t.pending:
        return RunOutcome.PENDING
    if t.applied:
        return RunOutcome.APPLIED
    return RunOutcome.NO_CHANGES


def headline(t: Totals) -> str:
    """`3 changes pending`, `2 errors, 5 changes applied`, `no changes`."""
    parts = []
    if t.errors:
        parts.append(plural(t.errors, "error"))
    if t.pending:
        parts.append(plural(t.pending, "change") + " pending")
    if t.applied:
        parts.append(plural(t.applied, "change") + " applied")
    return ", ".join(parts) or "no changes"


def mode(result: RunResult) -> str:
    """`apply`, `dry run` or `server dry run` (--dry-run=server)."""
    if not result.dry_run:
        return "apply"
    return "server dry run" if result.server_dry_run else "dry run"


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def hooks_summary(t: Totals) -> str:
    total = sum(t.hooks.values())
    detail = ", ".join(f"{k} {v}" for k, v in t.hooks.items() if v)
    return f"{total} ({detail})" if detail else str(total)


def requests_summary(requests: dict[str, int]) -> str:
    total = sum(requests.values())
    detail = ", ".join(f"{verb} {n}" for verb, n in requests.items() if n)
    return f"{total} ({detail})" if detail else str(total)


def kind_rows(t: Totals) -> list[tuple[str, int, int, int]]:
    """(kind, applied, pending, failed) for each action kind that occurred, in plan order."""
    rows = []
    for kind, counts in t.by_kind.items():
        applied, pending, failed = (counts[s.value] for s in ActionState)
        if applied or pending or failed:
            rows.append((kind, applied, pending, failed))
    return rows


def stop_note(result: RunResult) -> str | None:
    """Why the run did not finish its work, when it did not (None otherwise)."""
    if result.skipped:
        return f"skipped, nothing was done: {result.skipped}"
    if result.fatal:
        return "nothing was changed: the run could not start (see the errors)"
    if not result.interrupted:
        return None
    cause = (
        "the run's time budget ended mid-pass"
        if result.interrupted == "budget"
        else f"interrupted by {result.interrupted}"
    )
    not_synced = sum(p.not_synced for p in result.passes)
    detail = f"; {plural(not_synced, 'parent')} not synced" if not_synced else ""
    return f"{cause}: this report shows what was done until then{detail}"


def source_line(result: RunResult) -> str | None:
    """`<url> @ <ref>: <sha12> <subject>`, for runs whose inputs came from git."""
    source = result.source
    if source is None:
        return None
    return f"{source.url} @ {source.ref}: {source.commit[:12]} {source.subject}"


def shard_line(result: RunResult) -> str | None:
    """`2/4: the parents of this shard only`, for sharded runs."""
    if result.shard is None:
        return None
    return f"{result.shard} (this run synced the parents of its shard only)"
