"""The command line of the action's run: its own options (the reports, the kubeconfig, the dry
run) and the words of the `args` input, split as a shell splits them, without expansion or
command substitution.

When the first word is `diff`, the run is `reconcile diff`: the action's options follow that
word, and there is no dry run to ask for (a diff writes nothing) nor a cluster to connect to.

Usage: python arguments.py --report PATH --markdown PATH [--kubeconfig PATH] OUT, with the
inputs in ARGS and DRY_RUN. The words are written to OUT, each ended by a NUL (for bash's
`mapfile -d ''`): no arguments give no words, not one empty word. A problem is printed as an
`::error` annotation and exits 1, so the step stops instead of running with other arguments."""

from __future__ import annotations

import argparse
import os
import shlex
import sys

DIFF = "diff"


class InputError(Exception):
    """An input the run cannot start with."""


def command_line(
    args: str, *, dry_run: str, report: str, markdown: str, kubeconfig: str | None = None
) -> list[str]:
    """The words after `reconcile`. Raises InputError."""
    try:
        words = shlex.split(args)
    except ValueError as exc:
        raise InputError(
            f"input args cannot be split as a shell would ({exc}): quote it, or pass values "
            "such as a branch name through RECONCILE_* environment variables"
        ) from None
    options = [
        "--report-format",
        "none",
        "--report-file",
        f"json:{report}",
        "--report-file",
        f"markdown:{markdown}",
    ]
    if words[:1] == [DIFF]:
        if dry_run != "false":
            raise InputError(
                f"input dry-run is '{dry_run}', but `diff` writes nothing: leave dry-run false "
                "with diff"
            )
        if kubeconfig:
            raise InputError("input kubeconfig is set, but `diff` reads no cluster: leave it empty")
        return [DIFF, *options, *words[1:]]
    if kubeconfig:
        options += ["--kubeconfig", kubeconfig]
    if dry_run == "true":
        options.append("--dry-run")
    elif dry_run == "server":
        options.append("--dry-run=server")
    return [*options, *words]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--report", required=True)
    parser.add_argument("--markdown", required=True)
    parser.add_argument("--kubeconfig")
    parser.add_argument("out")
    given = parser.parse_args(argv)
    try:
        words = command_line(
            os.environ.get("ARGS", ""),
            dry_run=os.environ.get("DRY_RUN", "false"),
            report=given.report,
            markdown=given.markdown,
            kubeconfig=given.kubeconfig,
        )
    except InputError as exc:
        # workflow-command data escapes as GitHub reads it back
        text = str(exc).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
        print(f"::error title=reconcile::{text}")
        return 1
    with open(given.out, "w", encoding="utf-8") as out:
        out.write("".join(f"{word}\0" for word in words))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
