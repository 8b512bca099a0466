"""Dumping an in-process cluster to files: one stable YAML document per object and its file's
place (`reconcile.job.output_dir` writes them: the object store of `reconcile --local`)."""

from __future__ import annotations

from pathlib import Path

import yaml

from reconcile.cluster.memory import BUILTIN_NAMESPACES, CRDS, NAMESPACES, MemoryCluster
from reconcile.cluster.types import Obj
from reconcile.objects.jsondata import normalized_copy
from reconcile.objects.meta import (
    DELETION_METADATA,
    SERVER_OWNED_METADATA,
    metadata,
    owner_references,
)
from reconcile.objects.yamltext import needs_quotes

try:
    from yaml import CSafeDumper as _Dumper
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeDumper as _Dumper  # type: ignore[assignment]

CLUSTER_DIR = "_cluster"

# server-owned metadata a dump leaves out (a deleting object stays so)
SERVER_METADATA = tuple(sorted(SERVER_OWNED_METADATA - DELETION_METADATA))


# --- YAML --------------------------------------------------------------------------------------


class _ManifestDumper(_Dumper):
    pass


def _represent_str(dumper: _ManifestDumper, value: str) -> yaml.ScalarNode:
    """Multi-line strings as blocks; strings that kubectl would read as something else when
    unquoted (`n`, `0o755`) quoted."""
    style = "|" if "\n" in value else ("'" if needs_quotes(value) else None)
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_ManifestDumper.add_representer(str, _represent_str)


def to_yaml(obj: Obj) -> str:
    return yaml.dump(
        obj,
        Dumper=_ManifestDumper,
        sort_keys=True,
        default_flow_style=False,
        allow_unicode=True,
        width=100,
    )


# --- dumping -----------------------------------------------------------------------------------


def dump_form(group_resource: str, obj: Obj) -> Obj:
    """An object as a dump stores it: no server-owned metadata and no owner uids (a load sets
    them again), no CRD status (the server computes it)."""
    out: Obj = normalized_copy(obj)
    meta = out.get("metadata")
    if isinstance(meta, dict):
        for key in SERVER_METADATA:
            meta.pop(key, None)
        for ref in owner_references(out):
            ref.pop("uid", None)
    if group_resource == CRDS:
        out.pop("status", None)
    return out


def dump_path(directory: Path, group_resource: str, obj: Obj) -> Path:
    """`<namespace or _cluster>/<group_resource>/<name>.yaml` under `directory`."""
    meta = metadata(obj)
    return (
        directory
        / str(meta.get("namespace") or CLUSTER_DIR)
        / group_resource
        / f"{meta.get('name')}.yaml"
    )


_NOT_STATE = frozenset({"events", "events.events.k8s.io"})


def dump_entries(
    cluster: MemoryCluster, *, include_builtin_namespaces: bool = False
) -> list[tuple[Path, Obj]]:
    """(path relative to the dump's directory, object in dump form) for every object a dump
    writes; the built-in namespaces (`default`, ...) only when asked. Events are a record of
    the run, not state: they are left out."""
    entries: list[tuple[Path, Obj]] = []
    for group_resource, obj in cluster.objects_by_resource():
        if group_resource in _NOT_STATE:
            continue
        if (
            group_resource == NAMESPACES
            and metadata(obj).get("name") in BUILTIN_NAMESPACES
            and not include_builtin_namespaces
        ):
            continue
        entries.append((dump_path(Path(), group_resource, obj), dump_form(group_resource, obj)))
    return entries
