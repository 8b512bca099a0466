"""Option values read as written, whether from the command line or a `RECONCILE_*` variable:
numbers and durations in ASCII digits only (Python's own parsers take full-width digits, `1_0`
and ` 8`), names as the API server reads them, and paths that are paths. Each refusal is a
usage error naming the option, raised before the run does any work."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path

import typer

from reconcile.specs.duration import parse_duration

LONGEST_DURATION = 365 * 24 * 3600.0
_MAX_DIGITS = 15  # far beyond any count or rate, and within a float's exact integers

_WHOLE = re.compile(rf"[0-9]{{1,{_MAX_DIGITS}}}")
_DECIMAL = re.compile(rf"(?:[0-9]{{1,{_MAX_DIGITS}}}(?:\.[0-9]*)?|\.[0-9]+)")
_NUMBER = r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
_GO_DURATION = re.compile(rf"(?:{_NUMBER}(?:ns|us|µs|μs|ms|s|m|h))+")


def _shown(value: str) -> str:
    return repr(value)


def whole_number(minimum: int) -> Callable[[str], int]:
    """A parser for a count option: ASCII digits, at least `minimum`."""

    def parse(value: str) -> int:
        text = str(value)
        if not _WHOLE.fullmatch(text):
            raise typer.BadParameter(
                f"{_shown(text)} is not a whole number (ASCII digits 0-9, nothing else)"
            )
        number = int(text)
        if number < minimum:
            raise typer.BadParameter(f"{_shown(text)}: must be at least {minimum}")
        return number

    return parse


def decimal(value: str) -> float:
    """A rate option: ASCII digits with an optional decimal point, 0 or more."""
    text = str(value)
    if not _DECIMAL.fullmatch(text):
        raise typer.BadParameter(
            f"{_shown(text)} is not a number (ASCII digits and a decimal point, e.g. 50 or 2.5)"
        )
    return float(text)


def optional_decimal(value: str | None) -> float | None:
    return None if value is None else decimal(value)


def seconds(*, allow_zero: bool = False) -> Callable[[str], float]:
    """A parser for a duration option: seconds (`90`, `0.5`) or a Go duration (`90s`, `5m`,
    `1h30m`), in ASCII digits, finite, above zero (or zero with `allow_zero`), at most a
    year."""

    def parse(value: str) -> float:
        text = str(value)
        if _DECIMAL.fullmatch(text):
            amount = float(text)
        elif _GO_DURATION.fullmatch(text):
            amount = parse_duration(text)
        else:
            raise typer.BadParameter(
                f"{_shown(text)} is not a duration (seconds such as 90 or 0.5, or a Go "
                "duration such as 90s, 5m, 1h30m, in ASCII digits)"
            )
        if not math.isfinite(amount) or amount < 0 or (amount == 0 and not allow_zero):
            raise typer.BadParameter(f"{_shown(text)}: must be a finite duration above zero")
        if amount > LONGEST_DURATION:
            # Beyond a year is no batch run; bigger values overflow clocks and int32 fields
            # (the Lease's leaseDurationSeconds) further down.
            raise typer.BadParameter(f"{_shown(text)}: must be at most a year (8760h)")
        return amount

    return parse


def plain_text(value: str | None, option: str, what: str) -> None:
    """A name or version: no surrounding whitespace, no control character."""
    if value is None:
        return
    if not value or value != value.strip() or any(not c.isprintable() for c in value):
        raise typer.BadParameter(
            f"{_shown(value)} is not {what}: empty, or with spaces around it or a control "
            "character in it",
            param_hint=option,
        )


def check_paths(paths: dict[str, list[str]]) -> None:
    """Every path option's values: an empty one is no path (it would read as the current
    directory)."""
    for option, given in paths.items():
        for path in given:
            if not path.strip():
                raise typer.BadParameter(
                    "an empty path (give . for the current directory)", param_hint=option
                )


def as_named(path: str, *, standard_input: str, relative_ok: bool) -> str:
    """A path option's value as the run keeps it: `standard_input` (`-`) alone means
    standard input; any other spelling of a path is that path, also when it names a file
    called `-` (`./-`, `-/`), which would read as `-` once made a `Path`: that one is kept
    absolute (or, with `relative_ok`, as given: read inside a repository, where the path is
    looked at as written)."""
    if path == standard_input or Path(path) != Path(standard_input) or relative_ok:
        return path
    return str(Path.cwd() / standard_input)


def check_directory_option(path: Path | None, option: str) -> None:
    """A directory the run creates if missing (`--git-cache`): refused when it, or the
    nearest of its parents that exists, is not a directory."""
    if path is None:
        return
    if not str(path).strip():
        raise typer.BadParameter("an empty path", param_hint=option)
    for where in (path, *path.absolute().parents):
        if where.exists() or where.is_symlink():
            if not where.is_dir():
                what = "is" if where == path else f"is under {where}, which is"
                raise typer.BadParameter(f"{path} {what} not a directory", param_hint=option)
            return


def named_paths(values: list[str] | None, *, git: bool) -> tuple[str, ...]:
    """A path option's values as the run keeps them: `-` alone is standard input, every
    other value a path (see `as_named`)."""
    from reconcile.files import STANDARD_INPUT  # the readers: not loaded for --help

    return tuple(
        as_named(value, standard_input=STANDARD_INPUT, relative_ok=git) for value in values or []
    )


def needs(given: bool, option: str, what: str, present: bool) -> None:
    """`option`, when `given`, means something only with `what` (`present`)."""
    if given and not present:
        raise typer.BadParameter(f"{option} needs {what}", param_hint=option)


def check_git_options(url: str | None, ref: str | None, cache: Path | None) -> None:
    """`--git`, `--git-ref` and `--git-cache` as git will read them, before anything runs."""
    for given, option in ((ref, "--git-ref"), (cache, "--git-cache")):
        needs(given is not None, option, "--git", url is not None)
    if url is None:
        return
    from reconcile.gitsource import GitSourceError  # imported here: only --git runs need it
    from reconcile.gitsource.checks import check_ref, check_url

    checks: list[tuple[Callable[[str], None], str | None, str]] = [
        (check_url, url, "--git"),
        (check_ref, ref, "--git-ref"),
    ]
    for check, value, option in checks:
        try:
            if value is not None:
                check(value)
        except GitSourceError as exc:
            said = str(exc).removeprefix(f"{option}: ").removeprefix(f"{option} ")
            raise typer.BadParameter(said, param_hint=option) from None
    check_directory_option(cache, "--git-cache")


def check_meaning(
    *,
    paths: bool,
    local: bool,
    manifests: bool,
    git: bool,
    recursive: bool,
    applyset_given: bool,
    force_conflicts: bool,
    server_side: bool,
    kubeconfig: str | None,
    context: str | None,
    kustomize_remote: bool,
    kustomize_isolation: str | None,
) -> None:
    """Options that mean nothing with the others given: refused rather than ignored.
    `paths`: any of --local, --manifests and --controllers; `kustomize_isolation`: the mode
    when it was given (None: the default)."""
    needs(applyset_given, "--applyset", "--manifests (the ApplySet records them)", manifests)
    needs(force_conflicts, "--force-conflicts", "--apply-strategy server-side", server_side)
    needs(recursive, "--recursive", "--local, --manifests or --controllers", paths)
    needs(git, "--git", "--local, --manifests or --controllers (read inside it)", paths)
    needs(
        kustomize_isolation not in (None, "auto"),
        "--kustomize-isolation",
        "kustomize off the network, which --kustomize-allow-remote turns off",
        not kustomize_remote,
    )
    for value, option in ((kubeconfig, "--kubeconfig"), (context, "--context")):
        if value is not None and local:
            raise typer.BadParameter(
                "means nothing with --local, which runs in an in-process cluster",
                param_hint=option,
            )
    plain_text(context, "--context", "a context name")


_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?")


def check_controller_names(names: list[str] | None) -> None:
    """`--controller NAME`: a controller's name is a DNS subdomain, as the API server
    requires of every custom resource's."""
    for name in names or []:
        if not (_DNS_SUBDOMAIN.fullmatch(name) and len(name) <= 253):
            raise typer.BadParameter(
                f"{name!r} is not a controller's name (a DNS subdomain: lower-case letters, "
                "digits, '-' and '.')",
                param_hint="--controller",
            )


def path_value(value: str) -> Path:
    """A parser for a path option: a path, never an empty one (which would read as the
    current directory)."""
    if not str(value).strip():
        raise typer.BadParameter("an empty path (give . for the current directory)")
    return Path(value)
