"""Seeding a cluster from manifest files: every object of files or directories created, namespaces
first, then CRDs, then everything else with owners before their dependents. Owner references are
re-pointed at the uids the owners get on this load (a dump leaves uids out). Works through the
Cluster protocol, on either backend."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import field
from pathlib import Path
from typing import Any

from reconcile.cluster.errors import AlreadyExists, ApiError
from reconcile.cluster.memory import CRDS, NAMESPACES
from reconcile.cluster.protocol import Cluster
from reconcile.cluster.types import Obj, ResourceInfo
from reconcile.files.inputs import ManifestSource, manifest_sources
from reconcile.files.kustomize import KustomizeError
from reconcile.objects.jsondata import normalized_copy
from reconcile.objects.meta import (
    SERVER_OWNED_METADATA,
    identity,
    metadata,
    owner_references,
    split_api_version,
)
from reconcile.objects.yamltext import YamlError
from reconcile.records import dataclass

# server-owned metadata a load ignores
_IGNORED_ON_LOAD = tuple(sorted(SERVER_OWNED_METADATA))


class ManifestError(Exception):
    """Some manifests could not be loaded; everything else was. `failures` has one line per
    failed file or object, `objects` what was created."""

    def __init__(self, failures: list[str], objects: list[Obj]) -> None:
        self.failures = failures
        self.objects = objects
        count = f"{len(failures)} manifest{'s' if len(failures) != 1 else ''}"
        super().__init__(f"{count} failed to load:\n" + "\n".join(f"  {f}" for f in failures))


# --- loading -----------------------------------------------------------------------------------


Position = tuple[int, int, int]  # file, document, list item: orders failures as the files do


@dataclass
class _Doc:
    source: str  # "dir/file.yaml (document 2)"
    position: Position
    obj: Obj
    info: ResourceInfo | None = None
    owners: list[_Doc] = field(default_factory=list)


def _read_documents(
    source: ManifestSource, label: str, index: int, failures: list[tuple[Position, str]]
) -> list[_Doc]:
    try:
        documents, problems = source.documents(label)
    except YamlError as e:
        failures.append(((index, 0, 0), f"{label}: cannot be read: {e.reason}"))
        return []
    except KustomizeError as e:  # names the directory or kustomization file itself
        failures.append(((index, 0, 0), str(e)))
        return []
    except (OSError, ValueError) as e:
        failures.append(((index, 0, 0), f"{label}: cannot be read: {e}"))
        return []
    failures += [((index, *position), text) for position, text in problems]
    return [_Doc(d.label, (index, *d.position), normalized_copy(d.obj)) for d in documents]


def _kind_key(api_version: Any, kind: Any, namespace: str, name: Any) -> tuple[str, str, str, str]:
    group, _ = split_api_version(str(api_version or ""))
    return group, str(kind or ""), namespace, str(name or "")


def _is_namespace(doc: _Doc) -> bool:
    return doc.obj.get("apiVersion") == "v1" and doc.obj.get("kind") == "Namespace"


def _is_crd(doc: _Doc) -> bool:
    api_version = str(doc.obj.get("apiVersion") or "")
    return (
        api_version.startswith("apiextensions.k8s.io/")
        and doc.obj.get("kind") == "CustomResourceDefinition"
    )


class _Loading:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.failures: list[tuple[Position, str]] = []
        self.created: list[Obj] = []
        self.uids: dict[tuple[str, str, str, str], str] = {}

    def fail(self, doc: _Doc, error: Exception) -> None:
        text = str(error) if isinstance(error, ApiError) else f"{type(error).__name__}: {error}"
        self.failures.append((doc.position, f"{doc.source}: {identity(doc.obj)}: {text}"))

    def prepare(self, doc: _Doc) -> bool:
        """Discover the doc's resource and normalise its metadata; False (recorded) on error."""
        obj = doc.obj
        if not obj.get("apiVersion") or not obj.get("kind"):
            self.fail(doc, ValueError("apiVersion and kind are required"))
            return False
        if not isinstance(obj.get("metadata", {}), dict):
            self.fail(doc, ValueError("metadata must be a mapping"))
            return False
        try:
            doc.info = self.cluster.discover(str(obj["apiVersion"]), str(obj["kind"]))
        except ApiError as e:
            self.fail(doc, e)
            return False
        meta = obj.setdefault("metadata", {})
        for key in _IGNORED_ON_LOAD:
            meta.pop(key, None)
        if doc.info.namespaced:
            meta["namespace"] = meta.get("namespace") or "default"
        else:
            meta.pop("namespace", None)
        return True

    def key_of(self, doc: _Doc) -> tuple[str, str, str, str]:
        meta = metadata(doc.obj)
        return _kind_key(
            doc.obj["apiVersion"],
            doc.obj["kind"],
            str(meta.get("namespace") or ""),
            meta.get("name"),
        )

    def resolve_owners(self, doc: _Doc) -> None:
        """Point owner references at the owners' current uids: those created by this load, or
        (for references without a uid) those found in the cluster."""
        namespace = str(metadata(doc.obj).get("namespace") or "")
        for ref in owner_references(doc.obj):
            uid = next(
                (
                    self.uids[key]
                    for ns in (namespace, "")
                    if (
                        key := _kind_key(
                            ref.get("apiVersion"), ref.get("kind"), ns, ref.get("name")
                        )
                    )
                    in self.uids
                ),
                None,
            )
            if uid is None and not ref.get("uid"):
                uid = self._lookup_uid(ref, namespace)
            if uid is not None:
                ref["uid"] = uid

    def _lookup_uid(self, ref: dict[str, Any], namespace: str) -> str | None:
        try:
            info = self.cluster.discover(
                str(ref.get("apiVersion") or ""), str(ref.get("kind") or "")
            )
            owner = self.cluster.get(
                info, str(ref.get("name") or ""), namespace=namespace if info.namespaced else None
            )
        except ApiError:
            return None
        return str(metadata(owner).get("uid") or "") or None

    def create(self, doc: _Doc) -> None:
        info = doc.info
        assert info is not None
        obj = doc.obj
        self.resolve_owners(doc)
        status = obj.get("status")
        try:
            try:
                created = self.cluster.create(info, obj)
            except AlreadyExists:
                if info.group_resource == NAMESPACES:
                    created = self._merge_namespace(info, obj)
                elif info.group_resource == CRDS:
                    created = self._replace(info, obj)  # like kubectl apply: the manifest wins
                else:
                    raise
            restore_status = (
                info.has_status
                and status is not None
                and info.group_resource not in (NAMESPACES, CRDS)
                and created.get("status") != status
            )
            if restore_status:
                created = self.cluster.update_status(info, {**created, "status": status})
        except ApiError as e:
            self.fail(doc, e)
            return
        meta = metadata(created)
        self.uids[self.key_of(doc)] = str(meta.get("uid") or "")
        self.created.append(created)

    def _replace(self, info: ResourceInfo, obj: Obj) -> Obj:
        current = self.cluster.get(info, str(metadata(obj).get("name")))
        wanted = {
            **normalized_copy(obj),
            "metadata": {**normalized_copy(metadata(obj)), "resourceVersion": ""},
        }
        wanted["metadata"]["resourceVersion"] = metadata(current).get("resourceVersion")
        return self.cluster.update(info, wanted)

    def _merge_namespace(self, info: ResourceInfo, obj: Obj) -> Obj:
        """A namespace that exists already (e.g. `default`) takes the manifest's labels and
        annotations."""
        current = self.cluster.get(info, str(metadata(obj).get("name")))
        wanted = normalized_copy(current)
        for key in ("labels", "annotations"):
            if key in metadata(obj):
                wanted["metadata"][key] = metadata(obj)[key]
        if wanted == current:
            return current
        return self.cluster.update(info, wanted)


