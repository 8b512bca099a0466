"""`--lock NAMESPACE/NAME`: a `coordination.k8s.io/v1` Lease held while a run writes, so that two
runs (a CronJob's next one, a hand-run one) never both write.

The lease is taken before the first write, for longer than the run's budget; renewed at every
pass; released (holder cleared) at the end. A run that finds a live lease held by another run
does nothing and says who holds it until when; an expired lease is taken over. Every change of
the lease carries its resourceVersion, so two runs racing for it cannot both win.
"""

from __future__ import annotations

import logging
import math
import os
import socket
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from reconcile.budget import BudgetExhausted
from reconcile.cluster.errors import AlreadyExists, ApiError, Conflict, NotFound
from reconcile.cluster.protocol import Cluster
from reconcile.config import ReconcileSettings, Shard
from reconcile.objects.meta import Obj
from reconcile.records import dataclass
from reconcile.results import RunResult

log = logging.getLogger(__name__)

LEASE_API = "coordination.k8s.io/v1"
INT32_MAX = 2**31 - 1
MARGIN_SECONDS = 30  # beyond the budget: time to write reports and release


@dataclass(frozen=True)
class Held:
    """Another run holds the lock."""

    holder: str
    until: datetime

    def describe(self, where: str) -> str:
        return (
            f"locked by {self.holder} (Lease {where}) until "
            f"{self.until.strftime('%Y-%m-%dT%H:%M:%SZ')}"
        )


def default_holder() -> str:
    """The pod's name in a CronJob (POD_NAME from the downward API), else host and pid."""
    return os.environ.get("POD_NAME") or f"{socket.gethostname()}-{os.getpid()}"


class RunLock:
    def __init__(
        self,
        cluster: Cluster,
        where: str,
        *,
        holder: str,
        budget_seconds: float,
        now: Callable[[], datetime] | None = None,
    ) -> None:
        namespace, _, name = where.rpartition("/")
        self.cluster = cluster
        self.namespace = namespace or "default"
        self.name = name
        self.where = f"{self.namespace}/{self.name}"
        self.holder = holder
        # leaseDurationSeconds is an int32: a longer budget holds the lease for its maximum.
        self.duration = min(math.ceil(budget_seconds) + MARGIN_SECONDS, INT32_MAX)
        self._now = now or (lambda: datetime.now(UTC))
        self._lease: Obj | None = None

    def acquire(self) -> Held | None:
        """Take the lease; None when taken, else who holds it. Raises ApiError."""
        leases = self.cluster.discover(LEASE_API, "leases")
        try:
            current = self.cluster.get(leases, self.name, namespace=self.namespace)
        except NotFound:
            try:
                self._lease = self.cluster.create(leases, self._spec({}, transitions=0))
                log.info("took the lock: Lease %s", self.where)
                return None
            except AlreadyExists:
                current = self.cluster.get(leases, self.name, namespace=self.namespace)
        held = self._held_by_another(current)
        if held is not None:
            return held
        spec = current.get("spec") or {}
        transitions = int(spec.get("leaseTransitions") or 0)
        if spec.get("holderIdentity") != self.holder:
            transitions += 1
        try:
            self._lease = self.cluster.update(leases, self._spec(current, transitions))
        except Conflict:  # another run took it between the read and the write
            return self._held_by_another(
                self.cluster.get(leases, self.name, namespace=self.namespace)
            ) or Held("another run", self._now())
        log.info("took the lock: Lease %s", self.where)
        return None

    def renew(self) -> None:
        """Push the expiry on (at every pass). A failure is logged: the lease outlives the
        budget anyway."""
        if self._lease is None:
            return
        try:
            leases = self.cluster.discover(LEASE_API, "leases")
            lease = dict(self._lease)
            lease["spec"] = {**(lease.get("spec") or {}), "renewTime": self._stamp()}
            self._lease = self.cluster.update(leases, lease)
        except ApiError as exc:
            log.warning("could not renew the lock (Lease %s): %s", self.where, exc)

    def release(self) -> None:
        if self._lease is None:
            return
        try:
            leases = self.cluster.discover(LEASE_API, "leases")
            lease = dict(self._lease)
            spec = {k: v for k, v in (lease.get("spec") or {}).items() if k != "holderIdentity"}
            lease["spec"] = {**spec, "leaseDurationSeconds": 1, "renewTime": self._stamp()}
            self.cluster.update(leases, lease)
            log.info("released the lock: Lease %s", self.where)
        except (ApiError, BudgetExhausted) as exc:
            log.warning(
                "could not release the lock (Lease %s): %s; it expires by itself", self.where, exc
            )
        self._lease = None

    def _held_by_another(self, lease: Obj) -> Held | None:
        spec = lease.get("spec") or {}
        holder = spec.get("holderIdentity")
        if not holder or holder == self.holder:
            return None
        renewed = _parse_time(spec.get("renewTime") or spec.get("acquireTime"))
        seconds = int(spec.get("leaseDurationSeconds") or 0)
        if renewed is None:
            return None
        until = renewed + timedelta(seconds=seconds)
        if until <= self._now():
            log.warning("taking over the expired lock (Lease %s, held by %s)", self.where, holder)
            return None
        return Held(str(holder), until)

    def _spec(self, current: Obj, transitions: int) -> Obj:
        now = self._stamp()
        lease: Obj = {
            "apiVersion": LEASE_API,
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
        }
        if current:
            lease["metadata"] = current["metadata"]  # its resourceVersion: the precondition
        lease["spec"] = {
            "holderIdentity": self.holder,
            "leaseDurationSeconds": self.duration,
            "acquireTime": now,
            "renewTime": now,
            "leaseTransitions": transitions,
        }
        return lease

    def _stamp(self) -> str:
        return self._now().strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parse_time(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    text = value.replace("Z", "+00:00")
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def take_lock(
    cluster: Cluster, lease: str, settings: ReconcileSettings, result: RunResult
) -> RunLock | None:
    """`--lock`'s Lease (`lease`: NAMESPACE/NAME), taken; None when the run must not go on:
    skipped (another holds it, said in `result.skipped`) or failed (in `result.load_errors`)."""
    lock = RunLock(
        cluster,
        shard_lock_name(lease, settings.shard),
        holder=settings.lock_holder or default_holder(),
        budget_seconds=settings.max_duration,
    )
    try:
        held = lock.acquire()
    except (ApiError, BudgetExhausted) as exc:
        result.load_errors.append(f"--lock {lock.where}: the lock could not be taken: {exc}")
        return None
    if held is not None:
        result.skipped = held.describe(lock.where)
        log.warning("skipped: %s", result.skipped)
        return None
    return lock


def shard_lock_name(lock: str, shard: Shard) -> str:
    """Each shard holds its own Lease: `NAME-INDEX-of-COUNT` (the shards of one run never wait
    for each other; two processes of the same shard never both write)."""
    if shard.everything:
        return lock
    return f"{lock}-{shard.index}-of-{shard.count}"
