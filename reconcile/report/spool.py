"""What a run keeps of its results while it goes on: the reports' material on disk, not in
memory (runner/keeper.py's ResultKeeper).

Held until the reports were written, the objects of every action a run applied were most of a
cold run's peak memory (50,000 children created: 739 MiB). So once a parent is done, its
actions' diffs (all any format shows of their content, Secret values already redacted) go to a
temporary file without a name, and the actions keep only their objects' identities; then the
actions and hook calls themselves go there too, read back on each use, the parent keeping only
the counts the run needs (`ParentResult.stow`): tens of thousands of small records held through
a pass would leave the heap too fragmented for the next pass's listing to reuse, and held all at
once for the reports, they were a cold run's peak. A pass the run is done with goes there as
well until the run ends (`restore`). The reports read each parent's actions and each diff back
as they render them. Should the file not take them (a full or read-only disk), they stay in
memory.
"""

from __future__ import annotations

import itertools
import logging
import os
import pickle
import tempfile
import threading
import weakref
import zlib
from collections import OrderedDict
from enum import Enum
from types import TracebackType
from typing import IO, Any, Self

from reconcile.engine.actions import Action
from reconcile.objects.meta import Obj
from reconcile.records import dataclass
from reconcile.report.diff import ActionDiff, action_diff
from reconcile.results import ActionResult, ControllerResult, HookCall, ParentResult

log = logging.getLogger("reconcile")

#: Diffs per record: a parent's actions are read back in order, a record at a time (a parent
#: with thousands of actions, a MapController's, is several records).
BATCH = 64
#: Parents whose actions and hook calls read back are kept, the last read first to go.
PARTS_KEPT = 8
_PROTOCOL = pickle.HIGHEST_PROTOCOL

#: What an action keeps of its objects once its diff is on disk: enough to name them.
_IDENTITY_METADATA = ("name", "generateName", "namespace", "uid")


def identity_only(obj: Obj | None) -> Obj | None:
    """`obj` reduced to what names it (apiVersion, kind, name, namespace, uid)."""
    if obj is None:
        return None
    out: Obj = {key: obj[key] for key in ("apiVersion", "kind") if key in obj}
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        out["metadata"] = {key: meta[key] for key in _IDENTITY_METADATA if key in meta}
    return out


class _Absent(Enum):
    """A field the object does not have (None may be a value)."""

    ABSENT = 0


_ABSENT = _Absent.ABSENT
_TOP = ("apiVersion", "kind")


@dataclass(frozen=True)
class StowedAction(Action):
    """An action whose objects were stowed once its parent was done: it still names its
    object (`target`, rebuilt when asked), and holds nothing else of it. One flat tuple rather
    than the object's dicts: a cold run keeps tens of thousands of these."""

    # `identity_only(target)`: apiVersion, kind, then the metadata fields (_IDENTITY_METADATA)
    names: tuple[Any, ...] = ()
    has_metadata: bool = True
    observed_uid: str = ""  # `Action.uid`: the uid of the object observed

    @property
    def target(self) -> Obj:
        out: Obj = {k: v for k, v in zip(_TOP, self.names, strict=False) if v is not _ABSENT}
        if self.has_metadata:
            fields = zip(_IDENTITY_METADATA, self.names[len(_TOP) :], strict=True)
            out["metadata"] = {k: v for k, v in fields if v is not _ABSENT}
        return out

    @property
    def uid(self) -> str:
        return self.observed_uid


def without_content(action: Action) -> StowedAction:
    """`action` as a report still needs it once its diff is stowed: kind, resource, reason,
    group and the name of its object."""
    target = action.target
    meta = target.get("metadata")
    has_metadata = isinstance(meta, dict)
    fields = meta if isinstance(meta, dict) else {}
    names = (
        *(target.get(key, _ABSENT) for key in _TOP),
        *(fields.get(key, _ABSENT) for key in _IDENTITY_METADATA),
    )
    return StowedAction(
        action.kind,
        action.resource,
        None,
        None,
        action.reason,
        action.group,
        None,
        names=names,
        has_metadata=has_metadata,
        observed_uid=action.uid,
    )


