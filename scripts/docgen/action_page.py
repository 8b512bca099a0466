"""The GitHub Action's inputs and outputs, from its action.yml."""

from __future__ import annotations

from pathlib import Path

import yaml

from docgen.markdown import code, page, table

ROOT = Path(__file__).resolve().parents[2]


def action_page() -> str:
    action = yaml.safe_load((ROOT / "github-actions" / "action.yml").read_text())
    inputs = (
        [code(name), code(str(spec.get("default", ""))) if spec.get("default") else "empty",
         spec["description"]]
        for name, spec in action["inputs"].items()
    )  # fmt: skip
    outputs = ([code(name), spec["description"]] for name, spec in action["outputs"].items())
    body = [
        "## Inputs",
        "",
        *table(["Input", "Default", "Meaning"], inputs),
        "",
        "## Outputs",
        "",
        *table(["Output", "Meaning"], outputs),
    ]
    return page(
        "GitHub Action",
        f"{' '.join(action['description'].split())} Its inputs and outputs, as `action.yml` "
        "declares them; how to use it: [GitHub Actions](../github-actions.md).",
        body,
    )
