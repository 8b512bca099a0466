"""A webhook's URL is read once, and the connection goes where that reading says: with loopback
servers on 127.0.0.2 and 127.0.0.3 (127.0.0.3 allowed, 127.0.0.2 not), URLs that two parsers
read two ways (a backslash, several `@`, a fragment, percent-encoding in the host, an IPv6
zone, IPv4 in decimal, octal, hex or short form, a sign or space in the port, non-ASCII,
control characters, an upper-case scheme) are refused when the controller loads, naming the
controller's field, and neither server sees a request; an allowed URL reaches its server and
only it, on both backends; a URL on a host outside the list is not called; a proxy is asked for
the URL rebuilt from the parts that were checked; `endpointConfigs` credentials go to the host
connected to."""

# ruff: noqa: RUF001 (non-ASCII digits are among the URLs refused)

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from reconcile.cli.run import app
from reconcile.cluster.types import Obj, ResourceInfo
from reconcile.hooks.webhook import WebhookTransport
from reconcile.specs.hooks import HookSpec, WebhookSpec
from tests.support.backends import Backend
from tests.support.controllers import composite, run, webhook, write_controllers
from tests.support.hookserver import HookServer, _Handler, serving

CM = ("v1", "configmaps", "InPlace")


class At(HookServer):
    """A hook server on a loopback address of its own (127.0.0.0/8 is all loopback)."""

    def __init__(self, address: str) -> None:
        ThreadingHTTPServer.__init__(self, (address, 0), _Handler)
        self.handler = child_of
        self.requests: list[dict[str, Any]] = []
        self.authorizations: list[str | None] = []
        self.scheme = "http"
        self._lock = threading.Lock()

    @property
    def port(self) -> int:
        return int(self.server_address[1])


def child_of(request: dict[str, Any]) -> dict[str, Any]:
    name = request["parent"]["metadata"]["name"]
    meta = {"name": f"{name}-child", "labels": {"app": name}}
    return {"children": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}]}


@contextmanager
def two_servers() -> Iterator[tuple[At, At]]:
    """(allowed on 127.0.0.3, forbidden on 127.0.0.2)."""
    with serving(At("127.0.0.3")) as allowed, serving(At("127.0.0.2")) as forbidden:
        yield allowed, forbidden


# (URL, what the refusal says); A is the allowed server's port, F the forbidden one's
REFUSED = [
    ("http://127.0.0.2:F\\@127.0.0.3:A/", "backslash"),
    ("http://127.0.0.2\\.hooks.allowed.test:A/", "backslash"),
    ("http://127.0.0.3:A\\/../", "backslash"),
    ("http://a@127.0.0.2:F@127.0.0.3:A/", "more than one @"),
    ("http://127.0.0.3:A#@127.0.0.2:F/", "fragment"),
    ("http://127.0.0.2%2f.allowed.test:A/", "percent-encoded"),
    ("http://127.0.0.%33:A/", "percent-encoded"),
    ("http://[::ffff:127.0.0.3%25lo]:A/", "zone"),
    ("http://2130706435:A/", "four decimal numbers"),  # 127.0.0.3
    ("http://0x7f.0.0.3:A/", "four decimal numbers"),
    ("http://0177.0.0.3:A/", "four decimal numbers"),
    ("http://127.3:A/", "four decimal numbers"),
    ("http://127.0.0.3:+A/", "port is not a number"),
    ("http://127.0.0.3:A /", "space or a control character"),
    ("http://127.0.0.3:A\t/", "space or a control character"),
    ("http://127.0.0.3:A\x7f/", "space or a control character"),
    ("http://１２７.0.0.3:A/", "outside ASCII"),
    ("http://127.0.0.3:A/sy nc", "space or a control character"),
    ("http://127.0.0.3:A/{sync}", "percent-encoded"),
    ("HTTP://127.0.0.3:A/", "must be an http:// or https:// URL"),
    ("http://127.0.0.3:0/", "between 1 and 65535"),
    ("http://127.0.0.3:/", "port is not a number"),
]


def fill(url: str, allowed: At, forbidden: At) -> str:
    return url.replace(":A", f":{allowed.port}").replace(":F", f":{forbidden.port}")


def one_line(text: str) -> str:
    return " ".join(text.replace("│", " ").split())


@pytest.mark.parametrize(("url", "says"), REFUSED, ids=[r[0] for r in REFUSED])
def test_a_url_two_parsers_could_read_two_ways_is_refused_naming_the_field(
    tmp_path: Path, url: str, says: str
) -> None:
    with two_servers() as (allowed, forbidden):
        files = local_files(tmp_path, fill(url, allowed, forbidden))
        done = CliRunner().invoke(
            app,
            ["--local", str(files), "--allowed-hook-hosts", "127.0.0.3,*.allowed.test"],
        )
    assert done.exit_code == 1
    said = one_line(done.output)
    assert "spec.hooks.sync.webhook.url" in said and says in said, said
    assert allowed.requests == [] and forbidden.requests == []


