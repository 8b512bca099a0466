"""`KeptUntilLarge`: a small run's results stay in memory (no stowing, no parking); past the
limit, the parents held so far and every later one go to the keeper behind it, and so do the
passes parked from then on."""

from __future__ import annotations

from typing import Any

from reconcile.results import ControllerResult, ParentResult
from reconcile.runner.keeper import KeptUntilLarge


class Recorded:
    def __init__(self) -> None:
        self.stowed: list[str] = []
        self.parked: list[str] = []
        self.restored = 0

    def stow(self, parent: ParentResult) -> None:
        self.stowed.append(parent.parent)

    def park(self, controllers: list[ControllerResult]) -> None:
        self.parked += [c.name for c in controllers]

    def restore(self) -> None:
        self.restored += 1


def parent(name: str, actions: int) -> ParentResult:
    done = ParentResult("c", name, "sync")
    done.actions = [object()] * actions  # type: ignore[list-item]  # counted, never read
    return done


def test_a_small_run_keeps_everything_in_memory() -> None:
    behind = Recorded()
    keeper = KeptUntilLarge(behind, limit=10)
    for i in range(5):
        keeper.stow(parent(f"p{i}", 2))  # 10 actions: the limit, not past it
    keeper.park([ControllerResult("c")])
    keeper.restore()
    assert behind.stowed == [] and behind.parked == []


def test_past_the_limit_the_parents_so_far_and_all_later_ones_are_stowed() -> None:
    behind = Recorded()
    keeper = KeptUntilLarge(behind, limit=10)
    keeper.park([ControllerResult("before")])  # still small: kept in memory
    for i in range(6):
        keeper.stow(parent(f"p{i}", 2))
    assert behind.stowed == [f"p{i}" for i in range(6)]  # the sixth made it 12
    keeper.stow(parent("later", 0))
    keeper.park([ControllerResult("after")])
    keeper.restore()
    seen: dict[str, Any] = {"stowed": behind.stowed[-1], "parked": behind.parked}
    assert seen == {"stowed": "later", "parked": ["after"]}
    assert behind.restored == 1
