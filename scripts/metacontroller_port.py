#!/usr/bin/env python3
"""Metacontroller's own integration tests and examples, ported, run whole: every case on both
backends, with the controllers read from files and created in the cluster under
Metacontroller's CRDs. Prints what holds, per Go test file or example, per backend and source.
Not a test itself: the suite runs each case once, with the controllers from the cluster
(`RECONCILE_METACONTROLLER_PORT` unset).

    .venv/bin/python scripts/metacontroller_port.py [--backend memory|live|both] [-k EXPR]

The live backend uses the test control plane (tests/support/controlplane.py), built on first
use; the Node.js examples need `node`.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from xml.etree import ElementTree

ROOT = Path(__file__).resolve().parents[1]
PORTS = (
    "tests/integration/test_metacontroller_suite.py",
    "tests/integration/test_metacontroller_suite_auth_selector.py",
    "tests/integration/test_metacontroller_crds.py",
    "tests/integration/test_metacontroller_examples.py",
    "tests/integration/test_metacontroller_examples_nodejs.py",
    "tests/integration/test_metacontroller_examples_workloads.py",
)
# a case's id: test_name[backend-...-source] in some order; the backend and the source are found
# among the parameters by name
BACKENDS = ("memory", "live")
SOURCES = ("files", "cluster")


def _case(classname: str, name: str) -> tuple[str, str, str]:
    """(module, backend, source) of a junit test case."""
    module = classname.rsplit(".", 1)[-1]
    parts = set(re.split(r"[-\]]", name.partition("[")[2]))
    backend = next((b for b in BACKENDS if b in parts), "-")
    source = next((s for s in SOURCES if s in parts), "-")
    return module, backend, source


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("memory", "live", "both"), default="both")
    parser.add_argument("-k", dest="expression", default="", help="pytest -k expression")
    args = parser.parse_args()
    ports = [p for p in PORTS if (ROOT / p).exists()]
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "junit.xml"
        wanted = [e for e in (args.expression, args.backend) if e and e != "both"]
        selection = ["-k", " and ".join(f"({e})" for e in wanted)] if wanted else []
        command = [
            str(ROOT / ".venv/bin/pytest"),
            "-q",
            "-p",
            "no:cacheprovider",
            f"--junitxml={report}",
            *selection,
            *ports,
        ]
        environment = {**os.environ, "RECONCILE_METACONTROLLER_PORT": "full"}
        completed = subprocess.run(command, cwd=ROOT, env=environment, check=False)
        if not report.exists():
            print("pytest wrote no report", file=sys.stderr)
            return 2
        tree = ElementTree.parse(report)

    held: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0])
    seconds: dict[tuple[str, str, str], float] = defaultdict(float)
    failures: list[str] = []
    for case in tree.iter("testcase"):
        key = _case(case.get("classname", ""), case.get("name", ""))
        module = key[0]
        outcome = {child.tag for child in case}
        if "skipped" in outcome:
            continue
        held[key][1] += 1
        seconds[key] += float(case.get("time", "0"))
        if outcome & {"failure", "error"}:
            failures.append(f"{module}::{case.get('name')}")
        else:
            held[key][0] += 1

    print()
    print(f"{'port':48} {'backend':8} {'source':8} {'held':>9} {'seconds':>8}")
    total = [0, 0]
    for key in sorted(held):
        passed, count = held[key]
        total[0] += passed
        total[1] += count
        module, backend, source = key
        print(f"{module:48} {backend:8} {source:8} {passed:>4} / {count:<3} {seconds[key]:8.1f}")
    print(f"{'all':48} {'':8} {'':8} {total[0]:>4} / {total[1]:<3}")
    for failure in failures:
        print(f"FAILED {failure}")
    return 0 if completed.returncode == 0 and not failures else 1


if __name__ == "__main__":
    sys.exit(main())
