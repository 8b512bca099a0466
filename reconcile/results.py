"""What a run did (or, dry, would do): the material for logs and reports."""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Iterator
from dataclasses import field
from enum import StrEnum
from typing import Any, NoReturn, Protocol, TypeVar

from reconcile.engine.actions import Action
from reconcile.engine.changes import FieldChange
from reconcile.engine.rollout_summary import RolloutSummary
from reconcile.records import dataclass


class Outcome(StrEnum):
    OK = "ok"
    CACHED = "cached"
    FAILED = "failed"


@dataclass(frozen=True)
class HookCall:
    hook: str  # sync, finalize, customize
    target: str  # URL or command line
    outcome: Outcome
    duration: float
    error: str = ""
    method: str = ""  # POST for a webhook, exec for a command
    code: str = ""  # the HTTP status or exit code ("0": none, e.g. a timeout)


class Stowed(Protocol):
    """What a report shows of an action's content (its diff), kept out of memory once its
    parent was done (report/spool.py)."""

    def load(self) -> object: ...


@dataclass
class ActionResult:
    action: Action
    applied: bool  # False in dry-run, or when the request failed
    error: str = ""
    # Sent and accepted, but the server kept the object as it was: not a change.
    unchanged: bool = False
    # Not sent: the loop guard leaves its object alone (the run's errors say why).
    held: bool = False
    # Failed for a reason that may pass (no answer, a conflict, throttling, a server error):
    # the run tries again in a later pass.
    transient: bool = False
    # False when an earlier failure of its parent (or the budget) kept it from being sent.
    attempted: bool = True
    # --dry-run=server: sent as a dry run (dryRun=All) and accepted by the API server.
    validated: bool = False
    # --dry-run=server: why it was not sent (what it changes exists only in this dry run).
    not_validated: str = ""
    # Its diff, once stowed out of memory: `action` then names its objects but holds no more
    # of them.
    stowed: Stowed | None = None


class Divergence(StrEnum):
    IGNORED = "ignored"  # the server accepted the update and kept the object as it was
    REVERTED = "reverted"  # the same change was needed again in a later pass
    # deleted and created again (or created and deleted again) in a later pass of one run
    RECREATED = "recreated"


@dataclass(frozen=True)
class NotConverging:
    """An object the run cannot bring to what its hook asks for; left alone once found."""

    object: str  # `Kind namespace/name`
    how: Divergence
    changes: tuple[FieldChange, ...]
    pass_number: int
    # RECREATED: what the run did to it, pass by pass ("pass 1 created it as ingresses...")
    detail: str = ""

    def describe(self) -> str:
        if self.how is Divergence.RECREATED:
            return (
                f"{self.object} does not converge: {self.detail}, so every run would do the "
                "same. Left alone for the rest of the run; see that no two of the controller's "
                "resources list the same objects (one kind under two API versions), and that "
                "its hook asks for the object every time or never."
            )
        fields = "; ".join(c.describe() for c in self.changes[:5])
        if len(self.changes) > 5:
            fields += f"; and {len(self.changes) - 5} more fields"
        if self.how is Divergence.IGNORED:
            return (
                f"{self.object} does not converge: the API server accepted the update and kept "
                f"the object as it was, so every run would send it again ({fields}). Have the "
                "hook return what the cluster keeps, or leave the field out."
            )
        return (
            f"{self.object} does not converge: pass {self.pass_number} needed the same change "
            f"as an earlier pass, so something else sets it back (another controller, an "
            f"admission webhook, the server) ({fields}). Left alone for the rest of the run; "
            "leave the field out of the hook's answer, or stop the other writer."
        )


class PartsRecord(Protocol):
    """Where a finished parent's actions and hook calls were stowed (report/spool.py)."""

    def load(self) -> tuple[list[ActionResult], list[HookCall]]: ...


@dataclass(frozen=True)
class StowedParent:
    """What the run needs of a finished parent's actions while they are out of memory."""

    writes: int
    pending: int
    transient: str | None  # the first action that failed for a reason that may pass


T = TypeVar("T")


