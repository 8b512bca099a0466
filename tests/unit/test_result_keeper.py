"""What a run keeps of its results while it goes on (runner/keeper.py): each parent is stowed
once it is done, each pass but the last is parked until the run ends, and the run's result
comes back whole."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import yaml

from reconcile.config import ReconcileSettings
from reconcile.job.local import seeded_cluster
from reconcile.report import ReportFormat, render
from reconcile.report.diff import ActionDiff
from reconcile.report.spool import DiffSpool
from reconcile.results import ControllerResult, ParentResult, StowedList
from reconcile.runner.run import RunLoop
from tests.support.backends import crd_manifest

GROUP = "keeper.example.com"
# A child, and a status counting the children it was shown: three passes (create, status, none).
HOOK = textwrap.dedent(
    """
    import json, sys
    request = json.load(sys.stdin)
    name = request["parent"]["metadata"]["name"]
    child = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name + "-child"},
             "data": {"parent": name}}
    json.dump({"status": {"children": len(request["children"]["ConfigMap.v1"])},
               "children": [child]}, sys.stdout)
    """
)


def project(root: Path, parents: int) -> Path:
    root.mkdir()
    (root / "hook.py").write_text(HOOK)
    crd = crd_manifest(GROUP, "Thing", "things")
    objects = [
        crd,
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "keep"}},
        *(
            {
                "apiVersion": f"{GROUP}/v1",
                "kind": "Thing",
                "metadata": {"name": f"thing-{i}", "namespace": "keep"},
                "spec": {},
            }
            for i in range(parents)
        ),
    ]
    controller = {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": "CompositeController",
        "metadata": {"name": "things"},
        "spec": {
            "generateSelector": True,
            "parentResource": {"apiVersion": f"{GROUP}/v1", "resource": "things"},
            "childResources": [{"apiVersion": "v1", "resource": "configmaps"}],
            "hooks": {"sync": {"command": {"argv": [sys.executable, "hook.py"]}}},
        },
    }
    (root / "objects.yaml").write_text(yaml.safe_dump_all(objects))
    (root / "controller.yaml").write_text(yaml.safe_dump(controller))
    return root


class RecordingSpool(DiffSpool):
    """A DiffSpool that notes what it was given, and checks that a parked pass was whole."""

    def __init__(self) -> None:
        super().__init__()
        self.stowed: list[ParentResult] = []
        self.parked: list[list[tuple[str, int]]] = []
        self.restored = 0

    def stow(self, parent: ParentResult) -> None:
        # once, when it is done
        assert parent.stowed is None and all(a.stowed is None for a in parent.actions)
        self.stowed.append(parent)
        super().stow(parent)

    def park(self, controllers: list[ControllerResult]) -> None:
        self.parked.append([(c.name, len(c.parents)) for c in controllers])
        super().park(controllers)
        assert all(c.parents == [] for c in controllers)

    def restore(self) -> None:
        self.restored += 1
        super().restore()


def test_a_run_stows_each_parent_and_parks_each_pass_but_the_last(tmp_path: Path) -> None:
    root = project(tmp_path / "project", parents=3)
    settings = ReconcileSettings(
        controller_paths=(str(root),),
        manifest_paths=(str(root),),
        controllers_from_cluster=False,
        max_duration=60.0,
        workers=2,
    )
    with RecordingSpool() as keeper:
        result = RunLoop(seeded_cluster([root]), settings, keeper=keeper).run()
        assert [p.writes > 0 for p in result.passes] == [True, True, False]
        assert len(keeper.stowed) == 9  # 3 parents, 3 passes
        # (the last pass changed nothing: a parent with no action keeps its one hook call)
        assert all(isinstance(p.actions, StowedList) for p in keeper.stowed[:6])
        assert keeper.parked == [[("things", 3)], [("things", 3)]]  # not the last pass
        assert keeper.restored == 1
        # back: every pass's parents, their actions and hook calls read from the spool
        assert [len(p.parents()) for p in result.passes] == [3, 3, 3]
        assert all(isinstance(p.hooks, StowedList) and p.hooks for p in result.passes[0].parents())
        created = [a for a in result.passes[0].parents()[0].actions if a.action.kind == "create"]
        assert len(created) == 1
        assert created[0].stowed is not None
        diff = created[0].stowed.load()
        assert isinstance(diff, ActionDiff)
        assert diff.after is not None and diff.after["data"] == {"parent": "thing-0"}
        report = render(result, ReportFormat.JSON)
    assert '"data","op":"add"' in report
