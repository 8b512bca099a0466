"""Where controllers come from: the cluster's metacontroller.k8s.io objects and YAML files."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import yaml

from reconcile.budget import Budget
from reconcile.cluster.errors import NotFound
from reconcile.cluster.protocol import Cluster, list_all
from reconcile.files import STANDARD_INPUT_LABEL, is_standard_input, manifest_sources
from reconcile.objects.selectors import LabelSelector, parse_label_selector
from reconcile.records import dataclass
from reconcile.specs.composite import (
    API_VERSION,
    KIND,
    CompositeController,
    parse_composite_controller,
)
from reconcile.specs.errors import SpecError

if TYPE_CHECKING:
    from reconcile.specs.decorator import DecoratorController
    from reconcile.specs.map_controller import MapController

log = logging.getLogger(__name__)
_C = TypeVar("_C", CompositeController, "DecoratorController", "MapController")

DECORATOR_KIND = "DecoratorController"
MAP_KIND = "MapController"
CONTROLLER_KINDS = frozenset({KIND, DECORATOR_KIND, MAP_KIND})
# What a --controllers file may hold besides controllers without a warning.
_QUIET_IN_CONTROLLER_FILES = frozenset({"CustomResourceDefinition", "ControllerRevision"})


@dataclass
class LoadedControllers:
    composite: list[CompositeController] = field(default_factory=list)
    decorator: list[DecoratorController] = field(default_factory=list)
    map: list[MapController] = field(default_factory=list)
    # Invalid controllers read from the cluster: skipped and reported, the others run (one
    # team's broken controller must not stop everyone's).
    errors: list[str] = field(default_factory=list)
    # The inputs given on the command line cannot be read as given (a missing path, broken
    # YAML, an invalid or unsupported controller in a file, --controller naming nothing): the
    # run must write nothing.
    fatal: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # objects ignored, and why
    sources: list[str] = field(default_factory=list)
    # controllers found but refused (reported in `errors` / `fatal`): --controller names them
    refused: set[str] = field(default_factory=set)
    only: frozenset[str] = frozenset()  # --controller: errors of other controllers don't count
    # --target-label-selector: controllers whose labels do not match are not this run's
    target: LabelSelector | None = None
    from_files: bool = False  # this source is files given on the command line

    def targets(self, obj: dict[str, Any]) -> bool:
        """Whether a controller object is this run's (`--target-label-selector`)."""
        return self.target is None or self.target.matches(obj)

    def spec_error(self, obj: dict[str, Any], error: SpecError) -> None:
        name = str((obj.get("metadata") or {}).get("name") or "")
        if (self.only and name not in self.only) or not self.targets(obj):
            log.debug("skipping %s, not selected: %s", name, error)
            return
        self.refused.add(name)
        (self.fatal if self.from_files else self.errors).append(str(error))


def yaml_documents(
    path: Path, *, recursive: bool = False
) -> list[tuple[Path, str, dict[str, Any]]]:
    """(home, label, object) for every object in a manifest file, in the files of a
    directory (its subdirectories only when `recursive`, like `kubectl apply -f DIR -R`), in
    what kustomize renders for a directory holding a kustomization, or on standard input (`-`),
    as `reconcile.files` reads them (the label numbers documents from 1). `home` is where
    command hooks of a controller read from it run: the file's directory, the kustomization's,
    or the current directory. Raises OSError, or ValueError (KustomizeError among them) naming
    the first document that is not an object."""
    out: list[tuple[Path, str, dict[str, Any]]] = []
    for source in manifest_sources(path, recursive):
        documents, problems = source.documents()
        if problems:
            raise ValueError(problems[0][1])
        out.extend((source.home, d.label, d.obj) for d in documents)
    return out


def _is_controller(obj: dict[str, Any]) -> bool:
    return obj.get("apiVersion") == API_VERSION and obj.get("kind") in CONTROLLER_KINDS


def _describe(obj: dict[str, Any], where: str) -> str:
    name = (obj.get("metadata") or {}).get("name") if isinstance(obj.get("metadata"), dict) else ""
    return f"{obj.get('kind') or '(no kind)'} {name or '(no name)'} ({where})"


