"""The live backend's transport against a scripted HTTP peer on loopback: retries, Retry-After,
error mapping, request counting and the rate limit. The real API server cannot be made to fail
on cue, so these cases use a small server that answers what each test scripts."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from kubernetes import client

from reconcile.cluster.errors import NotFound, TooManyRequests, Unavailable
from reconcile.cluster.live import LiveCluster, LiveOptions
from reconcile.cluster.types import ResourceInfo

CONFIGMAPS = ResourceInfo("", "v1", "configmaps", "ConfigMap", namespaced=True)
CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "ns"}}

Reply = tuple[int, dict[str, str], Any]


class ScriptedServer(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.script: list[Reply] = []
        self.seen: list[tuple[str, str, Any]] = []
        self.default: Reply = (200, {}, {"kind": "ConfigMap", "metadata": {"name": "a"}})


class Handler(BaseHTTPRequestHandler):
    server: ScriptedServer

    def _reply(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        self.server.seen.append((self.command, self.path, body))
        status, headers, payload = (
            self.server.script.pop(0) if self.server.script else self.server.default
        )
        data = json.dumps(payload).encode() if not isinstance(payload, bytes) else payload
        self.send_response(status)
        for key, value in {"Content-Type": "application/json", **headers}.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_DELETE = _reply  # noqa: N815 - http.server names

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    srv = ScriptedServer()
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def live(server: ScriptedServer, slept: list[float], **options: Any) -> LiveCluster:
    configuration = client.Configuration()
    configuration.host = f"http://127.0.0.1:{server.server_address[1]}"
    configuration.retries = False
    return LiveCluster(configuration, LiveOptions(qps=0, **options), sleep=slept.append)


def status(code: int, reason: str) -> dict[str, Any]:
    return {"kind": "Status", "code": code, "reason": reason, "message": f"{reason} says no"}


def test_reads_retry_on_429_honouring_retry_after(server: ScriptedServer) -> None:
    server.script = [(429, {"Retry-After": "2"}, status(429, "TooManyRequests"))]
    slept: list[float] = []
    obj = live(server, slept).get(CONFIGMAPS, "a", namespace="ns")
    assert obj["metadata"]["name"] == "a" and obj["kind"] == "ConfigMap"
    assert slept == [2.0]
    assert [(m, p) for m, p, _ in server.seen] == [
        ("GET", "/api/v1/namespaces/ns/configmaps/a")
    ] * 2


def test_reads_retry_on_5xx_with_growing_backoff(server: ScriptedServer) -> None:
    server.script = [(503, {}, status(503, "ServiceUnavailable"))] * 3
    slept: list[float] = []
    cluster = live(server, slept)
    cluster.list(CONFIGMAPS, namespace="ns")
    assert len(slept) == 3 and slept[0] < slept[2]
    assert cluster.stats.count("list") == 4
    assert cluster.stats.retries() == {"list": 3}


def test_reads_give_up_after_max_retries(server: ScriptedServer) -> None:
    server.script = [(500, {}, status(500, "InternalError"))] * 10
    slept: list[float] = []
    with pytest.raises(Unavailable, match="InternalError says no"):
        live(server, slept, max_retries=2).get(CONFIGMAPS, "a", namespace="ns")
    assert len(slept) == 2


def test_writes_are_not_retried_on_5xx(server: ScriptedServer) -> None:
    server.script = [(503, {}, status(503, "ServiceUnavailable"))]
    slept: list[float] = []
    with pytest.raises(Unavailable):
        live(server, slept).create(CONFIGMAPS, CM)
    assert slept == [] and len(server.seen) == 1


def test_writes_are_retried_on_429(server: ScriptedServer) -> None:
    server.script = [(429, {"Retry-After": "1"}, status(429, "TooManyRequests"))]
    slept: list[float] = []
    live(server, slept).create(CONFIGMAPS, CM)
    assert slept == [1.0]
    assert [m for m, _, _ in server.seen] == ["POST", "POST"]
    assert server.seen[0][2]["metadata"]["name"] == "a"


def test_429_surfaces_with_retry_after_when_retries_run_out(server: ScriptedServer) -> None:
    server.script = [(429, {"Retry-After": "7"}, status(429, "TooManyRequests"))] * 3
    with pytest.raises(TooManyRequests) as caught:
        live(server, [], max_retries=1).get(CONFIGMAPS, "a", namespace="ns")
    assert caught.value.retry_after == 7.0


def test_connection_refused_is_unavailable(server: ScriptedServer) -> None:
    configuration = client.Configuration()
    configuration.host = "http://127.0.0.1:1"
    configuration.retries = False
    slept: list[float] = []
    cluster = LiveCluster(configuration, LiveOptions(qps=0, max_retries=2), sleep=slept.append)
    with pytest.raises(Unavailable) as caught:
        cluster.get(CONFIGMAPS, "a", namespace="ns")
    assert caught.value.status == 0 and len(slept) == 2


def test_not_found_is_not_retried(server: ScriptedServer) -> None:
    server.script = [(404, {}, status(404, "NotFound"))]
    slept: list[float] = []
    with pytest.raises(NotFound):
        live(server, slept).get(CONFIGMAPS, "a", namespace="ns")
    assert slept == []


def test_delete_sends_preconditions_and_propagation(server: ScriptedServer) -> None:
    from reconcile.cluster.types import Propagation

    live(server, []).delete(
        CONFIGMAPS,
        "a",
        namespace="ns",
        uid="u-1",
        resource_version="9",
        propagation=Propagation.FOREGROUND,
    )
    method, path, body = server.seen[0]
    assert (method, path) == ("DELETE", "/api/v1/namespaces/ns/configmaps/a")
    assert body["preconditions"] == {"uid": "u-1", "resourceVersion": "9"}
    assert body["propagationPolicy"] == "Foreground"


def test_list_sends_selectors_and_pagination(server: ScriptedServer) -> None:
    server.default = (
        200,
        {},
        {
            "metadata": {"resourceVersion": "5", "continue": "tok2", "remainingItemCount": 4},
            "items": [{"metadata": {"name": "a"}}],
        },
    )
    page = live(server, []).list(
        CONFIGMAPS,
        namespace="ns",
        label_selector="app=x",
        field_selector="metadata.name=a",
        limit=1,
        continue_token="tok1",
    )
    assert page.items == [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}]
    assert (page.resource_version, page.continue_token, page.remaining_item_count) == (
        "5",
        "tok2",
        4,
    )
    path = server.seen[0][1]
    for part in (
        "labelSelector=app%3Dx",
        "fieldSelector=metadata.name%3Da",
        "limit=1",
        "continue=tok1",
    ):
        assert part in path


def test_client_side_rate_limit_spaces_requests(server: ScriptedServer) -> None:
    slept: list[float] = []
    configuration = client.Configuration()
    configuration.host = f"http://127.0.0.1:{server.server_address[1]}"
    # 1 request per second with a burst of 2: the burst goes at once, then each request waits.
    cluster = LiveCluster(configuration, LiveOptions(qps=1, burst=2), sleep=slept.append)
    for _ in range(6):
        cluster.get(CONFIGMAPS, "a", namespace="ns")
    assert cluster.stats.count("get", "configmaps") == 6
    assert len(slept) == 4 and all(w > 0.5 for w in slept)
