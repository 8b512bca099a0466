"""`dataclass`, as the standard library's, quicker to define: every module of the package
declares its records with it.

Python 3.11's decorator compiles each method it writes from source (`exec`), about a
millisecond a frozen class with `__eq__`, `__hash__` and `__repr__`; a run defines about a
hundred such classes before its first request, a fifth of its start-up. Here the standard
decorator writes `__init__` (and a frozen class's `__setattr__` and `__delattr__`), and
`__eq__`, `__hash__` and `__repr__` are shared functions reading the fields through one
`operator.attrgetter`: the same results (fields compared, hashed and shown as the standard
decorator does, with its rules for a class that defines its own), without compiling anything.
`dataclasses.fields`, `replace` and `asdict` work as ever: the class is a dataclass.
`order`, `slots` and `unsafe_hash` go to the standard decorator whole."""

from __future__ import annotations

import dataclasses
import operator
import reprlib
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

T = TypeVar("T")


@overload
def dataclass(cls: type[T], /) -> type[T]: ...


@overload
def dataclass(
    *,
    init: bool = True,
    repr: bool = True,
    eq: bool = True,
    order: bool = False,
    unsafe_hash: bool = False,
    frozen: bool = False,
    kw_only: bool = False,
    slots: bool = False,
) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def dataclass(
    cls: type[T] | None = None,
    /,
    *,
    init: bool = True,
    repr: bool = True,
    eq: bool = True,
    order: bool = False,
    unsafe_hash: bool = False,
    frozen: bool = False,
    kw_only: bool = False,
    slots: bool = False,
) -> type[T] | Callable[[type[T]], type[T]]:
    def wrap(record: type[T]) -> type[T]:
        if order or slots or unsafe_hash or not eq:
            return dataclasses.dataclass(
                record,
                init=init,
                repr=repr,
                eq=eq,
                order=order,
                unsafe_hash=unsafe_hash,
                frozen=frozen,
                kw_only=kw_only,
                slots=slots,
            )
        body = dict(record.__dict__)
        made = dataclasses.dataclass(
            record, init=init, repr=False, eq=False, frozen=frozen, kw_only=kw_only
        )
        _add_eq_and_hash(made, body, frozen)
        if repr and "__repr__" not in body:
            setattr(made, "__repr__", _repr)  # noqa: B010
        return made

    return wrap if cls is None else wrap(cls)


def _getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    if not names:
        return lambda _: ()
    if len(names) == 1:
        name = names[0]
        return lambda obj: (getattr(obj, name),)
    return operator.attrgetter(*names)


def _add_eq_and_hash(record: type[Any], body: dict[str, Any], frozen: bool) -> None:
    fields = dataclasses.fields(record)
    compared = _getter(tuple(f.name for f in fields if f.compare))
    hashed = _getter(tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash)))
    # (set with setattr: methods assigned to a class after its definition)
    setattr(record, "__compared__", staticmethod(compared))  # noqa: B010
    if "__eq__" not in body:
        setattr(record, "__eq__", _eq)  # noqa: B010
    # the standard decorator's rule (eq=True, unsafe_hash=False): a hash the class defines is
    # kept; else a frozen record hashes its fields, and a mutable one has none
    own_hash = body.get("__hash__", dataclasses.MISSING)
    if own_hash is not dataclasses.MISSING and not (own_hash is None and "__eq__" in body):
        return
    if frozen:
        setattr(record, "__hashed__", staticmethod(hashed))  # noqa: B010
        setattr(record, "__hash__", _hash)  # noqa: B010
    else:
        setattr(record, "__hash__", None)  # noqa: B010


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        compared = self.__compared__
        return compared(self) == compared(other)
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(self.__hashed__(self))


@reprlib.recursive_repr()
def _repr(self: Any) -> str:
    shown = ", ".join(
        f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self) if f.repr
    )
    return f"{self.__class__.__qualname__}({shown})"
