"""The metrics reference: every metric family a run writes, read from the text file a real
run writes (`--metrics-file`, the registry as exposed): name, type, labels, help."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from docgen.markdown import code, page, table

ROOT = Path(__file__).resolve().parents[2]
# A run that converges with exit 0 (so the last success is written) and calls a hook.
EXAMPLE = ROOT / "examples" / "hello-world"


def clean_environment() -> dict[str, str]:
    """The caller's environment without options (RECONCILE_*) or a cluster (KUBECONFIG)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECONCILE_")}
    env.pop("KUBECONFIG", None)
    return env


def metrics_text() -> str:
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "reconcile.prom"
        done = subprocess.run(
            [sys.executable, "-m", "reconcile", "--local", str(EXAMPLE), "--metrics-file",
             str(out), "--report-format", "none", "--log-level", "error"],
            cwd=scratch, capture_output=True, text=True, check=False, env=clean_environment(),
        )  # fmt: skip
        if done.returncode != 0:
            raise SystemExit(f"the example run failed (exit {done.returncode}):\n{done.stderr}")
        return out.read_text()


def hook_names() -> list[str]:
    """The hooks a report names (its schema's list), which name the hook metrics."""
    import json
    from importlib.resources import files

    schema = json.loads((files("reconcile.report") / "report.schema.json").read_text())
    names: list[str] = schema["$defs"]["hook"]["properties"]["hook"]["enum"]
    return names


def metrics_page() -> str:
    rows = []
    buckets: list[str] = []
    for family in text_string_to_metric_families(metrics_text()):
        labels = sorted({k for s in family.samples for k in s.labels if k != "le"})
        if family.type == "histogram":
            buckets = [s.labels["le"] for s in family.samples if "le" in s.labels]
        name = family.name
        if name.startswith("metacontroller_sync_"):
            name = name.replace("metacontroller_sync_", "metacontroller_<hook>_")
        suffix = "_total" if family.type == "counter" else ""
        rows.append(
            [
                code(name + suffix),
                family.type,
                ", ".join(code(x) for x in labels),
                family.documentation,
            ]
        )
    hooks = ", ".join(code(h) for h in hook_names())
    body = [
        *table(["Metric", "Type", "Labels", "Help"], rows),
        "",
        f"`<hook>` is the hook's name: {hooks}; one counter and one histogram per hook the run "
        "called. A command hook's `url` is its command line, its `method` `exec` and its "
        "`code` its exit status; a webhook's `method` is `POST` and its `code` the HTTP "
        "status (0: no answer). `controller_type` is the controller's kind.",
        "",
        f"Histogram buckets (seconds): {', '.join(buckets)}.",
    ]
    return page(
        "Metrics",
        "The Prometheus metrics a run writes (`--metrics-file`, for node-exporter's textfile "
        'collector) or pushes (`--metrics-pushgateway`, group `job="reconcile"`), as a '
        "real run writes them. The `reconcile_*` gauges describe the last run; the hook "
        "metrics keep Metacontroller's names and labels, so its dashboards keep working. "
        "A sharded run (`--shard`) adds the label `shard` to every sample of its file, and "
        "to its Pushgateway grouping key. How to alert on them: "
        "[Operations](../operations.md#alerts).",
        body,
    )
