"""The floor of the benchmark's work: a raw client (urllib3 and json, nothing of `reconcile`'s)
sending the requests a run of `reconcile` sends, and nothing else, as the same user (so the API
server audits and authorizes both alike), at the same concurrency (`--workers` hook calls at
once), in a namespace of its own holding as many objects as ours did.

- `pass_floor`: one pass: its LISTs (paginated like ours, the resource types side by side),
  then per parent the sync hook call (the same request: controller, parent, its children),
  the creates our pass sent (with our bodies: labels, annotations, owner reference), and the
  status update with the hook's status.
- `run_floor`: every pass of a run, back to back, no wait between them.
"""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import urllib3

PAGE = 500  # reconcile's page size (runner/snapshot.py)


class RawClient:
    """HTTP and JSON, nothing else: what any client must do to send a request."""

    def __init__(self, server: str, token: str, connections: int) -> None:
        warnings.filterwarnings("ignore", category=urllib3.exceptions.InsecureRequestWarning)
        self._server = server.rstrip("/")
        self._pool = urllib3.PoolManager(maxsize=connections, cert_reqs="CERT_NONE")
        self._headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/json",
            "Content-Type": "application/json",
        }

    def send(self, method: str, path: str, body: Any = None) -> Any:
        answer = self._pool.request(
            method,
            self._server + path,
            body=None if body is None else json.dumps(body).encode(),
            headers=self._headers,
            retries=False,
        )
        if answer.status >= 300:
            raise RuntimeError(f"{method} {path}: {answer.status} {answer.data[:300]!r}")
        return json.loads(answer.data)

    def list_all(self, path: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        token = ""
        while True:
            query = f"?limit={PAGE}" + (f"&continue={quote(token)}" if token else "")
            page = self.send("GET", path + query)
            items += page["items"]
            token = page["metadata"].get("continue") or ""
            if not token:
                return items


@dataclass(frozen=True)
class Shape:
    """What one pass sent, read from our run's report: the children it created per parent,
    the Events it recorded (a run records at most 200), and whether it updated every
    parent's status."""

    creates_per_parent: int
    events: int
    status_updates: bool


def pass_shapes(report: dict[str, Any], parents: int, children: int) -> list[Shape]:
    shapes = []
    for pass_ in report["passes"]:
        requests = pass_["requests"]
        creates, updates = requests.get("create", 0), requests.get("update", 0)
        made = children if creates >= parents * children else 0
        events = creates - parents * made
        if events > 200 or updates not in (0, parents):
            raise SystemExit(
                f"pass {pass_['number']} sent {requests}: not the same per parent, so the "
                f"floor cannot be derived from it"
            )
        shapes.append(Shape(made, events, updates == parents))
    return shapes


@dataclass
class Floor:
    """The raw client's side: a namespace of its own holding `parents` parents."""

    raw: RawClient
    hook_url: str
    controller: dict[str, Any]
    group: str
    namespace: str
    workers: int
    child_templates: list[dict[str, Any]]  # our children of parent p00000, as we created them
    template_uid: str
    event_template: dict[str, Any]  # one of the Events our run recorded
    # the last pass's CPU per hook call (its thread's: the request built, sent, the answer read)
    hook_cpu_per_call: float = 0.0

    @property
    def parents_path(self) -> str:
        return f"/apis/{self.group}/v1/namespaces/{self.namespace}/benchparents"

    @property
    def children_path(self) -> str:
        return f"/api/v1/namespaces/{self.namespace}/configmaps"

    def create_parents(self, parents: int) -> None:
        """Not timed: the floor's parents, as the benchmark made ours."""
        self.raw.send(
            "POST",
            "/api/v1/namespaces",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.namespace}},
        )

        def create(i: int) -> None:
            self.raw.send(
                "POST",
                self.parents_path,
                {
                    "apiVersion": f"{self.group}/v1",
                    "kind": "BenchParent",
                    "metadata": {"name": f"p{i:05d}", "namespace": self.namespace},
                    "spec": {"selector": {"matchLabels": {"bench": f"p{i:05d}"}}},
                },
            )

        with ThreadPoolExecutor(16) as pool:
            list(pool.map(create, range(parents)))

    def pass_floor(self, shape: Shape) -> float:
        """Seconds the raw client takes for one pass of this shape."""
        hook = urllib3.PoolManager(maxsize=self.workers)
        started = time.monotonic()
        with ThreadPoolExecutor(2) as pool:
            listed_parents = pool.submit(self.raw.list_all, self.parents_path)
            listed_children = pool.submit(self.raw.list_all, self.children_path)
            parents, children = listed_parents.result(), listed_children.result()
        by_parent: dict[str, dict[str, Any]] = {}
        for child in children:
            owner = (child["metadata"].get("labels") or {}).get("bench")
            if owner is not None:
                by_parent.setdefault(owner, {})[child["metadata"]["name"]] = child

        hook_cpu: list[float] = []  # each call's thread CPU: list.append is atomic

        def sync(parent: dict[str, Any]) -> None:
            cpu_from = time.thread_time()
            name = parent["metadata"]["name"]
            request = {
                "controller": self.controller,
                "parent": parent,
                "children": {"ConfigMap.v1": by_parent.get(name, {})},
                "related": {},
                "finalizing": False,
            }
            answer = hook.request(
                "POST",
                self.hook_url,
                body=json.dumps(request).encode(),
                headers={"Content-Type": "application/json"},
                retries=False,
            )
            if answer.status != 200:
                raise RuntimeError(f"hook: {answer.status}")
            status = json.loads(answer.data)["status"]
            hook_cpu.append(time.thread_time() - cpu_from)
            for template in self.child_templates[: shape.creates_per_parent]:
                self.raw.send("POST", self.children_path, self._child(template, parent))
            if shape.status_updates:
                generation = parent["metadata"].get("generation", 1)
                body = {**parent, "status": {**status, "observedGeneration": generation}}
                self.raw.send("PUT", f"{self.parents_path}/{name}/status", body)

        def sync_and_record(index: int) -> None:
            sync(parents[index])
            if index < shape.events:
                self.raw.send("POST", self.events_path, self._event(parents[index]))

        with ThreadPoolExecutor(self.workers) as pool:
            list(pool.map(sync_and_record, range(len(parents))))
        elapsed = time.monotonic() - started
        self.hook_cpu_per_call = sum(hook_cpu) / max(1, len(hook_cpu))
        return elapsed

    @property
    def events_path(self) -> str:
        return f"/api/v1/namespaces/{self.namespace}/events"

    def _event(self, parent: dict[str, Any]) -> dict[str, Any]:
        event: dict[str, Any] = json.loads(json.dumps(self.event_template))
        event["metadata"] = {
            "name": f"{parent['metadata']['name']}.{parent['metadata']['uid'][:8]}",
            "namespace": self.namespace,
        }
        event["involvedObject"] |= {
            "name": parent["metadata"]["name"],
            "namespace": self.namespace,
            "uid": parent["metadata"]["uid"],
        }
        return event

    def _child(self, template: dict[str, Any], parent: dict[str, Any]) -> dict[str, Any]:
        text = json.dumps(template).replace("p00000", parent["metadata"]["name"])
        child: dict[str, Any] = json.loads(
            text.replace(self.template_uid, parent["metadata"]["uid"])
        )
        child["metadata"]["namespace"] = self.namespace
        return child

    def run_floor(self, shapes: list[Shape]) -> list[float]:
        """Each pass's seconds, the passes back to back."""
        return [self.pass_floor(shape) for shape in shapes]


def child_templates(
    list_children: Callable[[], list[dict[str, Any]]],
) -> tuple[list[dict[str, Any]], str]:
    """Our children of parent p00000 as we created them, reduced to what a create sends."""
    ours = sorted(list_children(), key=lambda child: str(child["metadata"]["name"]))
    templates = [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                k: v
                for k, v in child["metadata"].items()
                if k in ("name", "labels", "annotations", "ownerReferences")
            },
            "data": child.get("data") or {},
        }
        for child in ours
    ]
    return templates, str(ours[0]["metadata"]["ownerReferences"][0]["uid"])
