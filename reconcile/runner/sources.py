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
from reconcile.cluster.memory.manifests import manifest_files
from reconcile.cluster.protocol import Cluster, list_all

log = logging.getLogger(__name__)

CONTROLLER_KINDS = frozenset({KIND})
# libyaml's loader when PyYAML was built with it: several times faster on large directories.
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass
class LoadedControllers:
    composite: list[CompositeController] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # invalid specs: skipped, reported
    sources: list[str] = field(default_factory=list)
    only: frozenset[str] = frozenset()  # --controller: errors of other controllers don't count

    def spec_error(self, obj: dict[str, Any], error: SpecError) -> None:
        name = str((obj.get("metadata") or {}).get("name") or "")
        if self.only and name not in self.only:
            log.debug("skipping %s, not selected: %s", name, error)
            return
        self.errors.append(str(error))


def yaml_documents(
    path: Path, *, recursive: bool = False
) -> list[tuple[Path, int, dict[str, Any]]]:
    """(file, document index, object) for every object in a YAML file, or in the files of a
    directory (its subdirectories only when `recursive`, like `kubectl apply -f DIR -R`);
    `kind: List` is flattened. Raises OSError / yaml.YAMLError naming the file."""
    out: list[tuple[Path, int, dict[str, Any]]] = []
    for file in manifest_files(path, recursive):
        with file.open() as stream:
            for index, doc in enumerate(yaml.load_all(stream, Loader=_SafeLoader)):
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
                loaded.spec_error(obj, exc)
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
            loaded.spec_error(obj, exc)


def _layer(
    base: list[CompositeController], over: list[CompositeController], what: str
) -> list[CompositeController]:
    """`over` replaces controllers of the same name in `base`."""
    names = {c.name for c in over}
    for controller in base:
        if controller.name in names:
            log.debug("controller %s from %s replaces another source's", controller.name, what)
    return [c for c in base if c.name not in names] + over


def _unique(loaded: LoadedControllers, source: LoadedControllers) -> list[CompositeController]:
    """Within one source a name may appear once; duplicates are errors and none of them runs."""
    names = [c.name for c in source.composite]
    for name in sorted({n for n in names if names.count(n) > 1}):
        loaded.errors.append(f"{KIND} {name}: defined more than once; none of them runs")
    return [c for c in source.composite if names.count(c.name) == 1]


def load_controllers(
    cluster: Cluster,
    paths: list[Path],
    *,
    manifest_paths: list[Path] | None = None,
    from_cluster: bool = True,
    only: frozenset[str] = frozenset(),
    recursive: bool = False,
) -> LoadedControllers:
    """Controllers by precedence: `--controllers` files, then `--local` manifests, then the
    cluster's objects; a name found in a higher source replaces the lower ones (to preview a
    change before it is applied)."""
    loaded = LoadedControllers(only=only)
    layers: list[tuple[str, LoadedControllers]] = []
    if from_cluster:
        cluster_source = LoadedControllers(only=only)
        load_from_cluster(cluster, cluster_source)
        layers.append(("the cluster", cluster_source))
    for what, source_paths in (("--local", manifest_paths or []), ("--controllers", paths)):
        file_source = LoadedControllers(only=only)
        load_from_files(source_paths, file_source, recursive=recursive)
        layers.append((what, file_source))
    controllers: list[CompositeController] = []
    for what, source in layers:
        loaded.errors += source.errors
        loaded.sources += source.sources
        controllers = _layer(controllers, _unique(loaded, source), what)
    if only:
        for name in sorted(only - {c.name for c in controllers}):
            loaded.errors.append(f"--controller {name}: no such controller")
        controllers = [c for c in controllers if c.name in only]
    loaded.composite = sorted(controllers, key=lambda c: c.name)
    return loaded
