"""A process crash at a chosen point: a `Cluster` that lets N mutating requests through and
then dies (raises `Crash`, which nothing in reconcile catches), like a SIGKILL between two
requests. The requests themselves are real; only the process "stops"."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from reconcile.cluster.protocol import Cluster
from reconcile.cluster.types import Obj
from tests.support.wrapped import ForwardingCluster

_T = TypeVar("_T")


class Crash(BaseException):  # BaseException: no `except Exception` in the code under test
    pass


class CrashingCluster(ForwardingCluster):
    """Dies at its (`writes_allowed` + 1)-th write: before sending it, or with `after` once the
    write is done (the server did it; the process never learns). `where` says which write."""

    def __init__(self, inner: Cluster, writes_allowed: int, *, after: bool = False) -> None:
        super().__init__(inner)
        self.left = writes_allowed
        self.after = after
        self.where = ""

    def write(self, what: str, body: Obj | None, call: Callable[[], _T]) -> _T:
        if self.left <= 0 and not self.after:
            self.where = f"before {what}"
            raise Crash()
        self.left -= 1
        result = call()
        if self.after and self.left < 0:
            self.where = f"after {what}"
            raise Crash()
        return result