def _refuse(*_: Any, **__: Any) -> NoReturn:
    raise TypeError("a finished parent's stowed actions and hook calls are not changed")


class StowedList(list[T]):
    """A finished parent's actions (`part` 0) or hook calls (1) while they are in `record`:
    read back on every use (the spool keeps the last few it read), never held, so that a
    report goes through a large run a parent at a time. Read only."""

    __slots__ = ("_part", "_record")

    def __init__(self, record: PartsRecord, part: int) -> None:
        super().__init__()
        self._record = record
        self._part = part

    def _items(self) -> list[T]:
        return self._record.load()[self._part]  # type: ignore[return-value]

    def __iter__(self) -> Iterator[T]:
        return iter(self._items())

    def __reversed__(self) -> Iterator[T]:
        return reversed(self._items())

    def __len__(self) -> int:
        return len(self._items())

    def __bool__(self) -> bool:
        return bool(self._items())

    def __contains__(self, value: object) -> bool:
        return value in self._items()

    def __getitem__(self, index: Any) -> Any:
        return self._items()[index]

    def __eq__(self, other: object) -> bool:
        return self._items() == other

    def __ne__(self, other: object) -> bool:
        return self._items() != other

    __hash__ = None

    def __repr__(self) -> str:
        return repr(self._items())

    def __copy__(self) -> list[T]:
        return list(self._items())

    def __deepcopy__(self, memo: dict[int, Any]) -> list[T]:
        return copy.deepcopy(self._items(), memo)

    def __reduce__(self) -> tuple[Any, ...]:
        return StowedList, (self._record, self._part)

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse


@dataclass
class ParentResult:
    controller: str
    parent: str  # `Kind namespace/name`
    mode: str
    hooks: list[HookCall] = field(default_factory=list)
    actions: list[ActionResult] = field(default_factory=list)
    waits: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    resync_after: float | None = None
    rollout: RolloutSummary | None = None  # for controllers with rolling updates
    interrupted: bool = False  # the run stopped (budget, signal) before this parent was done
    transient: bool = False  # it failed for a reason that may pass (see ActionResult)
    # Once done and stowed: what the run needs of its actions (`actions` and `hooks` are then
    # read back from the spool on each use).
    stowed: StowedParent | None = None

    def stow(self, record: PartsRecord) -> None:
        """Its actions and hook calls are kept in `record` (a finished parent): read from there
        on each use from now on, the counts the run needs kept in memory."""
        self.stowed = StowedParent(self.writes, self.pending, self.first_transient)
        self.actions, self.hooks = StowedList(record, 0), StowedList(record, 1)

    def interrupt(self, why: BaseException) -> None:
        """The run stopped (budget, signal) before this parent was done: not its failure, so
        no Event; what was applied stays listed."""
        self.interrupted = True
        self.errors.append(f"{self.parent}: {why}")

    @property
    def writes(self) -> int:
        """Requests that changed something (an update the server ignored is not one)."""
        if self.stowed is not None:
            return self.stowed.writes
        return sum(1 for a in self.actions if a.applied and not a.unchanged)

    @property
    def pending(self) -> int:
        """Actions decided but not applied (dry-run, or failed)."""
        if self.stowed is not None:
            return self.stowed.pending
        return sum(1 for a in self.actions if not a.applied)

    @property
    def first_transient(self) -> str | None:
        """Its first action that failed for a reason that may pass: what and why."""
        if self.stowed is not None:
            return self.stowed.transient
        action = next((a for a in self.actions if a.transient), None)
        return None if action is None else f"{action.action.describe()}: {action.error}"


@dataclass
class ControllerResult:
    name: str
    parents: list[ParentResult] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # the controller as a whole could not run
    resync_period: float | None = None
    not_synced: int = 0  # parents not reached because the run stopped (budget, signal)
    stopped: bool = False  # the run stopped before this controller's parents were listed
    transient: bool = False  # its error may pass (the API server did not answer, ...)
    # CompositeController, DecoratorController, MapController ("" for --manifests)
    kind: str = ""


