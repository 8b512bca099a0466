"""A lone UTF-16 surrogate (`\\ud800` escaped in JSON) decodes to no character at all: nothing
can print, encode or send it. A manifest or a hook's answer holding one is refused by name
(file or hook, and where in it), through the real command; the run still ends with its
report, and the other parents go on."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from reconcile.objects.bounds import surrogate_problem
from tests.support.backends import crd_manifest
from tests.support.cli import reconcile

LONE = "\\ud800"  # as JSON writes it


def test_a_manifest_holding_a_lone_surrogate_is_refused_by_file_and_path(tmp_path: Path) -> None:
    manifest = tmp_path / "cm.json"
    manifest.write_text(
        '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": '
        f'"default"}}, "data": {{"k": "x{LONE}"}}}}'
    )
    done = reconcile("--local", str(manifest), "--report-format", "json", cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    (error,) = json.loads(done.stdout)["loadErrors"] or json.loads(done.stdout)["errors"]
    assert "cm.json" in error and "surrogate" in error and "data.k" in error, error


HOOK = """
import json, sys
request = json.load(sys.stdin)
name = request["parent"]["metadata"]["name"]
value = "fine" if name == "good" else "bad\\\\ud800"
sys.stdout.write('{"status": {"note": "%s"}, "children": []}' % value)
"""

# the same in a key, or as the three bytes UTF-8 would give it (which Python's reader takes)
IN_A_KEY = HOOK.replace('{"note": "%s"}', '{"note": "x", "%s": "y"}')
AS_BYTES = """
import json, sys
request = json.load(sys.stdin)
name = request["parent"]["metadata"]["name"]
value = b"fine" if name == "good" else b"bad\\xed\\xa0\\x80"
sys.stdout.buffer.write(b'{"status": {"note": "%s"}, "children": []}' % value)
"""


@pytest.mark.parametrize(
    ("report", "hook"),
    [("text", HOOK), ("json", HOOK), ("markdown", HOOK), ("json", IN_A_KEY), ("json", AS_BYTES)],
)
def test_a_hook_answer_holding_a_lone_surrogate_fails_its_parent_only(
    tmp_path: Path, report: str, hook: str
) -> None:
    """A real run (Events are written for the failed parent: a lone surrogate in the message
    ended the run with an internal error)."""
    (tmp_path / "hook.py").write_text(hook)
    group = "nt.example.com"
    crd = crd_manifest("nt.example.com", "Note", "notes")
    notes = [
        {
            "apiVersion": f"{group}/v1",
            "kind": "Note",
            "metadata": {"name": n, "namespace": "default"},
        }
        for n in ("good", "bad")
    ]
    controller = {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": "CompositeController",
        "metadata": {"name": "notes"},
        "spec": {
            "generateSelector": True,
            "parentResource": {"apiVersion": f"{group}/v1", "resource": "notes"},
            "hooks": {"sync": {"command": {"argv": [sys.executable, "hook.py"]}}},
        },
    }
    (tmp_path / "all.yaml").write_text(yaml.safe_dump_all([crd, *notes, controller]))
    done = reconcile("--local", str(tmp_path / "all.yaml"), "--report-format", report, cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert "surrogate" in done.stdout and "status." in done.stdout, done.stdout[-2000:]
    if report == "json":
        errors = json.loads(done.stdout)["errors"]
        assert len(errors) == 1 and "Note default/bad" in errors[0], errors


def test_only_an_escape_makes_one_and_pairs_are_characters() -> None:
    assert surrogate_problem('{"a": "\\ud83d\\ude00"}', {"a": "\U0001f600"}) is None
    assert surrogate_problem("plain", {"a": "\ud800"}) is None  # not walked: no escape
    found = surrogate_problem('{"k\\udc00": 1}', {"k\udc00": 1})
    assert found is not None and "\\udc00" in found