def load_from_files(
    paths: list[Path],
    loaded: LoadedControllers,
    *,
    recursive: bool = False,
    option: str = "--controllers",
) -> None:
    """Controllers from files. `option` names the source in messages; in `--controllers`
    files anything that is not a controller is named as ignored (in `--local` manifests it is
    what the controllers act on)."""
    loaded.from_files = True
    for path in paths:
        if not is_standard_input(path) and not path.exists():
            loaded.fatal.append(f"{option} {path}: no such file or directory")
            continue
        try:
            documents = yaml_documents(path, recursive=recursive)
        except (OSError, ValueError, yaml.YAMLError) as exc:
            loaded.fatal.append(f"{option} {path}: {_one_line(exc)}")
            continue
        loaded.sources.append(STANDARD_INPUT_LABEL if is_standard_input(path) else str(path))
        for home, where, obj in documents:
            kind = obj.get("kind")
            if not _is_controller(obj):
                if option == "--controllers" and kind not in _QUIET_IN_CONTROLLER_FILES:
                    loaded.warnings.append(
                        f"{option}: ignored {_describe(obj, where)}: not a controller"
                    )
                continue
            base_dir = str(home)
            try:
                if kind == DECORATOR_KIND:
                    loaded.decorator.append(_parse_decorator(obj, source=where, base_dir=base_dir))
                elif kind == MAP_KIND:
                    loaded.map.append(_parse_map(obj, source=where, base_dir=base_dir))
                else:
                    loaded.composite.append(
                        parse_composite_controller(obj, source=where, base_dir=base_dir)
                    )
            except SpecError as exc:
                loaded.spec_error(obj, exc)


# The other kinds' specs are imported when such a controller is met: most runs have none.
def _parse_decorator(obj: dict[str, Any], **where: Any) -> DecoratorController:
    from reconcile.specs.decorator import parse_decorator_controller

    return parse_decorator_controller(obj, **where)


def _parse_map(obj: dict[str, Any], **where: Any) -> MapController:
    from reconcile.specs.map_controller import parse_map_controller

    return parse_map_controller(obj, **where)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def load_from_cluster(cluster: Cluster, loaded: LoadedControllers) -> None:
    """Every kind whose CRD the cluster has (a cluster without the CompositeController CRD is
    not a source at all)."""
    if not _read_kind(
        cluster, loaded, "compositecontrollers", parse_composite_controller, loaded.composite
    ):
        log.debug("the cluster has no %s CRD; no controllers read from it", API_VERSION)
        return
    loaded.sources.append("cluster")
    _read_kind(cluster, loaded, "decoratorcontrollers", _parse_decorator, loaded.decorator)
    _read_kind(cluster, loaded, "mapcontrollers", _parse_map, loaded.map)


def _read_kind(
    cluster: Cluster,
    loaded: LoadedControllers,
    plural: str,
    parse: Callable[[dict[str, Any]], _C],
    into: list[_C],
) -> bool:
    """Read one kind's objects into `into`; False when the cluster does not serve the kind."""
    try:
        resource = cluster.discover(API_VERSION, plural)
    except NotFound:
        log.debug("the cluster has no %s.%s CRD", plural, API_VERSION)
        return False
    for obj in list_all(cluster, resource).items:
        try:
            into.append(parse(obj))
        except SpecError as exc:
            loaded.spec_error(obj, exc)
    return True


def _layer(base: list[_C], over: list[_C], what: str) -> list[_C]:
    """`over` replaces controllers of the same name in `base`."""
    names = {c.name for c in over}
    for controller in base:
        if controller.name in names:
            log.debug("controller %s from %s replaces another source's", controller.name, what)
    return [c for c in base if c.name not in names] + over


def _unique(
    loaded: LoadedControllers, source: LoadedControllers, found: list[_C], kind: str
) -> list[_C]:
    """Within one source a name may appear once; duplicates are errors and none of them runs."""
    names = [c.name for c in found]
    for name in sorted({n for n in names if names.count(n) > 1}):
        where = ", ".join(c.source for c in found if c.name == name)
        problem = f"{kind} {name}: defined more than once ({where}); none of them runs"
        (loaded.fatal if source.from_files else loaded.errors).append(problem)
    return [c for c in found if names.count(c.name) == 1]


