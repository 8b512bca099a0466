"""How webhook calls reach their server: the environment's proxy (and NO_PROXY's exceptions),
the CA bundle it names, and a user and password in the URL sent as basic auth, never on the
wire in the URL. The proxy is a real forwarding HTTP proxy on loopback."""

from __future__ import annotations

import base64
import contextlib
import http.server
import socket
import threading
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from reconcile.hooks import HookCaller, HookError
from reconcile.hooks.connections import HookConnections, default_ca_file, proxy_for
from reconcile.specs.hooks import HookSpec, WebhookSpec
from tests.support.hookserver import send_json, serving
from tests.support.hookservers import serve

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


@pytest.fixture(autouse=True)
def clean_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    monkeypatch.delenv("REQUESTS_CA_BUNDLE", raising=False)
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)


@pytest.mark.parametrize(
    ("no_proxy", "host", "port", "bypassed"),
    [
        ("", "hooks.example.com", None, False),
        ("example.com", "hooks.example.com", None, True),
        (".example.com", "hooks.example.com", None, True),
        ("example.com", "badexample.com", None, False),
        ("hooks.example.com:8443", "hooks.example.com", 8443, True),
        ("hooks.example.com:8443", "hooks.example.com", 9000, False),
        ("*", "anything.at.all", None, True),
        ("10.0.0.0/8", "10.1.2.3", None, True),
        ("10.0.0.0/8", "192.168.1.1", None, False),
        ("192.168.1.1", "192.168.1.1", None, True),
        ("localhost, 127.0.0.1", "127.0.0.1", None, True),
        ("fd00::/8", "fd00::1", None, True),
        ("EXAMPLE.com", "Hooks.Example.COM", None, True),
    ],
)
def test_no_proxy_names_hosts_ranges_and_ports(
    monkeypatch: pytest.MonkeyPatch, no_proxy: str, host: str, port: int | None, bypassed: bool
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "proxy.internal:3128")
    monkeypatch.setenv("NO_PROXY", no_proxy)
    expected = None if bypassed else "http://proxy.internal:3128"
    assert proxy_for("https", host, port) == expected


