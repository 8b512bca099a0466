"""`reconcile`'s entry point: `reconcile diff` and `reconcile status` are commands of their
own; anything else is the run."""

from __future__ import annotations

import gc
import sys


def main() -> None:
    """The process's entry point (the `reconcile` script, `python -m reconcile`): the process
    ends when it returns or raises SystemExit."""
    try:
        _command()
    finally:
        # What is in memory is left to the process's end without a cyclic collection: the
        # interpreter's own at exit traversed all of it, 70 to 100 ms of every run's end.
        gc.freeze()


def _command() -> None:
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
