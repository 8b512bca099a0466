"""`reconcile`'s entry point: `reconcile diff` and `reconcile status` are commands of their
own; anything else is the run."""

from __future__ import annotations

import sys


def main() -> None:
    # `reconcile diff` and `reconcile status` are commands of their own; everything else is
    # the run, as it always was (no subcommand to type).
    if sys.argv[1:2] == ["diff"]:
        from reconcile.cli.diff import app as diff_app

        diff_app(args=sys.argv[2:], prog_name="reconcile diff")
        return
    if sys.argv[1:2] == ["status"]:
        from reconcile.cli.status import app as status_app

        status_app(args=sys.argv[2:], prog_name="reconcile status")
        return
    from reconcile.cli.run import app as run_app

    run_app(prog_name="reconcile")
