"""Webhook hooks against a scripted HTTP peer on loopback: success, status and body errors,
429 with Retry-After, timeouts, refused connections and the etag cache."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import pytest

from reconcile.hooks import HookCaller, HookError, HookResult
from reconcile.hooks.etag import EtagCache, cache_key
from reconcile.hooks.webhook import MAX_RETRY_AFTER, parse_retry_after
from reconcile.specs.hooks import EtagSettings, HookSpec, WebhookSpec
from tests.support.hookservers import HookServer, Reply, closed_port, serve

REQUEST: dict[str, Any] = {"controller": {"name": "hello"}, "parent": {"spec": {"n": 1}}}


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def server() -> Iterator[HookServer]:
    with serve() as srv:
        yield srv


@pytest.fixture
def slept() -> list[float]:
    return []


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def caller(slept: list[float], clock: FakeClock) -> Iterator[HookCaller]:
    with HookCaller(sleep=slept.append, clock=clock) as hook_caller:
        yield hook_caller


def hook(url: str, *, timeout: float = 5.0, etag: EtagSettings | None = None) -> HookSpec:
    return HookSpec(
        name="sync",
        owner="CompositeController hello",
        webhook=WebhookSpec(url=url, timeout=timeout, etag=etag or EtagSettings()),
    )


def etag_hook(url: str, timeout: float = 60.0, cleanup: float = 300.0) -> HookSpec:
    return hook(
        url, etag=EtagSettings(True, cache_timeout_seconds=timeout, cache_cleanup_seconds=cleanup)
    )


def fail(caller: HookCaller, spec: HookSpec, request: dict[str, Any] = REQUEST) -> HookError:
    with pytest.raises(HookError) as caught:
        caller.call(spec, request)
    return caught.value


# -- success ---------------------------------------------------------------------------------


def test_posts_the_request_as_json_and_returns_the_object(
    server: HookServer, caller: HookCaller
) -> None:
    server.script = [Reply(200, {"status": {"ready": True}, "children": []})]
    result = caller.call(hook(server.url), REQUEST)
    assert result == HookResult({"status": {"ready": True}, "children": []}, 0.0)
    assert not result.cached and result.attempts == 1
    (seen,) = server.seen
    assert (seen.method, seen.path) == ("POST", "/hook")
    assert seen.headers["Content-Type"] == "application/json"
    assert seen.json() == REQUEST
    assert "If-None-Match" not in seen.headers
    assert caller.calls == 1


def test_duration_is_wall_time_by_default(server: HookServer) -> None:
    server.script = [Reply(200, {}, delay=0.05)]
    with HookCaller() as real:
        result = real.call(hook(server.url), REQUEST)
    assert 0.04 <= result.duration < 2


def test_connections_are_reused(server: HookServer, caller: HookCaller) -> None:
    for _ in range(3):
        caller.call(hook(server.url), REQUEST)
    assert len(server.seen) == 3
    assert len({seen.client_port for seen in server.seen}) == 1
    assert caller.calls == 3


# -- HTTP status errors ----------------------------------------------------------------------


def test_non_200_carries_status_and_collapsed_body_excerpt(
    server: HookServer, caller: HookCaller
) -> None:
    body = b"internal\n\n   error:   " + b"x" * 2000
    server.script = [Reply(500, body)]
    error = fail(caller, hook(server.url))
    assert (error.reason, error.status) == ("http-status", 500)
    assert error.excerpt.startswith("internal error: xxx")
    assert 500 <= len(error.excerpt) <= 501
    assert "CompositeController hello" in error.message and "sync" in error.message
    assert server.url in error.message and "HTTP 500" in error.message
    assert str(error) == error.message
    assert error.hook.name == "sync"


def test_other_2xx_is_not_success(server: HookServer, caller: HookCaller) -> None:
    server.script = [Reply(201, {"ok": True})]
    error = fail(caller, hook(server.url))
    assert (error.reason, error.status) == ("http-status", 201)


def test_redirects_are_not_followed(server: HookServer, caller: HookCaller) -> None:
    server.script = [Reply(302, b"", {"Location": "/elsewhere"})]
    error = fail(caller, hook(server.url))
    assert (error.reason, error.status) == ("http-status", 302)
    assert len(server.seen) == 1


def test_304_without_a_cached_body_is_an_error(server: HookServer, caller: HookCaller) -> None:
    server.script = [Reply(304, b"")]
    error = fail(caller, etag_hook(server.url))
    assert (error.reason, error.status) == ("http-status", 304)


# -- 429 -------------------------------------------------------------------------------------


def test_429_is_retried_honouring_retry_after(
    server: HookServer, caller: HookCaller, slept: list[float]
) -> None:
    server.script = [
        Reply(429, {}, {"Retry-After": "2"}),
        Reply(429, {}, {"Retry-After": "0.5"}),
        Reply(429, {}),  # no Retry-After: one second
        Reply(200, {"done": 1}),
    ]
    result = caller.call(hook(server.url), REQUEST)
    assert result.response == {"done": 1} and result.attempts == 4
    assert slept == [2.0, 0.5, 1.0]
    assert [s.json() for s in server.seen] == [REQUEST] * 4
    assert caller.calls == 1


def test_429_exhausted_fails_with_http_status(
    server: HookServer, caller: HookCaller, slept: list[float]
) -> None:
    server.default = Reply(429, b"slow down", {"Retry-After": "3"})
    error = fail(caller, hook(server.url))
    assert (error.reason, error.status) == ("http-status", 429)
    assert error.excerpt == "slow down"
    assert slept == [3.0, 3.0, 3.0]
    assert len(server.seen) == 4


def test_429_retries_are_configurable(server: HookServer) -> None:
    server.default = Reply(429, b"")
    slept: list[float] = []
    with HookCaller(max_429_retries=0, sleep=slept.append) as no_retries:
        error = fail(no_retries, hook(server.url))
    assert error.status == 429 and slept == [] and len(server.seen) == 1


def test_retry_after_parsing() -> None:
    now = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after(" 1.5 ") == 1.5
    assert parse_retry_after(None) == 1.0
    assert parse_retry_after("soon") == 1.0
    assert parse_retry_after("-4") == 1.0
    assert parse_retry_after("nan") == 1.0
    assert parse_retry_after("100000") == MAX_RETRY_AFTER
    later = format_datetime(now + timedelta(seconds=5), usegmt=True)
    assert parse_retry_after(later, now=lambda: now) == 5.0
    earlier = format_datetime(now - timedelta(seconds=5), usegmt=True)
    assert parse_retry_after(earlier, now=lambda: now) == 0.0


# -- transport failures ----------------------------------------------------------------------


def test_timeout(server: HookServer, caller: HookCaller) -> None:
    server.script = [Reply(200, {}, delay=1.5)]
    started = time.monotonic()
    error = fail(caller, hook(server.url, timeout=0.2))
    assert time.monotonic() - started < 1.0
    assert (error.reason, error.status) == ("timeout", None)
    assert "0.2s" in error.message


def test_body_that_stalls_is_a_timeout(server: HookServer, caller: HookCaller) -> None:
    server.script = [Reply(200, {"late": True}, body_delay=1.5)]
    started = time.monotonic()
    error = fail(caller, hook(server.url, timeout=0.2))
    assert time.monotonic() - started < 1.0
    assert error.reason == "timeout"


def test_connection_refused(caller: HookCaller) -> None:
    url = f"http://127.0.0.1:{closed_port()}/hook"
    error = fail(caller, hook(url))
    assert (error.reason, error.status) == ("connection", None)
    assert "refused" in error.message.lower() and url in error.message


@pytest.mark.parametrize(
    "url",
    [
        "not a url",
        "http://127.0.0.1:99999/hook",  # port out of range
        "http://hooks.example.com:abc/hook",  # port not a number
        "http://[::1/hook",  # a broken IPv6 literal
        "http://exa mple.com/hook",
        "http:///no-host",
        "ftp://127.0.0.1/hook",
    ],
)
def test_invalid_url_is_a_connection_error(caller: HookCaller, url: str) -> None:
    error = fail(caller, hook(url))
    assert error.reason == "connection"
    assert error.message.startswith("CompositeController hello: sync hook")
    with HookCaller(allowed_hosts=("hooks.example.com",)) as guarded:
        assert fail(guarded, hook(url)).reason in ("connection", "host-not-allowed")


# -- bodies ----------------------------------------------------------------------------------


def test_invalid_json_is_bad_json_with_excerpt(server: HookServer, caller: HookCaller) -> None:
    server.script = [Reply(200, b"<html>\n  oops\n</html>")]
    error = fail(caller, hook(server.url))
    assert (error.reason, error.status) == ("bad-json", None)
    assert error.excerpt == "<html> oops </html>"
    assert "<html> oops </html>" in error.message


def test_empty_body_is_bad_json(server: HookServer, caller: HookCaller) -> None:
    server.script = [Reply(200, b"")]
    error = fail(caller, hook(server.url))
    assert error.reason == "bad-json" and "empty" in error.message


@pytest.mark.parametrize(
    ("body", "kind"), [([1, 2], "array"), ("text", "string"), (3, "number"), (None, "null")]
)
def test_non_object_json(server: HookServer, caller: HookCaller, body: Any, kind: str) -> None:
    server.script = [Reply(200, body)]
    error = fail(caller, hook(server.url))
    assert error.reason == "not-an-object"
    assert f"JSON {kind}" in error.message


def test_bodies_are_not_logged_at_info(
    server: HookServer, caller: HookCaller, caplog: pytest.LogCaptureFixture
) -> None:
    secret = {"data": {"password": "hunter2"}}
    server.script = [Reply(429, {}, {"Retry-After": "0"}), Reply(200, {"echo": secret})]
    with caplog.at_level(logging.DEBUG, logger="reconcile.hooks"):
        caller.call(hook(server.url), {"parent": secret})
    assert caplog.records  # the retry and the answer are logged ...
    assert "hunter2" not in caplog.text  # ... without the bodies


# -- etag cache ------------------------------------------------------------------------------


def test_etag_first_call_stores_second_sends_if_none_match_and_reuses_on_304(
    server: HookServer, caller: HookCaller
) -> None:
    server.script = [Reply(200, {"children": ["a"]}, {"ETag": '"v1"'}), Reply(304, b"")]
    spec = etag_hook(server.url)
    first = caller.call(spec, REQUEST)
    second = caller.call(spec, REQUEST)
    assert first.response == second.response == {"children": ["a"]}
    assert not first.cached and second.cached
    assert "If-None-Match" not in server.seen[0].headers
    assert server.seen[1].headers["If-None-Match"] == '"v1"'
    assert caller.calls == 2


def test_etag_reuses_on_412(server: HookServer, caller: HookCaller) -> None:
    server.script = [Reply(200, {"v": 1}, {"ETag": "abc"}), Reply(412, b"")]
    spec = etag_hook(server.url)
    caller.call(spec, REQUEST)
    result = caller.call(spec, REQUEST)
    assert result.cached and result.response == {"v": 1}


def test_etag_cached_responses_are_not_shared(server: HookServer, caller: HookCaller) -> None:
    server.script = [Reply(200, {"v": [1]}, {"ETag": "abc"})]
    server.default = Reply(304, b"")
    spec = etag_hook(server.url)
    caller.call(spec, REQUEST).response["v"].append(2)
    assert caller.call(spec, REQUEST).response == {"v": [1]}
    assert caller.call(spec, REQUEST).response == {"v": [1]}


def test_etag_key_is_canonical_request_json(server: HookServer, caller: HookCaller) -> None:
    server.script = [Reply(200, {"v": 1}, {"ETag": "abc"}), Reply(304, b"")]
    spec = etag_hook(server.url)
    caller.call(spec, {"a": 1, "b": {"c": 2, "d": 3}})
    result = caller.call(spec, {"b": {"d": 3, "c": 2}, "a": 1})
    assert result.cached


def test_etag_changed_request_is_not_served_from_cache(
    server: HookServer, caller: HookCaller
) -> None:
    server.script = [
        Reply(200, {"v": 1}, {"ETag": "one"}),
        Reply(200, {"v": 2}, {"ETag": "two"}),
        Reply(304, b""),
    ]
    spec = etag_hook(server.url)
    caller.call(spec, REQUEST)
    changed = caller.call(spec, {**REQUEST, "parent": {"spec": {"n": 2}}})
    assert changed.response == {"v": 2} and not changed.cached
    assert "If-None-Match" not in server.seen[1].headers
    again = caller.call(spec, REQUEST)  # the first request's entry is still there
    assert again.cached and again.response == {"v": 1}
    assert server.seen[2].headers["If-None-Match"] == "one"


def test_etag_same_request_to_another_url_is_not_served_from_cache(
    server: HookServer, caller: HookCaller
) -> None:
    server.script = [Reply(200, {"v": 1}, {"ETag": "one"}), Reply(200, {"v": 2})]
    caller.call(etag_hook(server.url), REQUEST)
    caller.call(etag_hook(server.url + "/other"), REQUEST)
    assert "If-None-Match" not in server.seen[1].headers


def test_etag_new_200_replaces_the_entry(server: HookServer, caller: HookCaller) -> None:
    server.script = [
        Reply(200, {"v": 1}, {"ETag": "one"}),
        Reply(200, {"v": 2}, {"ETag": "two"}),
        Reply(304, b""),
    ]
    spec = etag_hook(server.url)
    caller.call(spec, REQUEST)
    caller.call(spec, REQUEST)
    result = caller.call(spec, REQUEST)
    assert server.seen[2].headers["If-None-Match"] == "two"
    assert result.response == {"v": 2}


def test_etag_entries_expire_after_cache_timeout(
    server: HookServer, caller: HookCaller, clock: FakeClock
) -> None:
    server.script = [Reply(200, {"v": 1}, {"ETag": "one"}), Reply(304, b"")]
    server.default = Reply(200, {"v": 2}, {"ETag": "two"})
    spec = etag_hook(server.url, timeout=10)
    caller.call(spec, REQUEST)
    clock.now += 10
    assert caller.call(spec, REQUEST).cached  # exactly the timeout: not older yet
    clock.now += 0.5
    result = caller.call(spec, REQUEST)
    assert not result.cached and result.response == {"v": 2}
    assert "If-None-Match" not in server.seen[2].headers


def test_etag_without_etag_header_nothing_is_cached(server: HookServer, caller: HookCaller) -> None:
    server.script = [Reply(200, {"v": 1}), Reply(200, {"v": 2})]
    spec = etag_hook(server.url)
    caller.call(spec, REQUEST)
    result = caller.call(spec, REQUEST)
    assert not result.cached and result.response == {"v": 2}
    assert "If-None-Match" not in server.seen[1].headers


def test_etag_200_without_etag_drops_the_old_entry(server: HookServer, caller: HookCaller) -> None:
    server.script = [Reply(200, {"v": 1}, {"ETag": "one"}), Reply(200, {"v": 2}), Reply(200, {})]
    spec = etag_hook(server.url)
    for _ in range(3):
        caller.call(spec, REQUEST)
    assert "If-None-Match" not in server.seen[2].headers


def test_etag_disabled_never_caches(server: HookServer, caller: HookCaller) -> None:
    server.default = Reply(200, {"v": 1}, {"ETag": "one"})
    spec = hook(server.url)
    caller.call(spec, REQUEST)
    caller.call(spec, REQUEST)
    assert "If-None-Match" not in server.seen[1].headers


def test_etag_bad_body_is_not_cached(server: HookServer, caller: HookCaller) -> None:
    server.script = [Reply(200, b"nope", {"ETag": "one"}), Reply(200, {"v": 1})]
    spec = etag_hook(server.url)
    assert fail(caller, spec).reason == "bad-json"
    caller.call(spec, REQUEST)
    assert "If-None-Match" not in server.seen[1].headers


def test_etag_cache_purges_expired_entries_at_most_every_cleanup_interval() -> None:
    clock = FakeClock()
    cache = EtagCache(clock)
    for n in range(3):
        cache.put(cache_key("http://h/", {"n": n}), "e", b"{}", timeout=5)
    live = cache_key("http://h/", {"n": 99})
    clock.now += 6
    cache.put(live, "e", b"{}", timeout=5)
    assert cache.get(live, cleanup=100) is not None
    assert len(cache) == 4  # expired, but no cleanup due yet
    clock.now += 94
    assert cache.get(live, cleanup=100) is None  # cleanup due: everything expired goes
    assert len(cache) == 0


def test_etag_cache_lookup_forgets_an_expired_entry() -> None:
    clock = FakeClock()
    cache = EtagCache(clock)
    key = cache_key("http://h/", {})
    cache.put(key, "e", b"{}", timeout=1)
    clock.now += 2
    assert cache.get(key, cleanup=1000) is None
    assert len(cache) == 0


def test_concurrent_calls_share_the_caller(server: HookServer, caller: HookCaller) -> None:
    from concurrent.futures import ThreadPoolExecutor

    server.default = Reply(200, {"ok": True}, {"ETag": "same"})
    spec = etag_hook(server.url)
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda n: caller.call(spec, {"n": n}), range(32)))
    assert all(r.response == {"ok": True} for r in results)
    assert caller.calls == 32 and len(server.seen) == 32
