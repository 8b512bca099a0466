"""Where controllers come from: the cluster's metacontroller.k8s.io objects and YAML files."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from reconcile.api.composite import (
    API_VERSION,
    KIND,
    CompositeController,
    parse_composite_controller,
)
from reconcile.api.errors import SpecError
from reconcile.cluster.errors import NotFound
from reconcile.cluster.protocol import Cluster, list_all

log = logging.getLogger(__name__)

CONTROLLER_KINDS = frozenset({KIND})


@dataclass
class LoadedControllers:
    composite: list[CompositeController] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # invalid specs: skipped, reported
    sources: list[str] = field(default_factory=list)


def yaml_documents(
    path: Path, *, recursive: bool = False
) -> list[tuple[Path, int, dict[str, Any]]]:
    """(file, document index, object) for every object in a YAML file, or in the files of a
    directory (its subdirectories only when `recursive`, like `kubectl apply -f DIR -R`);
    `kind: List` is flattened. Raises OSError / yaml.YAMLError naming the file."""
    files = [path]
    if path.is_dir():
        found = path.rglob("*") if recursive else path.iterdir()
        files = sorted(
            p
            for p in found
            if p.suffix in (".yaml", ".yml", ".json")
            and p.is_file()
            and not any(part.startswith(".") for part in p.relative_to(path).parts)
        )
    out: list[tuple[Path, int, dict[str, Any]]] = []
    for file in files:
        with file.open() as stream:
            for index, doc in enumerate(yaml.safe_load_all(stream)):
                if not isinstance(doc, dict):
                    continue
                items = doc.get("items") if doc.get("kind") == "List" else [doc]
                out.extend((file, index, item) for item in items or [] if isinstance(item, dict))
    return out


def _is_controller(obj: dict[str, Any]) -> bool:
    return obj.get("apiVersion") == API_VERSION and obj.get("kind") in CONTROLLER_KINDS


def load_from_files(
    paths: list[Path], loaded: LoadedControllers, *, recursive: bool = False
) -> None:
    for path in paths:
        if not path.exists():
            loaded.errors.append(f"--controllers {path}: no such file or directory")
            continue
        try:
            documents = yaml_documents(path, recursive=recursive)
        except (OSError, yaml.YAMLError) as exc:
            loaded.errors.append(f"--controllers {path}: {exc}")
            continue
        loaded.sources.append(str(path))
        for file, index, obj in documents:
            if not _is_controller(obj):
                continue
            try:
                controller = parse_composite_controller(
                    obj, source=f"{file}#{index}", base_dir=str(file.parent.resolve())
                )
            except SpecError as exc:
                loaded.errors.append(str(exc))
                continue
            loaded.composite.append(controller)


def load_from_cluster(cluster: Cluster, loaded: LoadedControllers) -> None:
    try:
        resource = cluster.discover(API_VERSION, "compositecontrollers")
    except NotFound:
        log.debug("the cluster has no %s CRD; no controllers read from it", API_VERSION)
        return
    loaded.sources.append("cluster")
    for obj in list_all(cluster, resource).items:
        try:
            loaded.composite.append(parse_composite_controller(obj))
        except SpecError as exc:
            loaded.errors.append(str(exc))


def load_controllers(
    cluster: Cluster,
    paths: list[Path],
    *,
    from_cluster: bool = True,
    only: frozenset[str] = frozenset(),
    recursive: bool = False,
) -> LoadedControllers:
    """File controllers override cluster ones of the same name (to preview a change)."""
    from_files = LoadedControllers()
    load_from_files(paths, from_files, recursive=recursive)
    loaded = LoadedControllers(errors=from_files.errors, sources=from_files.sources)
    if from_cluster:
        load_from_cluster(cluster, loaded)
    overridden = {c.name for c in from_files.composite}
    for controller in loaded.composite:
        if controller.name in overridden:
            log.debug("controller %s from a file replaces the cluster's", controller.name)
    loaded.composite = [c for c in loaded.composite if c.name not in overridden]
    loaded.composite += from_files.composite
    names = [c.name for c in loaded.composite]
    for name in sorted({n for n in names if names.count(n) > 1}):
        loaded.errors.append(f"{KIND} {name}: defined more than once; none of them runs")
    loaded.composite = [c for c in loaded.composite if names.count(c.name) == 1]
    if only:
        missing = only - set(names)
        for name in sorted(missing):
            loaded.errors.append(f"--controller {name}: no such controller")
        loaded.composite = [c for c in loaded.composite if c.name in only]
    loaded.composite.sort(key=lambda c: c.name)
    return loaded
