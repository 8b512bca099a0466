"""CPU-bound work inside `--local`'s in-process API server answers to `--max-duration` and the
signals, through the real command: a hook's child checked against CEL rules the server accepts
but that keep celpy busy for minutes (ten rules of nearly a million cost units each, within the
server's limits), and the same object among the `--local` manifests, end the run within a few
seconds of its budget with a report; SIGTERM during the check ends it with exit 143 and a
report. A rule over the server's estimated cost limit (the issue's three nested all() over 300
items) refuses its CRD at once, and a backtracking `pattern` meets RE2, which answers at once."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.integration.test_local_crd_validation import CONTROLLER, FLEETS_CRD, HOOK, fleet
from tests.support.cli import command_env, reconcile

IDS = {"type": "array", "maxItems": 400, "items": {"type": "integer"}}
# ~963,000 cost units on 400 distinct ids: under the server's 1,000,000 per evaluation, a tenth
# of a second for the server, a quarter of a minute for celpy; ten of them stay under the
# object's 10,000,000
PAIRS = "self.ids.all(a, self.ids.all(b, a != b || a == b))"
NESTED = "self.ids.all(x, self.ids.all(y, self.ids.all(z, x + y + z > 0)))"


def ships_crd(rules: list[str], ids: dict[str, Any], pattern: str = "^[a-z]+$") -> str:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {"ids": ids, "name": {"type": "string", "pattern": pattern}},
                "x-kubernetes-validations": [
                    {"rule": rule, "message": f"rule {i}"} for i, rule in enumerate(rules)
                ],
            }
        },
    }
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "ships.sea.example.com"},
        "spec": {
            "group": "sea.example.com",
            "scope": "Namespaced",
            "names": {"plural": "ships", "singular": "ship", "kind": "Ship"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema},
                }
            ],
        },
    }
    return yaml.safe_dump(crd)


def inputs(tmp_path: Path, crd: str, spec: dict[str, Any], *, as_manifest: bool = False) -> Path:
    """A fleet whose hook makes a Ship of its spec (or, `as_manifest`, the Ship itself among
    the --local manifests)."""
    where = tmp_path / "inputs"
    where.mkdir()
    (where / "crds.yaml").write_text(FLEETS_CRD + crd)
    (where / "controller.yaml").write_text(CONTROLLER)
    (where / "hook.py").write_text(textwrap.dedent(HOOK))
    objects = "apiVersion: v1\nkind: Namespace\nmetadata: {name: sea}\n" + fleet("big", spec)
    if as_manifest:
        ship = {"apiVersion": "sea.example.com/v1", "kind": "Ship", "spec": spec}
        ship["metadata"] = {"name": "loaded", "namespace": "sea"}
        objects += "---\n" + json.dumps(ship) + "\n"
    (where / "fleets.yaml").write_text(objects)
    return where


def costly(tmp_path: Path, *, as_manifest: bool = False) -> Path:
    return inputs(
        tmp_path,
        ships_crd([PAIRS] * 10, IDS),
        {"ids": list(range(400)), "name": "ok"},
        as_manifest=as_manifest,
    )


@pytest.mark.parametrize("as_manifest", [False, True], ids=["hook child", "local manifest"])
def test_a_costly_check_ends_at_the_budget_with_a_report(tmp_path: Path, as_manifest: bool) -> None:
    where = costly(tmp_path, as_manifest=as_manifest)
    started = time.monotonic()
    done = reconcile(
        "--local", str(where), "--max-duration", "5s", "--report-format", "json",
        cwd=tmp_path, timeout=120,
    )  # fmt: skip
    took = time.monotonic() - started
    assert took < 15, f"the run took {took:.1f}s past a 5s budget"
    assert done.returncode == 1, done.stderr[-3000:]
    assert "Traceback" not in done.stdout + done.stderr
    report = json.loads(done.stdout)
    said = json.dumps(report)
    assert "time budget (5s) has ended" in said, said[-2000:]


@pytest.mark.parametrize("as_manifest", [False, True], ids=["hook child", "local manifest"])
def test_sigterm_during_a_costly_check_ends_the_run_with_143_and_a_report(
    tmp_path: Path, as_manifest: bool
) -> None:
    where = costly(tmp_path, as_manifest=as_manifest)
    process = subprocess.Popen(
        [sys.executable, "-m", "reconcile", "--local", str(where), "--report-format", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=command_env(),
    )
    time.sleep(6)  # well inside the check: it takes minutes
    assert process.poll() is None, "the run ended before the signal"
    sent = time.monotonic()
    process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=60)
    assert time.monotonic() - sent < 10, "the run did not stop promptly"
    assert process.returncode == 143, stderr[-3000:]
    assert "Traceback" not in stdout + stderr
    report = json.loads(stdout)
    assert report["interrupted"] == "SIGTERM"


def test_a_rule_over_the_estimated_limit_refuses_its_crd_at_once(tmp_path: Path) -> None:
    """The issue's rule: three nested all() over 300 items is refused as the server refuses
    it, before anything runs."""
    ids = {**IDS, "maxItems": 300}
    where = inputs(tmp_path, ships_crd([NESTED], ids), {"ids": list(range(300))})
    started = time.monotonic()
    done = reconcile("--local", str(where), "--report-format", "json", cwd=tmp_path)
    assert time.monotonic() - started < 30
    assert done.returncode == 1, done.stderr[-3000:]
    said = json.dumps(json.loads(done.stdout))
    assert "estimated rule cost exceeds budget by factor of 24.4x" in said, said[-2000:]


@pytest.mark.parametrize(
    ("pattern", "value"),
    [
        ("^(a+)+$", "a" * 40_000 + "!"),
        ("^(a|a)+$", "a" * 40_000 + "!"),
        ("^([a-z]+[0-9]?)+$", "abc1" * 10_000 + "-"),
    ],
)
def test_a_backtracking_pattern_answers_at_once(tmp_path: Path, pattern: str, value: str) -> None:
    where = inputs(tmp_path, ships_crd([], IDS, pattern), {"ids": [1], "name": value})
    started = time.monotonic()
    done = reconcile("--local", str(where), "--report-format", "json", cwd=tmp_path)
    assert time.monotonic() - started < 30
    assert done.returncode == 1, done.stderr[-3000:]
    errors = json.loads(done.stdout)["errors"]
    assert any(f"spec.name in body should match '{pattern}'" in e for e in errors), errors


@pytest.mark.parametrize(
    ("rule", "spec"),
    [
        # 64 MiB of copies of a string a thousandth of its size: within every cost limit
        ("self.name.replace('', self.name) != ''", {"ids": [1], "name": "a" * 20_000}),
        # ten million digits, four hundred times
        ("self.ids.map(i, '%.9000000f'.format([1.0])).size() > 0", {"ids": list(range(400))}),
    ],
)
def test_a_rule_that_would_build_gigabytes_fails_instead(
    tmp_path: Path, rule: str, spec: dict[str, Any]
) -> None:
    """The server bounds rules by cost only; `--local` also by what one evaluation builds, so
    that a rule cannot exhaust the run's memory (the report names the child and the bound)."""
    where = inputs(tmp_path, ships_crd([rule], IDS), {"name": "a", **spec})
    done = reconcile("--local", str(where), "--report-format", "json", cwd=tmp_path, timeout=120)
    assert done.returncode == 1, done.stderr[-3000:]
    errors = json.loads(done.stdout)["errors"]
    bound = "--local stops a rule that builds more than 67108864 characters or elements"
    assert any("Ship sea/big" in e and bound in e for e in errors), errors


def test_a_precision_go_cannot_read_formats_as_go_prints_it(tmp_path: Path) -> None:
    """Go's fmt gives up on a precision past a million: cel-go's format() then returns what fmt
    prints for it, not a gigabyte of digits."""
    rule = "'%.999999999f'.format([1.0]) == '%!(NOVERB)%!(EXTRA float64=1)'"
    where = inputs(tmp_path, ships_crd([rule], IDS), {"ids": [1], "name": "a"})
    done = reconcile("--local", str(where), "--report-format", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
