"""HookCaller: one per run; sends each hook call to its transport."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from reconcile.budget import Budget
from reconcile.hooks.command import CommandTransport
from reconcile.hooks.credentials import Credentials, ObjectReader
from reconcile.hooks.errors import HookResult
from reconcile.hooks.lines import LinesTransport
from reconcile.specs.hooks import CommandProtocol, HookSpec

if TYPE_CHECKING:
    from reconcile.hooks.webhook import WebhookTransport


class HookCaller:
    """Calls hooks: webhooks over one shared `requests.Session` (connection reuse) with the etag
    cache, local commands as subprocesses (one per call, or with `protocol: lines` at most
    `workers` long-lived ones per hook). Thread-safe; one per run; `close()` it at the end (or
    use it as a context manager), or `stop_processes()` at the end of each run.

    `max_429_retries` bounds the retries of a webhook answering 429; `sleep` waits out its
    Retry-After; `clock` times calls and ages the etag cache; `base_dir` is where a command's
    relative `working_dir` is resolved (and its default working directory; default: the current
    directory). `budget` bounds every call and wait (default: unlimited). `read_object` reads the
    Secrets and ConfigMaps webhooks' TLS and authentication settings name.
    """

    def __init__(
        self,
        *,
        max_429_retries: int = 3,
        sleep: Callable[[float], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        base_dir: Path | None = None,
        budget: Budget | None = None,
        pool_size: int | None = None,
        read_object: ObjectReader | None = None,
        allowed_hosts: tuple[str, ...] | None = None,
        workers: int = 8,
    ) -> None:
        budget = budget or Budget()

        def webhooks() -> WebhookTransport:
            # Imported here, at the first webhook call: requests, urllib3 and ssl are a fifth
            # of the start-up of a run whose hooks are all commands.
            from reconcile.hooks.webhook import POOL_SIZE, WebhookTransport

            return WebhookTransport(
                max_429_retries=max_429_retries,
                sleep=sleep,
                clock=clock,
                budget=budget,
                pool_size=POOL_SIZE if pool_size is None else pool_size,
                credentials=Credentials(read_object),
                allowed_hosts=allowed_hosts,
            )

        self._new_webhooks = webhooks
        self._webhooks: WebhookTransport | None = None
        self._commands = CommandTransport(base_dir=base_dir, clock=clock, budget=budget)
        self._lines = LinesTransport(base_dir=base_dir, clock=clock, budget=budget, workers=workers)
        self._lock = threading.Lock()
        self._calls = 0

    def call(self, hook: HookSpec, request: dict[str, Any]) -> HookResult:
        """Call `hook` with `request`; the response object, or HookError."""
        if hook.webhook is None and hook.command is None:
            raise ValueError(f"{hook.owner}: {hook.name} hook has neither webhook nor command")
        with self._lock:
            self._calls += 1
            if hook.webhook is not None and self._webhooks is None:
                self._webhooks = self._new_webhooks()
            webhooks = self._webhooks
        if hook.webhook is not None:
            assert webhooks is not None
            return webhooks.call(hook, hook.webhook, request)
        assert hook.command is not None
        if hook.command.protocol is CommandProtocol.LINES:
            return self._lines.call(hook, hook.command, request)
        return self._commands.call(hook, hook.command, request)

    @property
    def calls(self) -> int:
        """Hook calls made so far (retries of one call count once; failed calls count)."""
        with self._lock:
            return self._calls

    def stop_processes(self) -> None:
        """Stop the long-lived command processes (the next call starts new ones)."""
        self._lines.close()

    def close(self) -> None:
        """Ends the command processes and the webhooks' connections and credential files; a
        later call starts afresh."""
        self._lines.close()
        with self._lock:
            webhooks, self._webhooks = self._webhooks, None
        if webhooks is not None:  # none was made when no webhook was called
            webhooks.close()

    def __enter__(self) -> HookCaller:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
