"""The JSON report's schema (reconcile/report/report.schema.json, which the package ships and
the reference page docs/reference/report.md is rendered from) holds the reports real runs
write: every key it lists is required and no other key is allowed, at every level, so the
reference cannot name a key a report lacks, miss one it has, or give it another type.

The runs cover what a report can hold: rollouts, a MapController's outputs (`for`), a
DecoratorController, related objects, a failing hook, a dry run and a server dry run, a git
source; the states no example reaches (a skipped run, an object that does not converge, a run
stopped by its budget) are results made directly."""

from __future__ import annotations

import json
import shutil
from importlib.resources import files
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from reconcile.engine.changes import field_changes
from reconcile.report import report_dict
from reconcile.results import Divergence, NotConverging, RunResult
from tests.support.cli import reconcile
from tests.support.examples import EXAMPLES
from tests.support.gitrepo import git

SCHEMA: dict[str, Any] = json.loads(
    (files("reconcile.report") / "report.schema.json").read_text(encoding="utf-8")
)
VALIDATOR = Draft202012Validator(SCHEMA)
FAILING = """\
apiVersion: metacontroller.k8s.io/v1alpha1
kind: CompositeController
metadata:
  name: hello-controller
spec:
  generateSelector: true
  parentResource: {apiVersion: example.com/v1, resource: helloworlds}
  childResources: [{apiVersion: v1, resource: pods}]
  hooks:
    sync:
      command:
        argv: [python3, -c, "import sys; sys.stderr.write('no greeting today'); sys.exit(3)"]
"""
EXAMPLES_RUN = ("statefulset-like", "snapshot-schedule", "bucket-quota", "configmap-propagation")


def problems(report: dict[str, Any]) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message[:300]}"
        for e in sorted(VALIDATOR.iter_errors(report), key=lambda e: list(e.absolute_path))
    ]


def objects(schema: Any) -> list[dict[str, Any]]:
    """Every object schema with named keys, at any depth."""
    found = []
    if isinstance(schema, dict):
        if "properties" in schema:
            found.append(schema)
        for value in schema.values():
            found += objects(value)
    elif isinstance(schema, list):
        for value in schema:
            found += objects(value)
    return found


def parents(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for ps in report["passes"] for c in ps["controllers"] for p in c["parents"]]


def test_the_schema_requires_every_key_it_lists_and_allows_no_other() -> None:
    Draft202012Validator.check_schema(SCHEMA)
    for schema in objects(SCHEMA):
        if schema.get("title") == "patch[]":
            continue  # RFC 6902's operations: `value` and `from` go with some operations only
        assert sorted(schema["required"]) == sorted(schema["properties"]), schema.get("title")
        assert schema["additionalProperties"] is False, schema.get("title")


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """The reports of real runs: by hand-picked name."""
    work = tmp_path_factory.mktemp("reports")
    (work / "failing.yaml").write_text(FAILING)
    inputs = [arg for name in EXAMPLES_RUN for arg in ("--local", str(EXAMPLES / name))]
    inputs += ["--local", str(EXAMPLES / "hello-world"), "--controllers", "failing.yaml"]
    runs = {"real": [], "dry": ["--dry-run"], "server": ["--dry-run=server"]}
    out: dict[str, dict[str, Any]] = {}
    for name, extra in runs.items():
        done = reconcile(*inputs, *extra, "--report-format", "json", cwd=work, timeout=300)
        assert done.returncode == 1, done.stderr[-3000:]  # the failing hook
        out[name] = json.loads(done.stdout)
    repo = work / "platform"
    shutil.copytree(EXAMPLES / "gitops", repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Greetings")
    done = reconcile(
        "--git", repo.as_uri(), "--local", "apps", "--controllers", "controllers",
        "--report-format", "json", cwd=work, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    out["git"] = json.loads(done.stdout)
    return out


@pytest.mark.parametrize("name", ["real", "dry", "server", "git"])
def test_the_report_of_a_real_run_holds_to_the_schema(
    reports: dict[str, dict[str, Any]], name: str
) -> None:
    assert problems(reports[name]) == []


def test_keys_come_in_the_order_the_schema_lists_them(reports: dict[str, dict[str, Any]]) -> None:
    """As the reports page says: the reference lists the keys in the report's own order."""
    defs = SCHEMA["$defs"]
    real = reports["real"]
    parent = next(p for p in parents(real) if p["actions"] and p["hooks"])
    pairs = [
        (real, SCHEMA),
        (real["summary"], SCHEMA["properties"]["summary"]),
        (real["passes"][0], defs["pass"]),
        (real["passes"][0]["controllers"][0], defs["controller"]),
        (parent, defs["parent"]),
        (parent["hooks"][0], defs["hook"]),
        (parent["actions"][0], defs["action"]),
    ]
    for report, schema in pairs:
        assert list(report) == list(schema["properties"]), schema.get("title")


def test_the_runs_reach_what_the_schema_describes(reports: dict[str, dict[str, Any]]) -> None:
    """So that the validation above covers the schema's optional branches, not only nulls."""
    real, server, git_run = reports["real"], reports["server"], reports["git"]
    assert any(p["rollout"] for p in parents(real))
    assert {"sync", "map"} <= {p["mode"] for p in parents(real)}
    assert any(a["for"] for p in parents(real) for a in p["actions"])
    assert any(h["error"] for p in parents(real) for h in p["hooks"])
    assert {c["kind"] for ps in real["passes"] for c in ps["controllers"]} == {
        "CompositeController",
        "DecoratorController",
        "MapController",
    }
    assert server["dryRunMode"] == "server" and server["summary"]["serverValidated"] > 0
    assert git_run["source"] is not None and git_run["source"]["commit"]


@pytest.mark.parametrize(
    "result",
    [
        pytest.param(
            RunResult(dry_run=False, skipped="locked by x (Lease a/b) until t"), id="skipped"
        ),
        pytest.param(RunResult(dry_run=False, interrupted="budget"), id="stopped-by-budget"),
        pytest.param(RunResult(dry_run=False, interrupted="SIGTERM"), id="interrupted"),
        pytest.param(
            RunResult(
                dry_run=False,
                not_converging=[
                    NotConverging(
                        "ConfigMap ns/c",
                        Divergence.REVERTED,
                        tuple(field_changes({"data": {"k": "a"}}, {"data": {"k": "b"}})),
                        2,
                    )
                ],
            ),
            id="not-converging",
        ),
    ],
)
def test_the_states_no_example_reaches_hold_to_the_schema(result: RunResult) -> None:
    assert problems(report_dict(result)) == []


def test_a_report_the_schema_does_not_describe_is_refused() -> None:
    """The validation can fail: an unknown key, a missing one, another type."""
    report = report_dict(RunResult(dry_run=True))
    assert problems(report) == []
    assert problems({**report, "extra": 1})
    assert problems({k: v for k, v in report.items() if k != "warnings"})
    assert problems({**report, "hookCalls": "1"})
