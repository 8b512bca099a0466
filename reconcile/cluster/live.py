"""The live backend: a real API server through the official `kubernetes` client.

The client's settings and connection pool carry auth, TLS, proxies, exec plugins and token
refresh; the requests are ours (bodies plain JSON dicts, sent compact). Every request is
counted, rate limited client-side, and mapped to the typed errors of `errors.py`. Reads
retry on 429 / 5xx / connection errors with backoff, honouring Retry-After; writes retry only
on 429, which the server did not process.
"""

from __future__ import annotations

import contextlib
import copy
import datetime
import json
import logging
import random
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

import urllib3

from reconcile.budget import Budget, BudgetExhausted
from reconcile.cluster.discovery import find_resource, parse_resource_list
from reconcile.cluster.errors import (
    ApiError,
    NotFound,
    TooManyRequests,
    Unavailable,
    error_from_status,
)
from reconcile.cluster.paging import Query, decoded_page, list_query, pipelined_pages
from reconcile.cluster.pool import connection_pool
from reconcile.cluster.protocol import target_namespace, with_type
from reconcile.cluster.ratelimit import AdaptiveRate, FixedRate
from reconcile.cluster.stats import RequestStats
from reconcile.cluster.types import Obj, ObjectList, Propagation, ResourceInfo
from reconcile.objects.meta import metadata, name_of
from reconcile.records import dataclass

if TYPE_CHECKING:
    from kubernetes.client import Configuration

log = logging.getLogger(__name__)

_READ_METHODS = frozenset({"GET"})
DRY_RUN_ALL = ("dryRun", "All")


@dataclass(frozen=True)
class LiveOptions:
    qps: float | None = None  # None: adaptive (AdaptiveRate); 0: no limit
    burst: int = 100
    request_timeout: float = 30.0
    max_retries: int = 5
    max_backoff: float = 10.0
    pool_size: int = 16
    # The API server names the field manager of a create or update after it (server-side
    # apply names its own)
    user_agent: str = "reconcile"