@dataclass
class PassResult:
    number: int
    controllers: list[ControllerResult] = field(default_factory=list)
    duration: float = 0.0  # seconds
    requests: dict[str, int] = field(default_factory=dict)  # API requests this pass, by verb
    request_seconds: float = 0.0  # waiting for the API server, summed over workers

    def parents(self) -> list[ParentResult]:
        return [p for c in self.controllers for p in c.parents]

    @property
    def not_synced(self) -> int:
        return sum(c.not_synced for c in self.controllers)

    @property
    def cut_short(self) -> bool:
        return any(c.stopped for c in self.controllers) or any(
            p.interrupted for p in self.parents()
        )

    @property
    def writes(self) -> int:
        return sum(p.writes for p in self.parents())

    @property
    def transient_failures(self) -> list[str]:
        """What failed this pass for a reason that may pass: worth another pass."""
        failed = [c.errors[0] for c in self.controllers if c.transient and c.errors]
        for parent in self.parents():
            action = parent.first_transient
            if action is not None:
                failed.append(action)
            elif parent.transient and parent.errors:
                failed.append(parent.errors[0])
        return failed

    @property
    def pending(self) -> int:
        """Actions decided but not applied (dry-run, or failed)."""
        return sum(p.pending for p in self.parents())

    @property
    def waits(self) -> list[str]:
        return [w for p in self.parents() for w in p.waits]

    @property
    def errors(self) -> list[str]:
        out = [e for c in self.controllers for e in c.errors]
        return out + [e for p in self.parents() for e in p.errors]

    def actions_by_kind(self, applied: bool | None = None) -> Counter[str]:
        return Counter(
            a.action.kind.value
            for p in self.parents()
            for a in p.actions
            if applied is None or a.applied == applied
        )

    def hook_calls(self) -> int:
        return sum(len(p.hooks) for p in self.parents())


@dataclass(frozen=True)
class Provenance:
    """Where a run's controllers and manifests came from (`--git`)."""

    url: str  # without credentials
    ref: str
    commit: str
    subject: str


@dataclass
class RunResult:
    dry_run: bool
    # --dry-run=server: the writes were sent as dry runs, for the API server to check
    server_dry_run: bool = False
    passes: list[PassResult] = field(default_factory=list)
    load_errors: list[str] = field(default_factory=list)  # controllers not loaded; see `fatal`
    # The inputs given could not be read as given: the run made no pass and wrote nothing.
    fatal: bool = False
    warnings: list[str] = field(default_factory=list)  # objects ignored, and why
    # Why the run stopped before finishing its work: "SIGINT", "SIGTERM" or "budget" (the
    # time budget ended mid-pass); None when it finished (or only waited past its budget).
    interrupted: str | None = None
    due_next_run: list[str] = field(default_factory=list)  # resyncs past the budget
    converged: bool = False
    # Objects whose updates do not stick (each is also an error: the run exits 1)
    not_converging: list[NotConverging] = field(default_factory=list)
    # --manifests, applied before the first pass (and reported as its first controller)
    manifests: ControllerResult | None = None
    source: Provenance | None = None  # --git: where the inputs came from
    shard: str | None = None  # --shard INDEX/COUNT: this run synced that share of the parents
    apply_strategy: str = "client-side"  # how children were written (--apply-strategy)
    # --lock held by another run: nothing was done (exit 0), and who holds it until when
    skipped: str | None = None
    duration: float = 0.0
    requests: dict[str, int] = field(default_factory=dict)
    request_codes: dict[tuple[str, str], int] = field(default_factory=dict)  # (verb, status)
    hook_calls: int = 0

    @property
    def errors(self) -> list[str]:
        last = self.passes[-1].errors if self.passes else []
        applied = (
            []
            if self.manifests is None
            else [e for p in self.manifests.parents for e in p.errors if e not in last]
        )
        return self.load_errors + applied + last + [n.describe() for n in self.not_converging]

    def actions_by_kind(self, applied: bool | None = None) -> Counter[str]:
        total: Counter[str] = Counter()
        for p in self.passes:
            total.update(p.actions_by_kind(applied))
        return total
