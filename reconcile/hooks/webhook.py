"""Webhook hooks: POST the request as JSON, read a JSON object back, over requests
(connections.py: the session, its proxies and TLS settings; deadline.py: one deadline for the
whole call)."""

from __future__ import annotations

import email.utils
import json
import logging
import math
import re
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import requests
from urllib3 import exceptions as http_errors

from reconcile.budget import Budget, BudgetExhausted
from reconcile.hooks.connections import HookConnections, Route
from reconcile.hooks.credentials import CredentialError, Credentials, ResolvedSecurity
from reconcile.hooks.deadline import CallWatch, CallWatcher
from reconcile.hooks.errors import (
    BODY_EXCERPT,
    MAX_RESPONSE_BYTES,
    HookError,
    HookResult,
    head_excerpt,
    one_line,
)
from reconcile.hooks.etag import EtagCache, cache_key
from reconcile.hooks.parse import parse_object
from reconcile.secret_values import scrub
from reconcile.specs.hook_hosts import host_allowed
from reconcile.specs.hooks import HookSpec, WebhookSpec

log = logging.getLogger("reconcile.hooks")

#: Retry-After when the 429 carries none (or one that cannot be read), in seconds.
DEFAULT_RETRY_AFTER = 1.0
#: The longest a single Retry-After is honoured, in seconds: a batch run must end.
MAX_RETRY_AFTER = 60.0
#: Connections kept per host, so concurrent hook calls reuse connections.
POOL_SIZE = 32
#: Who calls, as the hook server's logs show it.
USER_AGENT = "reconcile"

_ERRNO = re.compile(r"\[Errno -?\d+\] ([^'\")\]]+)")


def parse_retry_after(value: str | None, now: Callable[[], datetime] | None = None) -> float:
    """Seconds to wait from a Retry-After header (delay-seconds or an HTTP-date), falling back
    to DEFAULT_RETRY_AFTER and capped at MAX_RETRY_AFTER."""
    if value is None or not value.strip():
        return DEFAULT_RETRY_AFTER
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return DEFAULT_RETRY_AFTER
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now() if now else datetime.now(UTC))).total_seconds()
        seconds = max(seconds, 0.0)
    if not math.isfinite(seconds) or seconds < 0:
        return DEFAULT_RETRY_AFTER
    return min(seconds, MAX_RETRY_AFTER)


