"""`reconcile.records.dataclass` behaves as the standard decorator: the same equality, hash,
repr, immutability and rules for a class that brings its own methods."""

from __future__ import annotations

import dataclasses
from dataclasses import field
from typing import Any

import pytest

from reconcile.records import dataclass


@dataclass(frozen=True)
class Frozen:
    name: str
    count: int = 0
    cache: list[int] = field(default_factory=list, compare=False, repr=False)


@dataclass(frozen=True)
class Child(Frozen):
    extra: str = ""


@dataclass
class Mutable:
    name: str
    items: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class OwnHash:
    name: str

    def __hash__(self) -> int:
        return 7


@dataclass(frozen=True)
class OwnEq:
    name: str

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = None  # type: ignore[assignment]


def test_equality_and_hash_follow_the_compared_fields() -> None:
    assert Frozen("a", 1, [1]) == Frozen("a", 1, [2])  # `cache` is not compared
    assert Frozen("a", 1) != Frozen("a", 2)
    assert hash(Frozen("a", 1, [1])) == hash(Frozen("a", 1))
    assert len({Frozen("a"), Frozen("a"), Frozen("b")}) == 2
    assert Frozen("a") != Child("a")  # another class is never equal, as with the standard one
    assert Frozen("a").__eq__("a") is NotImplemented


def test_repr_shows_the_shown_fields_as_the_standard_decorator_does() -> None:
    assert repr(Frozen("a", 1, [1])) == "Frozen(name='a', count=1)"
    assert repr(Child("a", extra="x")) == "Child(name='a', count=0, extra='x')"
    assert repr(Mutable("m", ["x"])) == "Mutable(name='m', items=['x'])"


def test_a_frozen_record_refuses_assignment_and_a_mutable_one_has_no_hash() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Frozen("a").name = "b"  # type: ignore[misc]
    mutable = Mutable("m")
    mutable.name = "n"
    assert mutable == Mutable("n")
    with pytest.raises(TypeError, match="unhashable"):
        hash(mutable)


def test_a_class_keeps_the_methods_it_defines() -> None:
    assert hash(OwnHash("a")) == 7
    assert OwnEq("a") == OwnEq("b")
    # `__hash__ = None` beside an `__eq__` is what Python writes for any class defining
    # `__eq__`: the standard decorator still hashes a frozen one's fields, and so does this
    assert hash(OwnEq("a")) == hash(("a",))


def test_the_standard_helpers_still_work() -> None:
    record = Child("a", 2, extra="x")
    assert [f.name for f in dataclasses.fields(record)] == ["name", "count", "cache", "extra"]
    assert dataclasses.replace(record, count=3) == Child("a", 3, extra="x")
    assert dataclasses.asdict(record) == {"name": "a", "count": 2, "cache": [], "extra": "x"}
    assert dataclasses.is_dataclass(record)


def test_ordered_and_slotted_records_are_the_standard_decorators_own() -> None:
    @dataclass(frozen=True, order=True)
    class Ordered:
        rank: int

    @dataclass(frozen=True, slots=True)
    class Slotted:
        value: Any

    assert Ordered(1) < Ordered(2)
    assert Slotted(1) == Slotted(1) and not hasattr(Slotted(1), "__dict__")
