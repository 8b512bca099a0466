"""What a report shows of a parent's rollout (`engine/composite/rollout.py` decides it): a
value of its own, so that the parent's result and the reports need not load the rollout
engine."""

from __future__ import annotations

from reconcile.records import dataclass


@dataclass(frozen=True)
class RevisionSummary:
    name: str
    latest: bool
    children: tuple[str, ...]  # `Pod web-0`, after this decision
    write: str | None = None  # create / update / delete, or None


@dataclass(frozen=True)
class RolloutSummary:
    """What a report shows of a parent's rollout."""

    latest: str
    revisions: tuple[RevisionSummary, ...]
    on_latest: int  # children of rolling types recorded on the latest revision
    total: int  # children of rolling types
    moved: tuple[str, ...]
    waiting: str | None = None

    def describe(self) -> str:
        text = f"{self.on_latest}/{self.total} children on revision {self.latest}"
        if self.moved:
            text += "; moving " + ", ".join(self.moved)
        if self.waiting:
            text += f"; {self.waiting}"
        return text
