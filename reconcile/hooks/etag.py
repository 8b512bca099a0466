"""The webhook response cache behind `etag.enabled`: the last 200 body per (URL, request)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from reconcile.records import dataclass

CacheKey = tuple[str, str]


def cache_key(url: str, request: dict[str, Any]) -> CacheKey:
    """The URL and the request as canonical JSON (sorted keys, no spaces)."""
    return url, json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class CacheEntry:
    etag: str
    body: bytes  # the raw 200 body, parsed again on each hit so callers never share a dict
    stored: float  # clock reading when the 200 arrived
    timeout: float  # the hook's cache_timeout_seconds when it was stored

    def expired(self, now: float) -> bool:
        return now - self.stored > self.timeout


class EtagCache:
    """Thread-safe. Entries are forgotten `timeout` seconds after the 200 that stored them;
    expired entries are purged at most every `cleanup` seconds (each hook's own setting)."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._entries: dict[CacheKey, CacheEntry] = {}
        self._lock = threading.Lock()
        self._last_cleanup = clock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def get(self, key: CacheKey, cleanup: float) -> CacheEntry | None:
        """The live entry for `key`, if any; purges expired entries when a cleanup is due."""
        now = self._clock()
        with self._lock:
            if now - self._last_cleanup >= cleanup:
                self._purge(now)
            entry = self._entries.get(key)
            if entry is not None and entry.expired(now):
                del self._entries[key]
                return None
            return entry

    def put(self, key: CacheKey, etag: str, body: bytes, timeout: float) -> None:
        entry = CacheEntry(etag=etag, body=body, stored=self._clock(), timeout=timeout)
        with self._lock:
            self._entries[key] = entry

    def forget(self, key: CacheKey) -> None:
        with self._lock:
            self._entries.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def _purge(self, now: float) -> None:
        self._last_cleanup = now
        for key in [k for k, e in self._entries.items() if e.expired(now)]:
            del self._entries[key]