def load_controllers(
    cluster: Cluster,
    paths: list[Path],
    *,
    manifest_paths: list[Path] | None = None,
    from_cluster: bool = True,
    only: frozenset[str] = frozenset(),
    recursive: bool = False,
    target_selector: str | None = None,
    budget: Budget | None = None,
) -> LoadedControllers:
    """Controllers by precedence: `--controllers` files, then `--local` manifests, then the
    cluster's objects; a name found in a higher source replaces the lower ones (to preview a
    change before it is applied)."""
    target = parse_label_selector(target_selector) if target_selector else None
    loaded = LoadedControllers(only=only, target=target)
    layers: list[tuple[str, LoadedControllers]] = []
    if from_cluster:
        cluster_source = LoadedControllers(only=only, target=target)
        load_from_cluster(cluster, cluster_source)
        layers.append(("the cluster", cluster_source))
    for what, source_paths in (("--local", manifest_paths or []), ("--controllers", paths)):
        file_source = LoadedControllers(only=only, target=target)
        # reading files has no point to stop at: the budget and signals stop it from outside
        with budget.interrupting(f"reading {what}") if budget else contextlib.nullcontext():
            load_from_files(source_paths, file_source, recursive=recursive, option=what)
        layers.append((what, file_source))
    controllers: list[CompositeController] = []
    decorators: list[DecoratorController] = []
    maps: list[MapController] = []
    for what, source in layers:
        loaded.errors += source.errors
        loaded.fatal += source.fatal
        loaded.warnings += source.warnings
        loaded.sources += source.sources
        loaded.refused |= source.refused
        controllers = _layer(controllers, _unique(loaded, source, source.composite, KIND), what)
        decorators = _layer(
            decorators, _unique(loaded, source, source.decorator, DECORATOR_KIND), what
        )
        maps = _layer(maps, _unique(loaded, source, source.map, MAP_KIND), what)
    if only:
        known = (
            {c.name for c in controllers}
            | {d.name for d in decorators}
            | {m.name for m in maps}
            | loaded.refused  # found, and refused with its own error
        )
        for name in sorted(only - known):
            loaded.fatal.append(f"--controller {name}: no such controller")
        controllers = [c for c in controllers if c.name in only]
        decorators = [d for d in decorators if d.name in only]
        maps = [m for m in maps if m.name in only]
    if target is not None:
        controllers = [c for c in controllers if loaded.targets(c.raw)]
        decorators = [d for d in decorators if loaded.targets(d.raw)]
        maps = [m for m in maps if loaded.targets(m.raw)]
    controllers = _without_certain_overlaps(controllers, loaded)
    loaded.composite = sorted(controllers, key=lambda c: c.name)
    loaded.decorator = sorted(decorators, key=lambda d: d.name)
    loaded.map = sorted(maps, key=lambda m: m.name)
    # fields read and ignored, named for the controllers that run
    for found in (loaded.composite, loaded.decorator, loaded.map):
        loaded.warnings += [w for c in found for w in c.warnings]
    return loaded


def parent_kind(controller: CompositeController) -> tuple[str, str]:
    """(API group, resource) of the parents: versions of one resource are the same objects."""
    group = controller.parent.api_version.rpartition("/")[0]
    return group, controller.parent.resource


def _without_certain_overlaps(
    controllers: list[CompositeController], loaded: LoadedControllers
) -> list[CompositeController]:
    """Two controllers of one parent resource without label selectors would both sync every
    parent, each undoing the other: an error naming both, and neither runs. (With selectors,
    the runner refuses each parent that both select.)"""
    unselective: dict[tuple[str, str], list[CompositeController]] = {}
    for controller in controllers:
        if controller.parent.label_selector.empty:
            unselective.setdefault(parent_kind(controller), []).append(controller)
    refused: set[str] = set()
    for (group, resource), same in unselective.items():
        if len(same) < 2:
            continue
        names = sorted(c.name for c in same)
        refused.update(names)
        problem = (
            f"{KIND}s {' and '.join(names)} both sync every {resource}"
            f"{'.' + group if group else ''} (neither has parentResource.labelSelector); "
            "neither runs"
        )
        from_files = any(c.source != "cluster" for c in same)
        (loaded.fatal if from_files else loaded.errors).append(problem)
    return [c for c in controllers if c.name not in refused]