def _owners_first(docs: list[_Doc]) -> list[_Doc]:
    """Docs ordered so that owners (among them) come before their dependents."""
    by_key: dict[tuple[str, str, str, str], _Doc] = {}
    for doc in docs:
        meta = metadata(doc.obj)
        by_key.setdefault(
            _kind_key(
                doc.obj["apiVersion"],
                doc.obj["kind"],
                str(meta.get("namespace") or ""),
                meta.get("name"),
            ),
            doc,
        )
    for doc in docs:
        namespace = str(metadata(doc.obj).get("namespace") or "")
        for ref in owner_references(doc.obj):
            for ns in (namespace, ""):
                owner = by_key.get(
                    _kind_key(ref.get("apiVersion"), ref.get("kind"), ns, ref.get("name"))
                )
                if owner is not None and owner is not doc:
                    doc.owners.append(owner)
                    break
    ordered: list[_Doc] = []
    done: set[int] = set()
    visiting: set[int] = set()

    def visit(doc: _Doc) -> None:
        if id(doc) in done or id(doc) in visiting:
            return
        visiting.add(id(doc))
        for owner in doc.owners:
            visit(owner)
        visiting.discard(id(doc))
        done.add(id(doc))
        ordered.append(doc)

    for doc in docs:
        visit(doc)
    return ordered


def load_manifests(
    cluster: Cluster, path: str | os.PathLike[str], *, recursive: bool = False
) -> list[Obj]:
    """Create every object in a manifest file or directory (`*.yaml`, `*.yml`, `*.json`,
    multi-document, `kind: List` flattened; a directory holding a kustomization rendered by
    kustomize; `-` for standard input). Namespaced objects without a namespace go to
    `default`. Raises `ManifestError` listing every failure after loading all the rest; returns
    the created objects."""
    return load_all_manifests(cluster, [path], recursive=recursive)


def load_all_manifests(
    cluster: Cluster, paths: Sequence[str | os.PathLike[str]], *, recursive: bool = False
) -> list[Obj]:
    """`load_manifests` of several paths as one: their namespaces first, then their CRDs, then
    everything else, owners before dependents, whichever path each came from (a Namespace in
    the last path exists before the first path's objects in it)."""
    loading = _Loading(cluster)
    docs: list[_Doc] = []
    index = 0
    for path in paths:
        root = Path(path)
        for source in manifest_sources(root, recursive):
            label = source.label_within(root)
            docs += _read_documents(source, label, index, loading.failures)
            index += 1
    namespaces = [d for d in docs if _is_namespace(d)]
    definitions = [d for d in docs if _is_crd(d)]
    rest = [d for d in docs if not _is_namespace(d) and not _is_crd(d)]
    for group in (namespaces, definitions):
        for doc in group:
            if loading.prepare(doc):
                loading.create(doc)
    prepared = [doc for doc in rest if loading.prepare(doc)]
    for doc in _owners_first(prepared):
        loading.create(doc)
    if loading.failures:
        raise ManifestError([text for _, text in sorted(loading.failures)], loading.created)
    return loading.created
