"""--dry-run decides exactly what a real run would and sends no mutating request, counted on
the API server's side (its audit log) and by the memory backend."""

from __future__ import annotations

from pathlib import Path

from tests.support.backends import Backend
from tests.support.controllers import run
from tests.support.examples import EXAMPLES, ExampleLoader


def test_dry_run_plans_what_a_run_applies_and_writes_nothing(
    backend: Backend, example: ExampleLoader, tmp_path: Path
) -> None:
    loaded = example("configmap-propagation", "crd.yaml", "propagation.yaml")
    controller = EXAMPLES / "configmap-propagation" / "controller.yaml"
    cms = backend.admin.discover("v1", "configmaps")
    mark = backend.mark()
    dry = run(backend, controller, dry_run=True)
    assert backend.mutations_since(mark) == {}
    assert dry.errors == [] and len(dry.passes) == 1
    assert dry.passes[0].writes == 0
    pending = sorted(
        (a.action.kind.value, a.action.namespace, a.action.name)
        for p in dry.passes[0].parents()
        for a in p.actions
    )
    name = loaded.name("shared-settings")
    assert pending == sorted(
        [
            ("create", loaded.name("team-a"), name),
            ("create", loaded.name("team-b"), name),
            ("status", "", name),
        ]
    )
    for team in ("team-a", "team-b"):
        assert [
            o
            for o in backend.admin.list(cms, namespace=loaded.name(team)).items
            if o["metadata"]["name"] == name
        ] == []
    real = run(backend, controller)
    applied = sorted(
        (a.action.kind.value, a.action.namespace, a.action.name)
        for a in (x for p in real.passes[0].parents() for x in p.actions)
        if a.applied
    )
    assert applied == pending  # the dry run predicted the first real pass exactly
