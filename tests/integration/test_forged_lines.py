"""What a file or a hook says can never read as a line of the report's own, nor say two things
at once: a key holding a newline is shown on one line (`\\n`), a message's further lines are
marked as its continuation, and a key given twice in one mapping (a reviewer reads the first,
the last would count) is refused as kubectl refuses it. Through the real command."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.backends import crd_manifest
from tests.support.cli import reconcile

FORGED = "! error: none"


def controller(hook: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": "CompositeController",
        "metadata": {"name": "notes"},
        "spec": {
            "generateSelector": True,
            "parentResource": {"apiVersion": "nt.example.com/v1", "resource": "notes"},
            "childResources": [{"apiVersion": "v1", "resource": "configmaps"}],
            "hooks": {"sync": {"command": {"argv": [sys.executable, hook]}}},
            **spec,
        },
    }


CRD = crd_manifest("nt.example.com", "Note", "notes")
NOTE = {
    "apiVersion": "nt.example.com/v1",
    "kind": "Note",
    "metadata": {"name": "note-1", "namespace": "default"},
}

HOOK = """
import json, sys
json.load(sys.stdin)
child = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
         "evil\\n! warning: nothing dropped\\n": 1}
print(json.dumps({"status": {}, "children": [child]}))
"""


def own_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.startswith(" ")]


@pytest.mark.parametrize("report", ["text", "markdown"])
def test_a_key_holding_newlines_stays_on_its_line(tmp_path: Path, report: str) -> None:
    (tmp_path / "hook.py").write_text(HOOK)
    bad = controller("hook.py")
    bad["spec"][f"x\n{FORGED}\n\u202eevil"] = 1  # an unknown field: ignored with a warning
    (tmp_path / "all.json").write_text(
        json.dumps([CRD, NOTE, bad])[1:-1].replace("}, {", "}\n---\n{")
    )
    (tmp_path / "all.yaml").write_text(yaml.safe_dump_all([CRD, NOTE, bad]))
    done = reconcile("--local", str(tmp_path / "all.yaml"), "--report-format", report, cwd=tmp_path)
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    shown = done.stdout
    assert FORGED not in [line.strip("- *") for line in shown.splitlines()], shown[-3000:]
    assert "! warning: nothing dropped" not in [line.strip("- *") for line in shown.splitlines()]
    assert "x\\n! error: none" in shown or "x\\\\n! error: none" in shown, shown[-3000:]
    assert "evil\\n! warning: nothing dropped" in shown or "evil\\\\n" in shown, shown[-3000:]


def test_a_message_s_further_lines_are_marked_as_its_continuation(tmp_path: Path) -> None:
    (tmp_path / "hook.py").write_text(
        "import sys\nsys.stdin.read()\nsys.stderr.write('broken\\n! error: forged')\nsys.exit(3)\n"
    )
    (tmp_path / "all.yaml").write_text(yaml.safe_dump_all([CRD, NOTE, controller("hook.py")]))
    done = reconcile("--local", str(tmp_path / "all.yaml"), cwd=tmp_path)
    assert done.returncode == 1
    assert not [
        line for line in done.stdout.splitlines() if line.lstrip().startswith("! error: forged")
    ]


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_a_key_given_twice_is_refused_before_anything_runs(tmp_path: Path, suffix: str) -> None:
    (tmp_path / "evil.py").write_text("open('ran', 'w').write('yes')\n")
    if suffix == ".yaml":
        text = yaml.safe_dump(controller("hook.py"))
        text = text.replace(
            "  hooks:\n",
            "  hooks:\n    sync:\n      command:\n        argv: [python3, evil.py]\n  hooks:\n",
            1,
        )
    else:
        text = json.dumps(controller("hook.py")).replace(
            '"hooks": {',
            '"hooks": {"sync": {"command": {"argv": ["python3", "evil.py"]}}}, "hooks": {',
            1,
        )
    path = tmp_path / f"controller{suffix}"
    path.write_text(text)
    (tmp_path / "objects.yaml").write_text(yaml.safe_dump_all([CRD, NOTE]))
    done = reconcile(
        "--local", str(tmp_path / "objects.yaml"), "--controllers", str(path), cwd=tmp_path
    )
    assert done.returncode == 1, done.stdout[-2000:]
    assert "given twice" in done.stdout and "hooks" in done.stdout and path.name in done.stdout
    assert not (tmp_path / "ran").exists()