@dataclass(frozen=True, slots=True)
class SpooledDiff:
    """One action's diff in the spool: the `index`-th of the record at `offset`."""

    spool: DiffSpool
    offset: int
    size: int
    index: int

    def load(self) -> ActionDiff:
        return self.spool.diff(self.offset, self.size, self.index)


class _NotKept:
    """The diff of an action of a run that writes no report: not kept at all."""

    def load(self) -> ActionDiff:
        raise LookupError("this run writes no report: the actions' diffs were not kept")


_NOT_KEPT = _NotKept()


class ForgetContent:
    """For a run that writes no report: a finished parent's actions keep their objects'
    identities only, and no diff."""

    def stow(self, parent: ParentResult) -> None:
        for result in parent.actions:
            if result.stowed is None:
                result.stowed = _NOT_KEPT
                result.action = without_content(result.action)

    def park(self, controllers: list[ControllerResult]) -> None:
        pass

    def restore(self) -> None:
        pass


@dataclass(frozen=True, slots=True)
class SpooledParts:
    """A parent's actions and hook calls in the spool: the record at `offset`."""

    spool: DiffSpool
    offset: int
    size: int

    def load(self) -> tuple[list[ActionResult], list[HookCall]]:
        return self.spool.parts(self.offset, self.size)


class DiffSpool:
    """A temporary file without a name (made on the first write, in `directory`, by default the
    system's temporary directory) of compressed records: the diffs of a finished parent's
    actions, a batch at a time (`stow`), and the results of passes the run is done with
    (`park`, until `restore`). Thread-safe: parents finish on worker threads; the reports read
    the diffs back in order, a batch at a time (the last one read is kept)."""

    def __init__(self, directory: str | None = None) -> None:
        self._directory = directory
        self._lock = threading.Lock()
        self._file: IO[bytes] | None = None
        self._size = 0
        self._unflushed = False
        self._broken = False  # a write failed: what comes next stays in memory
        self._parked: list[tuple[ControllerResult, int, int]] = []
        self._batch: tuple[int, list[ActionDiff]] | None = None  # the last batch read
        self._parts: OrderedDict[int, tuple[list[ActionResult], list[HookCall]]] = OrderedDict()
        self._token = next(_TOKENS)
        _OPEN[self._token] = self

    def __reduce__(self) -> tuple[Any, tuple[int]]:
        """Records name this spool, in this process, by its token."""
        return _open_spool, (self._token,)

    def stow(self, parent: ParentResult) -> None:
        """`parent`'s actions' diffs to the spool, the actions keeping their objects'
        identities only; then the actions and hook calls themselves, read back on each use. On a
        failure to write, they stay in memory (said once in the log)."""
        if parent.stowed is not None:
            return
        todo = [r for r in parent.actions if r.stowed is None]
        for start in range(0, len(todo), BATCH):
            batch = todo[start : start + BATCH]
            record = _compressed(pickle.dumps([action_diff(r.action) for r in batch], _PROTOCOL))
            offset = self._append(record)
            if offset is None:
                return
            for index, result in enumerate(batch):
                result.stowed = SpooledDiff(self, offset, len(record), index)
                result.action = without_content(result.action)
        if not parent.actions:
            return  # (a converged parent's one hook call is smaller than its record)
        record = self._pickled((parent.actions, parent.hooks))
        offset = self._append(record)
        if offset is not None:
            parent.stow(SpooledParts(self, offset, len(record)))

    def park(self, controllers: list[ControllerResult]) -> None:
        """Each controller's parents to the spool (emptied in memory) until `restore`."""
        for controller in controllers:
            if not controller.parents:
                continue
            record = self._pickled(controller.parents)
            offset = self._append(record)
            if offset is None:
                return
            self._parked.append((controller, offset, len(record)))
            controller.parents = []

    def restore(self) -> None:
        """Every parked controller's parents back (their actions and hook calls stay in the
        spool, read back on each use: `results.StowedList`)."""
        for controller, offset, size in self._parked:
            controller.parents = self._unpickled(offset, size)
        self._parked = []

    def parts(self, offset: int, size: int) -> tuple[list[ActionResult], list[HookCall]]:
        """A parent's actions and hook calls: the last few read are kept (a report reads one
        parent's several times in a row)."""
        with self._lock:
            found = self._parts.get(offset)
            if found is not None:
                self._parts.move_to_end(offset)
                return found
        actions, hooks = self._unpickled(offset, size)
        with self._lock:
            self._parts[offset] = (actions, hooks)
            while len(self._parts) > PARTS_KEPT:
                self._parts.popitem(last=False)
        return actions, hooks

    def _pickled(self, value: object) -> bytes:
        return _compressed(pickle.dumps(value, _PROTOCOL))

    def _unpickled(self, offset: int, size: int) -> Any:
        return pickle.loads(self._record(offset, size))

    def diff(self, offset: int, size: int, index: int) -> ActionDiff:
        """The `index`-th diff of the batch at `offset`."""
        with self._lock:
            if self._batch is None or self._batch[0] != offset:
                self._batch = (offset, pickle.loads(self._read(offset, size)))
            diff = self._batch[1][index]
        assert isinstance(diff, ActionDiff)
        return diff

    def _append(self, record: bytes) -> int | None:
        """Where `record` starts in the file once written after everything before it; None
        when it cannot be written (said once in the log; nothing is written after that)."""
        with self._lock:
            if self._broken:
                return None
            try:
                if self._file is None:
                    # no name, so nothing is left behind; closed by `close` (or the process end)
                    self._file = tempfile.TemporaryFile(  # noqa: SIM115
                        prefix="reconcile-", dir=self._directory
                    )
                self._file.write(record)
            except OSError as exc:
                self._broken = True
                log.warning(
                    "could not keep the report's diffs in a temporary file (%s): keeping them "
                    "in memory",
                    exc.strerror or exc,
                )
                return None
            offset = self._size
            self._size += len(record)
            self._unflushed = True
            return offset

    def _record(self, offset: int, size: int) -> bytes:
        with self._lock:
            return self._read(offset, size)

    def _read(self, offset: int, size: int) -> bytes:
        """A record, decompressed (the lock held)."""
        if self._file is None:
            raise ValueError("the spool is closed")
        if self._unflushed:
            self._file.flush()
            self._unflushed = False
        data = os.pread(self._file.fileno(), size, offset)
        if len(data) != size:
            raise OSError(f"the report's spool ended early: {len(data)} of {size} bytes")
        return zlib.decompress(data)

    @property
    def size(self) -> int:
        """Bytes written so far."""
        with self._lock:
            return self._size

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None
            self._batch = None
            self._parts.clear()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


#: Spools open in this process, by token: a record refers to the spool its diffs are in by
#: its token (`DiffSpool.__reduce__`), not by value. (A pickler's persistent_id would do it
#: too, but is called back for every object pickled: pickling took 4.7x as long.)
_OPEN: weakref.WeakValueDictionary[int, DiffSpool] = weakref.WeakValueDictionary()
_TOKENS = itertools.count(1)


def _open_spool(token: int) -> DiffSpool:
    spool = _OPEN.get(token)
    if spool is None:
        raise pickle.UnpicklingError(f"a record names spool {token}, which is not open")
    return spool


def _compressed(data: bytes) -> bytes:
    # the fastest level: records are many and small; it still shrinks a parent's batch of
    # alike diffs several times (the CronJob's temporary directory has a size limit)
    return zlib.compress(data, 1)
