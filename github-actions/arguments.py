"""The command line of the action's run: its own options (the reports, the kubeconfig, the dry
run) and the words of the `args` input, split as a shell splits them, without expansion or
command substitution.

When the first word is `diff`, the run is `reconcile diff`: the action's options follow that
word, and there is no dry run to ask for (a diff writes nothing) nor a cluster to connect to.

When the input dry-run says a dry run (`true` or `server`), that is final: `args` may not name
a dry-run mode of its own (`--dry-run=none`, `--dry-run none`, `--dry-run=false`, any
`--dry-run` at all: the last one given would win), nor may the step's environment hold a
RECONCILE_DRY_RUN that says otherwise. Either is refused before anything runs. The action's own
dry run is one word (`--dry-run=client`): a bare `--dry-run` would take a first word of args
that names a mode (`none`) as its value.

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
DRY_RUN_OPTION = "--dry-run"
DRY_RUN_VARIABLE = "RECONCILE_DRY_RUN"
# what RECONCILE_DRY_RUN may say for each of the input's dry runs (reconcile's own words)
_SAME_MODE = {
    "true": {"client", "1", "true", "t", "yes", "y", "on"},
    "server": {"server"},
}


class InputError(Exception):
    """An input the run cannot start with."""


def command_line(
    args: str,
    *,
    dry_run: str,
    report: str,
    markdown: str,
    kubeconfig: str | None = None,
    environment: dict[str, str] | None = None,
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
    if dry_run in _SAME_MODE:
        _check_dry_run_is_final(words, dry_run, environment or {})
    if kubeconfig:
        options += ["--kubeconfig", kubeconfig]
    if dry_run == "true":
        # one word: a bare --dry-run would take a first word of args (`none`) as its mode
        options.append("--dry-run=client")
    elif dry_run == "server":
        options.append("--dry-run=server")
    return [*options, *words]


def _check_dry_run_is_final(words: list[str], dry_run: str, environment: dict[str, str]) -> None:
    """Nothing may turn the input's dry run into another mode (a real run above all)."""
    for word in words:  # after `--` too: a word there is refused by reconcile, or refused here
        if word == DRY_RUN_OPTION or word.startswith(f"{DRY_RUN_OPTION}="):
            raise InputError(
                f"input dry-run is '{dry_run}', and args names a dry-run mode too ({word}): the "
                "input decides alone; take --dry-run out of args"
            )
    given = environment.get(DRY_RUN_VARIABLE)
    if given is not None and given.strip().lower() not in _SAME_MODE[dry_run]:
        raise InputError(
            f"input dry-run is '{dry_run}', but the step's environment sets "
            f"{DRY_RUN_VARIABLE}={given!r}: the input decides alone; unset the variable"
        )


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
            environment=dict(os.environ),
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