def test_the_proxy_is_chosen_by_scheme_then_all(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://plain:1")
    monkeypatch.setenv("ALL_PROXY", "http://every:2")
    assert proxy_for("http", "h", None) == "http://plain:1"
    assert proxy_for("https", "h", None) == "http://every:2"
    monkeypatch.delenv("ALL_PROXY")
    assert proxy_for("https", "h", None) is None


def test_the_ca_bundle_comes_from_the_environment_else_certifi(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import certifi

    assert default_ca_file() == certifi.where()
    monkeypatch.setenv("CURL_CA_BUNDLE", "/etc/curl.pem")
    assert default_ca_file() == "/etc/curl.pem"
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", "/etc/requests.pem")
    assert default_ca_file() == "/etc/requests.pem"


def test_a_user_and_password_in_the_url_become_basic_auth_and_leave_the_url() -> None:
    route = HookConnections(4).route("http://hook%40er:p%3Ass@hooks.example.com:8080/sync?x=1")
    assert route.url == "http://hooks.example.com:8080/sync?x=1"
    assert route.authorization == "Basic " + base64.b64encode(b"hook@er:p:ss").decode()
    plain = HookConnections(4).route("http://hooks.example.com/sync")
    assert (plain.url, plain.authorization) == ("http://hooks.example.com/sync", None)
    # an empty user and password send nothing, as requests and curl do
    empty = HookConnections(4).route("http://@hooks.example.com/sync")
    assert (empty.url, empty.authorization) == ("http://hooks.example.com/sync", None)


class _ForwardingProxy(http.server.ThreadingHTTPServer):
    """An HTTP proxy: takes absolute-form requests, forwards them, records what it saw."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str | None]] = []
        self.proxy_authorizations: list[str | None] = []
        super().__init__(("127.0.0.1", 0), _ProxyHandler)


class _ProxyHandler(http.server.BaseHTTPRequestHandler):
    server: _ForwardingProxy

    def do_POST(self) -> None:
        self.server.seen.append((self.path, self.headers.get("Authorization")))
        self.server.proxy_authorizations.append(self.headers.get("Proxy-Authorization"))
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {
            k: v
            for k, v in self.headers.items()
            if k.lower() not in ("host", "proxy-authorization")
        }
        forward = urllib.request.Request(self.path, data=body, headers=headers, method="POST")
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(forward) as answer:
            status, content = answer.status, answer.read()
        send_json(self, status, content)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def forwarding_proxy() -> Iterator[_ForwardingProxy]:
    with serving(_ForwardingProxy()) as proxy:
        yield proxy


def _hook(url: str) -> HookSpec:
    return HookSpec(name="sync", owner="test", webhook=WebhookSpec(url=url, timeout=5.0))


def test_a_call_goes_through_the_environments_proxy_unless_no_proxy_names_the_host(
    monkeypatch: pytest.MonkeyPatch, forwarding_proxy: _ForwardingProxy
) -> None:
    monkeypatch.setenv(
        "HTTP_PROXY", f"http://proxied:pa%3Ass@127.0.0.1:{forwarding_proxy.server_port}"
    )
    with serve() as server:
        url = server.url.replace("http://", "http://hooker:secret@")
        with HookCaller() as caller:
            result = caller.call(_hook(url), {"parent": {}})
        assert result.response == {"ok": True}
        basic = "Basic " + base64.b64encode(b"hooker:secret").decode()
        assert forwarding_proxy.seen == [(server.url, basic)]  # no user or password in it
        assert [seen.headers.get("Authorization") for seen in server.seen] == [basic]
        # the proxy's own user and password, from its URL, go to the proxy alone
        to_proxy = "Basic " + base64.b64encode(b"proxied:pa:ss").decode()
        assert forwarding_proxy.proxy_authorizations == [to_proxy]
        assert "Proxy-Authorization" not in server.seen[0].headers

        monkeypatch.setenv("NO_PROXY", "127.0.0.0/8")
        with HookCaller() as caller:
            caller.call(_hook(server.url), {"parent": {}})
        assert len(forwarding_proxy.seen) == 1  # the second call went straight to the server
        assert len(server.seen) == 2


@pytest.mark.parametrize(
    "proxy",
    [
        "http://[::1",  # a broken IPv6 literal
        "http://user:hunter22@[::1",
        "http://user:hunter22@127.0.0.1:99999",  # port out of range
        "http://user:hunter22/x@127.0.0.1:3128",  # an unencoded '/' in the password
        "socks5://127.0.0.1:1080",  # a scheme urllib3 does not speak
        "not a url",
    ],
)
def test_a_broken_proxy_setting_fails_the_call_and_names_no_password(
    monkeypatch: pytest.MonkeyPatch, proxy: str
) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy)
    with HookCaller() as caller, pytest.raises(HookError) as caught:
        caller.call(_hook("http://hooks.example.com/sync"), {"parent": {}})
    assert caught.value.reason == "connection"
    assert "hunter22" not in caught.value.message


@pytest.fixture
def trickling_tunnel_proxy() -> Iterator[int]:
    """A proxy that answers CONNECT one byte every half second, for ever."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def trickle(conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):
            conn.recv(65536)
            for byte in b"HTTP/1.1 200 Connection established\r\n" * 100:
                if stop.wait(0.5):
                    return
                conn.sendall(bytes([byte]))

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=trickle, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    thread.join(5)
    listener.close()


def test_a_proxy_trickling_its_tunnel_is_cut_at_the_hooks_timeout(
    monkeypatch: pytest.MonkeyPatch, trickling_tunnel_proxy: int
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{trickling_tunnel_proxy}")
    hook = HookSpec(
        name="sync",
        owner="test",
        webhook=WebhookSpec(url="https://hooks.example.com/sync", timeout=2.0),
    )
    started = time.monotonic()
    with HookCaller() as caller, pytest.raises(HookError):
        caller.call(hook, {"parent": {}})
    assert time.monotonic() - started < 2 + 2  # the tunnel is held to the call's deadline
