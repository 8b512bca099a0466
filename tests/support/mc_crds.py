"""Metacontroller's own CRDs (vendored in tests/data/metacontroller) and ours, installed in turn
on a backend: controllers as a cluster running Metacontroller stores them."""

from __future__ import annotations

import contextlib
import copy
import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

from reconcile.cluster import AlreadyExists, Conflict, NotFound
from reconcile.cluster.types import Obj, ResourceInfo
from reconcile.crds import CRD_FILES
from reconcile.results import RunResult
from tests.support.backends import Backend
from tests.support.controllers import run, write_controllers
from tests.support.poll import eventually

VENDORED = Path(__file__).resolve().parents[1] / "data/metacontroller/metacontroller-crds-v1.yaml"
KINDS = ("compositecontrollers", "decoratorcontrollers")


def _crds(texts: list[str]) -> dict[str, Obj]:
    found = {}
    for text in texts:
        for doc in yaml.safe_load_all(text):
            if doc and doc["spec"]["names"]["plural"] in KINDS:
                found[doc["spec"]["names"]["plural"]] = doc
    return found


THEIRS = _crds([VENDORED.read_text()])
OURS = _crds([path.read_text() for path in CRD_FILES])


def _install(backend: Backend, wanted: dict[str, Obj]) -> None:
    crds = backend.admin.discover("apiextensions.k8s.io/v1", "customresourcedefinitions")
    for crd in wanted.values():
        body = copy.deepcopy(crd)
        try:
            backend.admin.create(crds, body)
        except AlreadyExists:
            eventually(functools.partial(_replace, backend, crds, body))


def _replace(backend: Backend, crds: ResourceInfo, body: Obj) -> bool:
    """The stored CRD replaced by `body`; False when the server changed it in between (its
    own controller writes a new CRD's status and names), to be tried again."""
    current = backend.admin.get(crds, body["metadata"]["name"])
    body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
    try:
        backend.admin.update(crds, body)
    except Conflict:
        return False
    return True


# the least each kind's schema requires, and a command hook: a field only our CRDs declare
_PROBES: dict[str, Obj] = {
    "compositecontrollers": {
        "kind": "CompositeController",
        "spec": {"parentResource": {"apiVersion": "v1", "resource": "configmaps"}},
    },
    "decoratorcontrollers": {
        "kind": "DecoratorController",
        "spec": {"resources": [{"apiVersion": "v1", "resource": "configmaps"}]},
    },
}


def _declares_command(crd: Obj) -> bool:
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    sync = schema["properties"]["spec"]["properties"]["hooks"]["properties"]["sync"]
    return "command" in sync.get("properties", {})


def _stored_by(backend: Backend, kind: str, crd: Obj) -> bool:
    """Whether the server now stores `kind` by `crd`'s schema: a dry-run create keeps a
    command hook exactly when the schema declares it. A changed CRD takes a moment on a real
    server, and a controller created in that moment is pruned by the schema before."""
    resource = backend.admin.discover("metacontroller.k8s.io/v1alpha1", kind)
    probe = copy.deepcopy(_PROBES[kind])
    probe["apiVersion"] = "metacontroller.k8s.io/v1alpha1"
    probe["metadata"] = {"name": "schema-probe"}
    probe["spec"]["hooks"] = {"sync": {"command": {"argv": ["probe"]}}}
    answer = backend.admin.dry_run_view().create(resource, probe)
    kept = "command" in ((answer.get("spec") or {}).get("hooks") or {}).get("sync", {})
    return kept == _declares_command(crd)


def _served(backend: Backend, wanted: dict[str, Obj]) -> dict[str, ResourceInfo]:
    for kind, crd in wanted.items():
        if kind in _PROBES:
            eventually(
                functools.partial(_stored_by, backend, kind, crd),
                what=f"{kind} stored by the CRD just installed",
            )
    return {
        kind: backend.cluster.discover("metacontroller.k8s.io/v1alpha1", kind) for kind in KINDS
    }


def ours_installed(backend: Backend) -> None:
    """Our CRDs for the controllers, whatever another test of this control plane left
    (Metacontroller's own, which drop a command hook), and every controller created from
    here on stored by them."""
    _install(backend, OURS)
    _served(backend, OURS)


@contextlib.contextmanager
def crds_installed(backend: Backend, wanted: dict[str, Obj]) -> Iterator[ResourceInfo]:
    """`wanted` installed, and every controller created from here on stored by it; ours
    installed again afterwards, what the rest of the suite expects."""
    _install(backend, wanted)
    try:
        yield _served(backend, wanted)["compositecontrollers"]
    finally:
        ours_installed(backend)


def created_as_stored(backend: Backend, resource: ResourceInfo, obj: Obj, field: str) -> Obj:
    """Create `obj` and read it back once the server's schema for it is the installed one
    (a CRD's new schema takes a moment on a real server): `field` (dotted) is then as the
    schema leaves it."""

    def stored() -> Obj | None:
        with contextlib.suppress(NotFound):
            backend.admin.delete(resource, obj["metadata"]["name"])
        created = backend.admin.create(resource, copy.deepcopy(obj))
        node: Any = created
        for step in field.split("."):
            node = node.get(step) if isinstance(node, dict) else None
        return created if node is not None else None

    return eventually(stored, what=f"{field} kept by the API server")


@contextlib.contextmanager
def runner_for(
    backend: Backend,
    tmp_path: Path,
    source: str,
    controllers: list[Obj],
    *,
    stored: str = "spec.hooks.sync",
    only: bool = True,
    **settings: Any,
) -> Iterator[Callable[[], RunResult]]:
    """`controllers` read from a file (`source` "files"), or ("cluster") created in the
    cluster under Metacontroller's own CRDs once the server keeps their field `stored`
    (dotted), and deleted afterwards; what it yields runs `reconcile` on them once per call.
    `only`: the runs are limited to them by name (`--controller`); without it every
    controller in the cluster is loaded and `settings` (the run's options, such as
    `target_label_selector`) choose."""
    if source == "files":
        path = write_controllers(tmp_path, *controllers)
        yield lambda: run(backend, path, **settings)
        return
    with crds_installed(backend, THEIRS):
        where = {
            kind: backend.admin.discover("metacontroller.k8s.io/v1alpha1", plural)
            for kind, plural in (
                ("CompositeController", "compositecontrollers"),
                ("DecoratorController", "decoratorcontrollers"),
            )
        }
        for controller in controllers:
            created_as_stored(backend, where[controller["kind"]], controller, stored)
        chosen = frozenset(c["metadata"]["name"] for c in controllers) if only else frozenset()
        try:
            yield lambda: run(
                backend, controllers_from_cluster=True, only_controllers=chosen, **settings
            )
        finally:
            for controller in controllers:
                name = controller["metadata"]["name"]
                backend.delete_quietly(where[controller["kind"]], name, None)


def run_from(
    backend: Backend,
    tmp_path: Path,
    source: str,
    controllers: list[Obj],
    *,
    stored: str = "spec.hooks.sync",
    only: bool = True,
    **settings: Any,
) -> RunResult:
    """One run of `controllers` (see `runner_for`)."""
    with runner_for(
        backend, tmp_path, source, controllers, stored=stored, only=only, **settings
    ) as again:
        return again()