def local_files(tmp_path: Path, url: str) -> Path:
    """A CRD, one parent and a controller whose sync hook is `url`, for --local."""
    directory = tmp_path / "local"
    directory.mkdir()
    group = "u.example.com"
    (directory / "crd.yaml").write_text(
        f"""apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {{name: things.{group}}}
spec:
  group: {group}
  scope: Namespaced
  names: {{plural: things, singular: thing, kind: Thing}}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {{status: {{}}}}
    schema: {{openAPIV3Schema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}}}
---
apiVersion: {group}/v1
kind: Thing
metadata: {{name: one, namespace: default}}
spec: {{selector: {{matchLabels: {{app: one}}}}}}
"""
    )
    info = ResourceInfo(
        group=group,
        version="v1",
        resource="things",
        kind="Thing",
        namespaced=True,
    )
    controller = composite("things", info, [CM], {"sync": webhook(url)})
    (directory / "controller.yaml").write_text(yaml.safe_dump(controller))
    return directory


def test_an_allowed_url_reaches_its_server_only_normalised_once(tmp_path: Path) -> None:
    """Case and a trailing dot are normalised once: the check and the connection read the
    same host."""
    with two_servers() as (allowed, forbidden):
        url = f"http://127.0.0.3.:{allowed.port}/sync?x=1"
        files = local_files(tmp_path, url)
        done = CliRunner().invoke(app, ["--local", str(files), "--allowed-hook-hosts", "127.0.0.3"])
    assert done.exit_code == 0, done.output[-2000:]
    assert len(allowed.requests) >= 1 and forbidden.requests == []


def parent(resource: ResourceInfo, name: str, namespace: str) -> Obj:
    return {
        "apiVersion": resource.api_version,
        "kind": resource.kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": {"matchLabels": {"app": name}}},
    }


def test_the_connection_goes_only_where_the_check_approved(
    backend: Backend, namespace: str, tmp_path: Path
) -> None:
    """On both backends: one controller's hook on the allowed address, one whose URL reads as
    the forbidden host to every parser (a user and password naming the allowed one), one whose
    URL two parsers read two ways; only the allowed server is called, the second fails for its
    parent naming the host, the third is refused naming its field."""
    kinds = [backend.apply_crd(k) for k in ("Good", "Elsewhere", "Twisted")]
    for kind, name in zip(kinds, ("good", "elsewhere", "twisted"), strict=True):
        backend.admin.create(kind, parent(kind, name, namespace))
    with two_servers() as (allowed, forbidden):
        a, f = allowed.port, forbidden.port
        urls = (
            f"http://127.0.0.3:{a}/sync",
            f"http://127.0.0.3:{a}@127.0.0.2:{f}/sync",
            f"http://127.0.0.2:{f}\\@127.0.0.3:{a}/sync",
        )
        controllers = [
            composite(f"c{i}", kind, [CM], {"sync": webhook(url)})
            for i, (kind, url) in enumerate(zip(kinds, urls, strict=True))
        ]
        files = [write_controllers(tmp_path / f"c{i}", c) for i, c in enumerate(controllers)]
        good = run(backend, files[0], files[1], allowed_hook_hosts=("127.0.0.3",))
        twisted = run(backend, files[2], allowed_hook_hosts=("127.0.0.3",))
    assert forbidden.requests == []
    assert {r["parent"]["metadata"]["name"] for r in allowed.requests} == {"good"}
    said = " ".join(good.errors)
    assert f"127.0.0.2:{f} is not among the allowed hook hosts" in said, said
    refused = " ".join(twisted.load_errors + twisted.errors)
    assert "spec.hooks.sync.webhook.url: cannot be called" in refused, refused
    assert "backslash" in refused


class _Proxy(http.server.ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.4", 0), _ProxyHandler)
        self.lines: list[tuple[str, str | None]] = []


class _ProxyHandler(http.server.BaseHTTPRequestHandler):
    server: _Proxy

    def do_POST(self) -> None:
        self.server.lines.append((self.path, self.headers.get("Host")))
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = b'{"children": []}'
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.mark.parametrize(
    ("url", "asked"),
    [
        ("http://127.0.0.3:8080/sync?x=1", "http://127.0.0.3:8080/sync?x=1"),
        ("http://HOOKS.Allowed.Test.:80/a/b", "http://hooks.allowed.test/a/b"),
        ("http://u:p@hooks.allowed.test/x", "http://hooks.allowed.test/x"),
        ("http://[0:0::1]:81/", "http://[::1]:81/"),
    ],
)
def test_a_proxy_is_asked_for_the_url_that_was_checked(
    monkeypatch: pytest.MonkeyPatch, url: str, asked: str
) -> None:
    with serving(_Proxy()) as proxy:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.4:{proxy.server_address[1]}")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        transport = WebhookTransport(allowed_hosts=("127.0.0.3", "*.allowed.test", "[::1]"))
        hook = HookSpec(name="sync", owner="c", webhook=WebhookSpec(url=url))
        try:
            assert hook.webhook is not None
            transport.call(hook, hook.webhook, {"parent": {}})
        finally:
            transport.close()
    (line,) = proxy.lines
    assert line[0] == asked
    assert line[1] == asked.split("/")[2]  # the Host header: the same host and port
