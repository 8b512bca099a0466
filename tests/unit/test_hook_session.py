"""What a webhook call sends and reads over requests, against a scripted peer on loopback: only
the transport's own headers (no cookie kept from an answer, no ~/.netrc login, no default
header of requests'), the URL byte for byte as it was checked, and a compressed answer decoded
a bounded chunk at a time (a small gzip body that inflates past the limit fails the call
without ever being held whole)."""

from __future__ import annotations

import base64
import contextlib
import gc
import gzip
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
from urllib3 import HTTPConnectionPool

from reconcile.hooks import HookCaller, HookError
from reconcile.hooks.errors import MAX_RESPONSE_BYTES
from reconcile.specs.hooks import HookSpec, WebhookSpec
from tests.support.hookservers import HookServer, Reply, serve


@pytest.fixture
def server() -> Iterator[HookServer]:
    with serve() as srv:
        yield srv


def hook(url: str) -> HookSpec:
    return HookSpec(name="sync", owner="test", webhook=WebhookSpec(url=url, timeout=10.0))


def test_a_call_carries_the_transport_s_headers_and_no_others(server: HookServer) -> None:
    with HookCaller() as caller:
        caller.call(hook(server.url), {"parent": {}})
    (seen,) = server.seen
    assert sorted(seen.headers) == [
        "Accept",
        "Accept-Encoding",
        "Content-Length",
        "Content-Type",
        "Host",
        "User-Agent",
    ]
    assert seen.headers["User-Agent"] == "reconcile"
    assert seen.headers["Accept-Encoding"] == "identity"  # http.client's own: nothing asked for


def test_a_cookie_from_an_answer_is_never_sent_back(server: HookServer) -> None:
    server.script = [Reply(200, {}, headers={"Set-Cookie": "session=s3cr3t; Path=/"})]
    with HookCaller() as caller:
        for _ in range(2):
            caller.call(hook(server.url), {"parent": {}})
    assert [seen.headers.get("Cookie") for seen in server.seen] == [None, None]


def test_no_netrc_login_is_sent(
    server: HookServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login someone password netrc-Passw0rd\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".netrc").write_text(netrc.read_text())
    (tmp_path / ".netrc").chmod(0o600)
    with HookCaller() as caller:
        caller.call(hook(server.url), {"parent": {}})
        caller.call(hook(server.url.replace("http://", "http://hooker:pw-from-url@")), {})
    basic = "Basic " + base64.b64encode(b"hooker:pw-from-url").decode()
    assert [seen.headers.get("Authorization") for seen in server.seen] == [None, basic]


def test_the_url_is_sent_as_it_was_checked(server: HookServer) -> None:
    url = server.url.replace("/hook", "/a%41b/c%2Fd?x=%41&y=a%20b")
    with HookCaller() as caller:
        caller.call(hook(url), {"parent": {}})
    assert [seen.path for seen in server.seen] == ["/a%41b/c%2Fd?x=%41&y=a%20b"]


def test_a_compressed_answer_is_inflated_within_the_limit(server: HookServer) -> None:
    inflated = MAX_RESPONSE_BYTES * 6  # 96 MiB of spaces, about 100 KiB compressed
    bomb = gzip.compress(b" " * inflated, compresslevel=9)
    assert len(bomb) < inflated // 500
    server.script = [Reply(200, bomb, headers={"Content-Encoding": "gzip"})]
    tracemalloc.start()
    try:
        with HookCaller() as caller, pytest.raises(HookError) as caught:
            caller.call(hook(server.url), {"parent": {}})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert caught.value.reason == "too-large"
    assert peak < MAX_RESPONSE_BYTES * 2.5, f"{peak / 2**20:.0f} MiB held"
    # a small answer, compressed, reads as any other
    server.script = [Reply(200, gzip.compress(b'{"ok": 1}'), headers={"Content-Encoding": "gzip"})]
    with HookCaller() as caller:
        assert caller.call(hook(server.url), {"parent": {}}).response == {"ok": 1}


def test_each_hook_url_keeps_its_own_pool(server: HookServer) -> None:
    """The pool a URL was given is remembered per URL: calls to two servers, interleaved,
    each reach their own."""
    with serve() as other, HookCaller() as caller:
        for url in (server.url, other.url, server.url + "?again=1", other.url):
            caller.call(hook(url), {"parent": {}})
    assert [seen.path for seen in server.seen] == ["/hook", "/hook?again=1"]
    assert [seen.path for seen in other.seen] == ["/hook", "/hook"]


def test_a_closed_pool_is_chosen_again(server: HookServer) -> None:
    """A remembered pool closed since (urllib3 before 2.8 closes the pools its manager
    evicts when more hosts are called than it keeps) is not used: the next call gets an open
    one."""
    with HookCaller() as caller:
        caller.call(hook(server.url), {"parent": {}})
        webhooks = caller._webhooks
        assert webhooks is not None
        manager = webhooks.connections.adapter.poolmanager
        # (keys(): the container refuses plain iteration)
        closing = [manager.pools[key] for key in manager.pools.keys()]  # noqa: SIM118
        manager.clear()  # dropped, then closed, as an older urllib3 evicts
        for pool in closing:
            pool.close()
        assert caller.call(hook(server.url), {"parent": {}}).response == {"ok": True}
    assert len(server.seen) == 2


def test_no_more_pools_are_kept_than_the_pool_manager_keeps() -> None:
    """Hooks on more hosts than the pool manager keeps (32) leave no more pools, and their
    open connections, than it keeps: what is remembered per URL is where its pool is found,
    not the pool."""
    with contextlib.ExitStack() as stack, HookCaller() as caller:
        servers = [stack.enter_context(serve()) for _ in range(40)]
        for srv in servers:
            caller.call(hook(srv.url), {"parent": {}})
        gc.collect()
        alive = [obj for obj in gc.get_objects() if isinstance(obj, HTTPConnectionPool)]
        assert len(alive) <= 32
    assert all(len(srv.seen) == 1 for srv in servers)
