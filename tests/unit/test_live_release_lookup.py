"""A live run's first request: the server's release (GET /version), asked in the background as
soon as the cluster is open, while the run's modules load. The run's own question waits for
that answer rather than ask again; a real HTTP server counts what it was sent."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from kubernetes.client.configuration import Configuration

from reconcile.cluster.live import LiveCluster, LiveOptions
from tests.support.hookserver import send_json, serving


class VersionServer(ThreadingHTTPServer):
    """Answers GET /version after `release` is set (so a test holds the answer back), with
    `status`; counts the requests. Served from a thread by `serving`."""

    daemon_threads = True

    def __init__(self, status: int = 200) -> None:
        super().__init__(("127.0.0.1", 0), _VersionHandler)
        self.status = status
        self.paths: list[str] = []
        self.asked = threading.Event()
        self.release = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _VersionHandler(BaseHTTPRequestHandler):
    server: VersionServer

    def do_GET(self) -> None:
        self.server.paths.append(self.path)
        self.server.asked.set()
        self.server.release.wait(10)
        body = json.dumps(
            {"major": "1", "minor": "37+"}
            if self.server.status == 200
            else {"kind": "Status", "code": self.server.status, "reason": "Forbidden"}
        ).encode()
        send_json(self, self.server.status, body)

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[VersionServer]:
    with serving(VersionServer()) as running:
        try:
            yield running
        finally:
            running.release.set()  # no handler left waiting, whatever the test did


def cluster_on(url: str) -> LiveCluster:
    configuration = Configuration()
    configuration.host = url
    return LiveCluster(configuration, LiveOptions(qps=0, max_retries=0))


def test_the_release_is_asked_at_once_and_asked_once(server: VersionServer) -> None:
    cluster = cluster_on(server.url)
    cluster.look_up_release()
    assert server.asked.wait(5), "GET /version was not sent in the background"
    answers: list[str] = []
    asking = threading.Thread(target=lambda: answers.append(cluster.server_release()))
    asking.start()  # the run's own question, while the first is unanswered
    asking.join(0.3)
    assert asking.is_alive(), "server_release() did not wait for the answer under way"
    server.release.set()
    asking.join(5)
    assert answers == ["1.37"]
    assert cluster.server_release() == "1.37"
    assert server.paths == ["/version"]


def test_a_view_made_while_the_answer_is_under_way_shares_it(server: VersionServer) -> None:
    cluster = cluster_on(server.url)
    cluster.look_up_release()
    assert server.asked.wait(5)
    view = cluster.dry_run_view()
    server.release.set()
    assert view.server_release() == "1.37"
    assert cluster.server_release() == "1.37"
    assert server.paths == ["/version"]


def test_a_refused_lookup_is_the_runs_answer_too_without_a_second_request() -> None:
    with serving(VersionServer(status=403)) as refused:
        refused.release.set()
        cluster = cluster_on(refused.url)
        cluster.look_up_release()
        assert cluster.server_release() == ""  # as when the run asks itself: release unknown
        assert refused.paths == ["/version"]


def test_an_unreachable_server_leaves_the_release_unknown_and_the_run_going() -> None:
    with serving(VersionServer()) as closed:
        url = closed.url
    # nothing listens there now: the lookup fails quietly, in its thread
    cluster = cluster_on(url)
    cluster.look_up_release()
    assert cluster.server_release() == ""
