"""Metacontroller's examples (vendored in tests/data/metacontroller/examples) run with
`reconcile` in place of Metacontroller: the example's CRDs and objects created, its hook server
started unchanged on loopback, its controllers pointed there, and cleaned up afterwards."""

from __future__ import annotations

import contextlib
import copy
import functools
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from reconcile.cluster import AlreadyExists, ApiError, NotFound
from reconcile.cluster.types import Obj, Propagation, ResourceInfo
from reconcile.results import RunResult
from tests.support.backends import Backend
from tests.support.controlplane import free_port
from tests.support.mc_crds import run_from
from tests.support.poll import eventually

EXAMPLES = Path(__file__).resolve().parents[1] / "data/metacontroller/examples"
FULL_PORT_VARIABLE = "RECONCILE_METACONTROLLER_PORT"
LAUNCHER = Path(__file__).resolve().parent / "hook_launcher.py"
CONTROLLER_KINDS = {"CompositeController", "DecoratorController"}


def _documents(path: Path) -> list[Obj]:
    """The file's objects, each a fresh copy (the file read once: some CRDs are long)."""
    return copy.deepcopy(_read_documents(path.resolve()))


@functools.cache
def _read_documents(path: Path) -> list[Obj]:
    return [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]


@contextlib.contextmanager
def hook_server(
    script: Path, *, scheme: str = "http", paths: dict[str, Path] | None = None
) -> Iterator[str]:
    """The example's hook server, unchanged, on a loopback port: its base URL. `paths`
    replaces the module's path constants (a Pod's mounts, such as `CERT_DIR`) with local
    ones."""
    port = free_port()
    overrides = {name: str(path) for name, path in (paths or {}).items()}
    process = subprocess.Popen(
        [sys.executable, str(LAUNCHER), str(port), str(script), json.dumps(overrides)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=script.parent,
    )
    with serving_process(process, port, lambda: f"{script} did not start serving on port {port}"):
        yield f"{scheme}://127.0.0.1:{port}"


@contextlib.contextmanager
def serving_process(
    process: subprocess.Popen[bytes], port: int, failed: Callable[[], str]
) -> Iterator[None]:
    """A hook server's `process`, waited for until it serves on loopback `port` (20 s at
    most, else RuntimeError with `failed()`), stopped after the block."""
    try:
        deadline = time.monotonic() + 20
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(failed())
            time.sleep(0.05)
        yield
    finally:
        process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(5)
        if process.poll() is None:
            process.kill()
            process.wait()


def pointed_at(controller: Obj, base_url: str) -> Obj:
    """The controller with each webhook calling `base_url` (keeping its path), where a Pod's
    Service would have been; an `endpointConfigs` entry for that Service's host now names
    the loopback address, as a Service's DNS name would have resolved to the Pod."""
    pointed = copy.deepcopy(controller)
    loopback = urlsplit(base_url).netloc
    moved: set[str] = set()
    for hook in (pointed["spec"].get("hooks") or {}).values():
        webhook = hook.get("webhook") or {}
        url = urlsplit(webhook["url"]) if webhook.get("url") else None
        path = url.path if url else webhook.get("path", "")
        if url:
            moved.add(url.netloc)
        webhook.pop("service", None)
        webhook.pop("path", None)
        webhook["url"] = base_url + (path or "/")
    for config in pointed["spec"].get("endpointConfigs") or []:
        if config.get("host") in moved:
            config["host"] = loopback
    return pointed


@dataclass
class Example:
    """One example's objects, created on a backend; `cleanup()` deletes them."""

    name: str
    backend: Backend
    created: list[tuple[Any, Obj]] = field(default_factory=list)
    _plurals: dict[str, str] = field(default_factory=dict)  # kind: plural, of its CRDs

    @property
    def directory(self) -> Path:
        return EXAMPLES / self.name

    def controllers(self) -> list[Obj]:
        """The example's controllers, wherever it keeps them (`manifest/` or `v1/`)."""
        return [
            d
            for folder in ("manifest", "v1")
            for path in sorted((self.directory / folder).glob("*.yaml"))
            if path.name != "kustomization.yaml"
            for d in _documents(path)
            if d.get("kind") in CONTROLLER_KINDS
        ]

    def install_crds(self, *files: str) -> None:
        """The CRDs of `files` (default: every file of the example's `v1/`), served."""
        crds = self.backend.admin.discover("apiextensions.k8s.io/v1", "customresourcedefinitions")
        folder = self.directory / "v1"
        paths = [self.directory / f for f in files] or sorted(folder.glob("*.yaml"))
        for path in paths:
            for crd in _documents(path):
                if crd.get("kind") != "CustomResourceDefinition":
                    continue
                self._create_fresh(crds, crd)
                self.created.append((crds, crd))
                version = crd["spec"]["versions"][0]["name"]
                api_version = f"{crd['spec']['group']}/{version}"
                plural = crd["spec"]["names"]["plural"]
                self._plurals[crd["spec"]["names"]["kind"]] = plural
                eventually(
                    functools.partial(self.backend.cluster.discover, api_version, plural),
                    what=f"{plural} served",
                )

    def apply(self, file: str) -> None:
        """The file's objects but its controllers (`reconcile` is given those), Namespaces
        first (as `kubectl apply -f` would need them)."""
        documents = _documents(self.directory / file)
        self.create(*(d for d in documents if d.get("kind") not in CONTROLLER_KINDS))

    def create(self, *objects: Obj) -> None:
        """The objects created (kept if there already), Namespaces first, a namespaced
        object without a namespace in `default` (as kubectl puts it)."""
        for obj in sorted(objects, key=lambda d: d.get("kind") != "Namespace"):
            api_version, kind = str(obj["apiVersion"]), str(obj["kind"])
            resource = self.backend.admin.discover(
                api_version, self._plurals.get(kind) or _plural(self.backend, api_version, kind)
            )
            if resource.namespaced and not obj["metadata"].get("namespace"):
                obj["metadata"]["namespace"] = "default"
            self._create_fresh(resource, obj)
            self.created.append((resource, obj))

    def get(self, api_version: str, resource: str, name: str, namespace: str | None = None) -> Obj:
        info = self.backend.admin.discover(api_version, resource)
        return self.backend.admin.get(info, name, namespace=namespace)

    def cleanup(self) -> None:
        """Everything deleted but the example's CRDs (crd-roles' CRD is its parent), in the
        foreground (an object stays until its dependents are gone) but Namespaces, so a child
        of this test is never taken for one of the next: `create` waits for an object of the
        same name still being deleted (a Namespace takes seconds)."""
        for resource, obj in reversed(self.created):
            meta = obj["metadata"]
            if obj.get("kind") == "CustomResourceDefinition" and self.name != "crd-roles":
                continue  # kept for the next test using it (a CRD takes long to go)
            with contextlib.suppress(ApiError):
                self.backend.admin.delete(
                    resource,
                    meta["name"],
                    namespace=meta.get("namespace"),
                    propagation=(
                        Propagation.BACKGROUND  # the namespace controller empties it
                        if obj.get("kind") == "Namespace"
                        else Propagation.FOREGROUND
                    ),
                )

    def _create_fresh(self, resource: ResourceInfo, obj: Obj) -> None:
        """`obj` created; one of its name still being deleted (a Namespace or CRD of the test
        before) waited for first; one already there kept."""
        meta = obj["metadata"]
        try:
            self.backend.admin.create(resource, copy.deepcopy(obj))
            return
        except AlreadyExists:
            pass
        eventually(
            functools.partial(self._not_deleting, resource, meta["name"], meta.get("namespace")),
            what=f"{obj['kind']} {meta['name']} deleted",
            timeout=120,
        )
        with contextlib.suppress(AlreadyExists):
            self.backend.admin.create(resource, copy.deepcopy(obj))

    def _not_deleting(self, resource: ResourceInfo, name: str, namespace: str | None) -> bool:
        try:
            existing = self.backend.admin.get(resource, name, namespace=namespace)
        except NotFound:
            return True
        return not existing["metadata"].get("deletionTimestamp")


def _plural(backend: Backend, api_version: str, kind: str) -> str:
    for info in backend.admin.served_resources():
        if info.api_version == api_version and info.kind == kind:
            return info.resource
    raise LookupError(f"no resource serves {kind} ({api_version})")


def port_sources() -> list[str]:
    """Where a ported example's controllers come from. The suite runs each example with its
    controllers created in the cluster under Metacontroller's own CRDs (what a switching user
    has); `RECONCILE_METACONTROLLER_PORT=full` (scripts/metacontroller_port.py) adds them read
    from files, keeping the README's test command within its time."""
    if os.environ.get(FULL_PORT_VARIABLE) == "full":
        return ["files", "cluster"]
    return ["cluster"]


def run_example(
    example: Example,
    backend: Backend,
    tmp_path: Path,
    source: str,
    base_url: str,
    **settings: Any,
) -> RunResult:
    """The example's controllers, pointed at its hook server, run from a file or from the
    cluster under Metacontroller's CRDs (`settings`: the run's options)."""
    controllers = [pointed_at(c, base_url) for c in example.controllers()]
    return run_from(backend, tmp_path, source, controllers, **settings)


def ran(
    example: Example,
    objects: str,
    backend: Backend,
    tmp_path: Path,
    source: str,
    runs: int = 1,
    **settings: Any,
) -> list[RunResult]:
    """The example installed (its CRDs, then the objects of `objects`) and run `runs` times
    against its own hook server (`manifest/sync.py`)."""
    example.install_crds()
    example.apply(objects)
    with hook_server(example.directory / "manifest" / "sync.py") as url:
        return [
            run_example(example, backend, tmp_path / str(i), source, url, **settings)
            for i in range(runs)
        ]