class WebhookTransport:
    """Thread-safe: one session (connection reuse) and one etag cache for a whole run."""

    def __init__(
        self,
        *,
        max_429_retries: int = 3,
        sleep: Callable[[float], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        budget: Budget | None = None,
        pool_size: int = POOL_SIZE,
        credentials: Credentials | None = None,
        allowed_hosts: tuple[str, ...] | None = None,
    ) -> None:
        self.max_429_retries = max_429_retries
        self.allowed_hosts = allowed_hosts  # --allowed-hook-hosts; None: any
        self.credentials = credentials or Credentials()
        self._budget = budget or Budget()
        self._sleep: Callable[[float], None] = sleep or self._wait
        self._clock = clock
        self.connections = HookConnections(pool_size)
        self.cache = EtagCache(clock)
        self._watcher = CallWatcher(self._budget)

    def close(self) -> None:
        self._watcher.close()
        self.connections.close()
        self.cache.clear()
        self.credentials.close()

    def _wait(self, seconds: float) -> None:
        self._budget.sleep(seconds)

    def call(self, hook: HookSpec, spec: WebhookSpec, request: dict[str, Any]) -> HookResult:
        """One call: each attempt bounded as a whole by the hook's timeout and the run's
        budget (deadline.py), however slowly the server answers."""
        with self._watcher.watching() as watch:
            return self._call(hook, spec, request, watch)

    def _call(
        self, hook: HookSpec, spec: WebhookSpec, request: dict[str, Any], watch: CallWatch
    ) -> HookResult:
        start = self._clock()
        try:
            route = self.connections.route(spec.url)  # the URL parsed, once
        except ValueError as exc:  # refused when the controller loads; here for other callers
            raise HookError(hook, "connection", f"request failed: invalid URL: {exc}") from None
        endpoint = route.endpoint
        if self.allowed_hosts is not None and not host_allowed(endpoint, self.allowed_hosts):
            raise HookError(
                hook,
                "host-not-allowed",
                f"{endpoint.authority} is not among the allowed hook hosts "
                f"({', '.join(self.allowed_hosts)}): not called",
            )
        try:
            security = self.credentials.resolve(spec.security)
        except CredentialError as exc:
            raise HookError(hook, "credentials", str(exc)) from None
        data = json.dumps(request, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": USER_AGENT,
        }
        if route.authorization is not None:
            headers["Authorization"] = route.authorization
        headers.update(security.headers)  # the hook's own auth wins over the URL's
        key = cache_key(spec.url, request) if spec.etag.enabled else None
        entry = self.cache.get(key, spec.etag.cache_cleanup_seconds) if key is not None else None
        if entry is not None:
            headers["If-None-Match"] = entry.etag

        response, timeout, attempts = self._post_with_retries(
            hook, spec, route, data, headers, watch, security
        )
        status = response.status_code
        log.debug(
            "%s: %s hook %s answered %d after %d attempt(s)",
            hook.owner,
            hook.name,
            spec.url,
            status,
            attempts,
        )
        if status in (304, 412) and entry is not None:
            self._give_back(response, watch)
            body = parse_object(hook, entry.body, "cached response body")
            return HookResult(body, self._clock() - start, cached=True, attempts=attempts)
        limit = MAX_RESPONSE_BYTES if status == 200 else BODY_EXCERPT * 4
        content = self._read(hook, response, limit, timeout, watch)
        if status != 200:
            excerpt = head_excerpt(content)
            detail = f"HTTP {status}"
            if response.reason:
                detail += f" {response.reason}"
            if status == 429:
                detail += f" after {attempts} attempts"
            elif status in (304, 412):
                detail += " but nothing is cached for this request"
            elif 300 <= status < 400:
                detail += " (redirects are not followed)"
            detail += f": {one_line(excerpt)}" if excerpt else " (empty body)"
            raise HookError(hook, "http-status", detail, status=status, excerpt=excerpt)

        body = parse_object(hook, content, "response body")
        if key is not None:
            etag = response.headers.get("ETag")
            if etag:
                self.cache.put(key, etag, bytes(content), spec.etag.cache_timeout_seconds)
            else:
                self.cache.forget(key)
        return HookResult(body, self._clock() - start, attempts=attempts)

    def _post_with_retries(
        self,
        hook: HookSpec,
        spec: WebhookSpec,
        route: Route,
        data: bytes,
        headers: dict[str, str],
        watch: CallWatch,
        security: ResolvedSecurity,
    ) -> tuple[requests.Response, float, int]:
        """The response (its body not read yet), its timeout and how many attempts it took:
        a 429 is retried `max_429_retries` times, honouring Retry-After within the budget."""
        attempts = 0
        while True:
            attempts += 1
            response, timeout = self._post(hook, spec, route, data, headers, watch, security)
            if response.status_code != 429 or attempts > self.max_429_retries:
                break
            self._give_back(response, watch)  # before waiting
            asked = response.headers.get("Retry-After")
            delay = parse_retry_after(asked)
            if delay >= self._budget.remaining():
                raise HookError(
                    hook,
                    "http-status",
                    f"HTTP 429 Too Many Requests: the server asked to retry after "
                    f"{asked or delay}s, past the end of the run's time budget",
                    status=429,
                )
            log.info(
                "%s: %s hook %s answered 429 Too Many Requests; retry %d/%d in %gs",
                hook.owner,
                hook.name,
                spec.url,
                attempts,
                self.max_429_retries,
                delay,
            )
            self._sleep(delay)

        return response, timeout, attempts

    def _read(
        self,
        hook: HookSpec,
        response: requests.Response,
        limit: int,
        timeout: float,
        watch: CallWatch,
    ) -> bytearray:
        """The body, streamed: a 200 over MAX_RESPONSE_BYTES fails the call; another status
        keeps only the start (the error's excerpt needs no more)."""
        # one growing buffer, not a list of chunks joined at the end: half the peak memory;
        # decoded (gzip, deflate) a chunk at a time, each at most 64 KiB once decoded
        body = bytearray()
        try:
            for chunk in response.iter_content(64 * 1024):
                body += chunk
                if len(body) <= limit:
                    continue
                if limit >= MAX_RESPONSE_BYTES:
                    mib = MAX_RESPONSE_BYTES // (1024 * 1024)
                    raise HookError(
                        hook, "too-large", f"response body over the {mib} MiB limit on a hook"
                    )
                break
        except _TRANSPORT_ERRORS as exc:
            if watch.cut:
                raise self._cut(hook, timeout) from None
            raise self._transport_error(hook, exc, timeout, bounded=True, reading=True) from None
        finally:
            self._give_back(response, watch)
        if watch.cut:  # what was read ended where the socket was cut
            raise self._cut(hook, timeout)
        return body

    def _give_back(self, response: requests.Response, watch: CallWatch) -> None:
        """The connection goes back to its pool: kept alive when the whole body was read,
        else closed (what is left of the body would be read as the next answer), as requests'
        close() does."""
        self._watcher.release(watch)
        response.close()

    def _cut(self, hook: HookSpec, timeout: float) -> Exception:
        """The call the watcher cut: the run's end, or the hook's own timeout."""
        if self._budget.expired:
            return BudgetExhausted(
                f"{hook.owner}: {hook.name} hook {hook.target}", self._budget.why()
            )
        return HookError(hook, "timeout", f"no complete response within the {timeout:g}s timeout")

    def _post(
        self,
        hook: HookSpec,
        spec: WebhookSpec,
        route: Route,
        data: bytes,
        headers: dict[str, str],
        watch: CallWatch,
        security: ResolvedSecurity,
    ) -> tuple[requests.Response, float]:
        """The response (its body not read yet) and the timeout it was given."""
        self._budget.check(f"{hook.owner}: {hook.name} hook {hook.target}")
        timeout = self._budget.bound(spec.timeout)
        self._watcher.start_attempt(watch, timeout)
        try:
            response = self.connections.send(
                route,
                data=data,
                headers=headers,
                timeout=timeout,
                ca_file=security.ca_file,
                client_cert=security.client_cert,
            )
        except _TRANSPORT_ERRORS as exc:
            if watch.cut:
                raise self._cut(hook, timeout) from None
            bounded = timeout < spec.timeout
            raise self._transport_error(hook, exc, timeout, bounded=bounded) from None
        if watch.cut:
            self._give_back(response, watch)
            raise self._cut(hook, timeout)
        return response, timeout

    def _transport_error(
        self,
        hook: HookSpec,
        exc: BaseException,
        timeout: float,
        *,
        bounded: bool,
        reading: bool = False,
    ) -> Exception:
        """BudgetExhausted when the request timed out because the run's budget ended (its
        timeout was cut short by it), else the HookError saying what went wrong."""
        exc = _cause(exc)
        if isinstance(exc, http_errors.TimeoutError) and bounded and self._budget.expired:
            return BudgetExhausted(
                f"{hook.owner}: {hook.name} hook {hook.target}", self._budget.why()
            )
        return _hook_error(hook, exc, timeout, reading=reading)


#: What a call may raise on its way: requests' errors, urllib3's own (a body read by
#: iter_content past what requests wraps), and the socket's.
_TRANSPORT_ERRORS = (requests.RequestException, http_errors.HTTPError, OSError)


def _cause(exc: BaseException) -> BaseException:
    """What urllib3 (or the socket) raised under requests' error: requests wraps urllib3's
    errors in its own (a failed connection in urllib3's MaxRetryError first), and the message
    says what urllib3 said."""
    if isinstance(exc, requests.RequestException) and exc.args:
        exc = exc.args[0] if isinstance(exc.args[0], BaseException) else exc
    if isinstance(exc, http_errors.MaxRetryError) and exc.reason is not None:
        exc = exc.reason
    return exc


def _hook_error(
    hook: HookSpec, exc: BaseException, timeout: float, *, reading: bool = False
) -> HookError:
    # urllib3's errors, as requests was given them (it retries nothing): NewConnectionError
    # is a ConnectTimeoutError too, for its older users, so it is looked at first.
    if isinstance(exc, http_errors.NewConnectionError):
        return HookError(hook, "connection", f"connection failed: {_connection_problem(exc)}")
    if isinstance(exc, http_errors.ConnectTimeoutError):
        return HookError(hook, "timeout", f"could not connect within the {timeout:g}s timeout")
    if isinstance(exc, http_errors.TimeoutError):
        if reading:
            return HookError(hook, "timeout", f"response stalled beyond the {timeout:g}s timeout")
        return HookError(hook, "timeout", f"no response within the {timeout:g}s timeout")
    if isinstance(exc, http_errors.SSLError):
        return HookError(hook, "tls", f"TLS failed: {_connection_problem(exc)}")
    if isinstance(exc, (http_errors.ProtocolError, http_errors.ProxyError, OSError)):
        return HookError(hook, "connection", f"connection failed: {_connection_problem(exc)}")
    return HookError(hook, "connection", f"request failed: {_connection_problem(exc)}")


def _connection_problem(exc: BaseException) -> str:
    # a proxy URL requests could not parse is quoted whole: its password is scrubbed
    text = scrub(str(exc))
    found = _ERRNO.search(text)
    if found:
        return found.group(1).strip()
    return one_line(f"{type(exc).__name__}: {text}") if text else type(exc).__name__