class LiveCluster:
    """`Cluster` on a real API server."""

    def __init__(
        self,
        configuration: Configuration,
        options: LiveOptions | None = None,
        *,
        sleep: Callable[[float], None] | None = None,
        budget: Budget | None = None,
    ) -> None:
        self.options = options or LiveOptions()
        # Every wait is bounded by the run's budget, and wakes at once when it is cancelled.
        self._budget = budget or Budget()
        if not configuration.verify_ssl:
            # The user chose insecure-skip-tls-verify; like kubectl, say so once, not per request.
            warnings.filterwarnings("ignore", category=urllib3.exceptions.InsecureRequestWarning)
            log.debug("TLS verification is off for %s", configuration.host)
        self._configuration = configuration
        self._host = configuration.host.rstrip("/")
        # Requests go straight to a pool built from the client's settings (its TLS settings,
        # client certificate and proxy; `pool`): the client's own request path walks each body
        # to serialize it and copies it again, about a tenth of a millisecond a write.
        self._pool = connection_pool(configuration, self.options.pool_size)
        self._sleep: Callable[[float], None] = sleep or self._wait
        self._limiter: FixedRate = (
            AdaptiveRate(burst=self.options.burst, sleep=self._sleep)
            if self.options.qps is None
            else FixedRate(self.options.qps, self.options.burst, sleep=self._sleep)
        )
        self.stats = RequestStats()
        self._discovery: dict[str, list[ResourceInfo] | None] = {}
        self._discovery_lock = threading.Lock()
        # the server's release, once known (a dict: shared with dry_run_view's copies)
        self._release: dict[str, str] = {}
        self._release_lookup: threading.Thread | None = None
        self._dry_run = False

    def look_up_release(self) -> None:
        """Ask the server's release (GET /version) now, in the background: a run reads it
        before planning any owned kind, and the request is then in flight while the run's
        other modules load. `server_release()` waits for this answer rather than ask again."""

        def look_up() -> None:
            # a failure is met again, and reported, by the run's own call
            with contextlib.suppress(Exception):
                self.server_release()

        lookup = threading.Thread(target=look_up, name="server-release", daemon=True)
        self._release_lookup = lookup
        lookup.start()

    def close(self) -> None:
        self._pool.clear()

    def dry_run_view(self) -> LiveCluster:
        """This client (connection, rate limit, stats and discovery shared) sending every
        mutating request with `dryRun=All`. Close the client it came from, not the view."""
        view = copy.copy(self)
        view._dry_run = True
        return view

    def _wait(self, seconds: float) -> None:
        self._budget.sleep(seconds)

    # -- transport ---------------------------------------------------------------------------

    def _send(
        self,
        verb: str,
        stats_key: str,
        method: str,
        path: str,
        query: list[tuple[str, str]] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        raw: bool = False,
    ) -> Any:
        """The answer decoded from JSON (None when empty), or its body as it came (`raw`)."""
        attempt = 0
        while True:
            self._budget.check(f"{method} {path}")
            try:
                return self._send_once(
                    verb, stats_key, method, path, query, body, content_type, raw
                )
            except (TooManyRequests, Unavailable) as exc:
                retryable = method in _READ_METHODS or isinstance(exc, TooManyRequests)
                if not retryable or attempt >= self.options.max_retries:
                    raise
                delay = self._backoff(attempt, exc.retry_after)
                if delay >= self._budget.remaining():
                    raise  # waiting would outlast the run: fail now, with the server's answer
                log.warning(
                    "%s; retry %d/%d in %.2fs",
                    exc.message,
                    attempt + 1,
                    self.options.max_retries,
                    delay,
                )
                self.stats.record_retry(verb)
                self._sleep(delay)
                attempt += 1

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.options.max_backoff)
        base: float = min(0.1 * (2**attempt), self.options.max_backoff)
        return base * (0.5 + random.random() / 2)

    def _send_once(
        self,
        verb: str,
        stats_key: str,
        method: str,
        path: str,
        query: list[tuple[str, str]] | None,
        body: Any,
        content_type: str,
        raw: bool = False,
    ) -> Any:
        self._limiter.acquire(self._budget)
        self.stats.record(verb, stats_key)
        if self._dry_run and method not in _READ_METHODS:
            query = [*(query or []), DRY_RUN_ALL]
        url = self._host + path
        if query:
            url += "?" + urlencode(query, quote_via=quote)
        headers = {
            "Accept": "application/json",
            "Content-Type": content_type,
            "User-Agent": self.options.user_agent,
        }
        # The client's own auth settings: a token refreshed by its hook (exec plugins,
        # in-cluster token files) before each request, as its own requests do
        auth = self._configuration.auth_settings().get("BearerToken")
        if auth and auth.get("value"):
            headers["Authorization"] = str(auth["value"])
        timeout = self._budget.bound(self.options.request_timeout)
        started = time.monotonic()
        try:
            response = self._pool.urlopen(
                method,
                url,
                body=_encoded(body),
                headers=headers,
                timeout=urllib3.Timeout(total=timeout),
                retries=False,
                redirect=False,
            )
            data = response.data
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            self.stats.record_code(verb, "0")
            self._limiter.record(0, time.monotonic() - started)
            if not _timed_out(exc):
                raise Unavailable(f"{method} {path}: {exc}", status=0) from exc
            if timeout < self.options.request_timeout and self._budget.expired:
                raise BudgetExhausted(f"{method} {path}", self._budget.why()) from exc
            raise Unavailable(
                f"{method} {path}: no response within {timeout:g}s", status=0
            ) from exc
        finally:
            self.stats.add_seconds(time.monotonic() - started)
        self.stats.record_code(verb, str(response.status))
        self._limiter.record(response.status, time.monotonic() - started)
        if response.status >= 400:
            raise error_from_status(response.status, data, response.headers.get("Retry-After"))
        if raw:
            return data
        return json.loads(data) if data else None

    # -- discovery ---------------------------------------------------------------------------

    def _resource_list(self, api_version: str, refresh: bool) -> list[ResourceInfo] | None:
        with self._discovery_lock:
            if not refresh and api_version in self._discovery:
                return self._discovery[api_version]
        path = f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"
        try:
            document = self._send("discover", api_version, "GET", path)
            resources: list[ResourceInfo] | None = parse_resource_list(api_version, document)
        except NotFound:
            resources = None
        with self._discovery_lock:
            self._discovery[api_version] = resources
        return resources

    def discover(self, api_version: str, resource: str) -> ResourceInfo:
        for refresh in (False, True):
            resources = self._resource_list(api_version, refresh)
            found = find_resource(resources or [], resource)
            if found is not None:
                return found
        raise NotFound(f"the server has no resource {resource!r} in apiVersion {api_version!r}")

    def preferred_version(self, group: str) -> str:
        if not group:
            return "v1"
        document = self._send("discover", group, "GET", f"/apis/{group}")
        preferred = document.get("preferredVersion") or {}
        version = preferred.get("groupVersion") if isinstance(preferred, dict) else None
        if not isinstance(version, str) or not version:
            raise NotFound(f"the server has no preferred version for API group {group!r}")
        return version

    def server_release(self) -> str:
        lookup = self._release_lookup
        if lookup is not None and lookup is not threading.current_thread():
            lookup.join()
        with self._discovery_lock:
            if "release" in self._release:
                return self._release["release"]
        try:
            document = self._send("discover", "version", "GET", "/version") or {}
        except ApiError:
            document = {}
        major = str(document.get("major") or "") if isinstance(document, dict) else ""
        minor = str(document.get("minor") or "") if isinstance(document, dict) else ""
        minor = "".join(c for c in minor if c.isdigit())  # `28+` on some providers
        release = f"{major}.{minor}" if major and minor else ""
        with self._discovery_lock:
            self._release["release"] = release
        return release

    def served_resources(self) -> list[ResourceInfo]:
        versions = ["v1"]
        groups = self._send("discover", "", "GET", "/apis") or {}
        for group in groups.get("groups") or []:
            preferred = (group.get("preferredVersion") or {}) if isinstance(group, dict) else {}
            version = preferred.get("groupVersion") if isinstance(preferred, dict) else None
            if isinstance(version, str) and version:
                versions.append(version)
        out: list[ResourceInfo] = []
        for api_version in versions:
            out += self._resource_list(api_version, refresh=False) or []
        return out

    # -- verbs -------------------------------------------------------------------------------

    def list(
        self,
        resource: ResourceInfo,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
    ) -> ObjectList:
        query = list_query(label_selector, field_selector, limit, continue_token)
        body = self._list_body(resource, namespace, query)
        return decoded_page(resource, body)

    def pages(
        self,
        resource: ResourceInfo,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        page_size: int = 500,
    ) -> Iterator[ObjectList]:
        """Every page of a LIST, the next one asked for while this one is decoded
        (`paging.pipelined_pages`): the same requests as `list` page by page."""

        def fetch(token: str | None) -> bytes:
            query = list_query(label_selector, field_selector, page_size, token)
            return self._list_body(resource, namespace, query)

        return pipelined_pages(fetch, lambda body: decoded_page(resource, body))

    def _list_body(self, resource: ResourceInfo, namespace: str | None, query: Query) -> bytes:
        path = resource.path(namespace if resource.namespaced else None)
        body: bytes = self._send("list", resource.group_resource, "GET", path, query, raw=True)
        return body

    def get(self, resource: ResourceInfo, name: str, *, namespace: str | None = None) -> Obj:
        path = resource.path(namespace if resource.namespaced else None, quote(name, safe=""))
        return with_type(resource, self._send("get", resource.group_resource, "GET", path))

    def create(self, resource: ResourceInfo, obj: Obj) -> Obj:
        namespace = target_namespace(resource, obj)
        body = with_type(resource, obj)
        path = resource.path(namespace)
        return with_type(
            resource, self._send("create", resource.group_resource, "POST", path, body=body)
        )

    def _put(self, resource: ResourceInfo, obj: Obj, subresource: str) -> Obj:
        namespace = target_namespace(resource, obj)
        path = resource.path(namespace, quote(name_of(obj), safe="")) + subresource
        key = resource.group_resource + subresource
        return with_type(
            resource, self._send("update", key, "PUT", path, body=with_type(resource, obj))
        )

    def update(self, resource: ResourceInfo, obj: Obj) -> Obj:
        return self._put(resource, obj, "")

    def update_status(self, resource: ResourceInfo, obj: Obj) -> Obj:
        if not resource.has_status:
            raise NotFound(
                f"{resource.group_resource} has no status subresource "
                f"(updating {metadata(obj).get('name')!r})"
            )
        return self._put(resource, obj, "/status")

    def apply(
        self, resource: ResourceInfo, obj: Obj, *, field_manager: str, force: bool = False
    ) -> Obj:
        namespace = target_namespace(resource, obj)
        path = resource.path(namespace, quote(name_of(obj), safe=""))
        query = [("fieldManager", field_manager)] + ([("force", "true")] if force else [])
        # JSON is YAML: the body goes as text so that the client sends it unchanged
        body = json.dumps(with_type(resource, obj))
        answer = self._send(
            "patch",
            resource.group_resource,
            "PATCH",
            path,
            query,
            body=body,
            content_type="application/apply-patch+yaml",
        )
        return with_type(resource, answer)

    def delete(
        self,
        resource: ResourceInfo,
        name: str,
        *,
        namespace: str | None = None,
        uid: str | None = None,
        resource_version: str | None = None,
        propagation: Propagation | None = None,
    ) -> None:
        options: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
        preconditions = {
            k: v for k, v in (("uid", uid), ("resourceVersion", resource_version)) if v
        }
        if preconditions:
            options["preconditions"] = preconditions
        if propagation is not None:
            options["propagationPolicy"] = propagation.value
        if self._dry_run:
            # A DELETE with a body takes its options from the body alone: the query's dryRun
            # (sent too, for the audit log) would be ignored, and the object deleted.
            options["dryRun"] = [DRY_RUN_ALL[1]]
        path = resource.path(namespace if resource.namespaced else None, quote(name, safe=""))
        self._send("delete", resource.group_resource, "DELETE", path, body=options)


def _encoded(body: Any) -> bytes | None:
    """A request body as sent: text as it is, anything else as compact JSON."""
    if body is None:
        return None
    if isinstance(body, str):
        return body.encode()
    return json.dumps(body, separators=(",", ":"), default=_json_value).encode()


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime.date):  # datetimes too, as the client serialized them
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON")


def _timed_out(exc: BaseException) -> bool:
    """urllib3 wraps a timeout in MaxRetryError / ProtocolError: look at the causes."""
    seen: BaseException | None = exc
    for _ in range(5):
        if seen is None or isinstance(seen, urllib3.exceptions.NewConnectionError):
            return False  # refused or unreachable (urllib3 files it under connect timeouts)
        if isinstance(seen, urllib3.exceptions.TimeoutError | TimeoutError):
            return True
        reason = getattr(seen, "reason", None)
        seen = reason if isinstance(reason, BaseException) else seen.__context__
    return False
