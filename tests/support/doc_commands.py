"""The shell blocks of the documentation and the README, run as a reader would run them.

Every `sh`, `bash`, `shell` or `console` block (read by `markdown_check.read`) is run, unless
the HTML comment right before it says why not; that comment also says where it runs:

    <!-- check: not run: REASON -->            not run here, and why (a reason is required)
    <!-- check: not "PREFIX": REASON -->       its commands starting with PREFIX are not run
    <!-- check: cluster -->                    against the documentation's own control plane
    <!-- check: cwd DIR -->                    from DIR of the checkout's copy, not its root
    <!-- check: may exit N, M -->              its commands may exit N or M as well as 0
    <!-- check: stderr -->                     (console) the output shown is standard error's

Clauses are separated by `;`; a reason, last, may hold any text. A block runs in a copy of
the checkout's examples, manifests and action (the package and its tools as they are), with
HOME a directory of its own, and without a cluster unless it says `cluster` (the test command,
`./scripts/test`, which runs these checks, is never run by them); the blocks of one page share
that copy and HOME, in order, as a reader going down the page would. Each command (a line,
with its continuation lines and here-documents) must exit 0, or the code its trailing comment
names (`# exit 2: ...`), or one the block allows. In a `console` block, each `$ ` line is a
command and the lines after it its output, compared with what it printed: a line `...` stands
for any lines, `...` within a line for any text, and durations and timestamps are compared as
such, whatever their value.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.cli import ROOT, command_env
from tests.support.markdown_check import Block, read

SHELLS = frozenset({"sh", "bash", "shell", "console"})
# Copied into each page's directory (small, and blocks may write there); the rest is linked.
COPIED = ("examples", "manifests", "github-actions")
LINKED = ("reconcile", "scripts", ".venv", "pyproject.toml", "README.md", "LICENSE", "Dockerfile")
# the script that sets .venv up; its stamp names a digest of pyproject.toml and the script
SETUP_VENV = "scripts/setup-venv.sh"
_CLAUSE = re.compile(
    r'^(?:not run: (?P<reason>.+)|not "(?P<prefix>[^"]+)": (?P<why>.+)|(?P<cluster>cluster)'
    r"|cwd (?P<cwd>\S+)|may exit (?P<codes>\d+(?:, *\d+)*)|(?P<stderr>stderr))$"
)
_EXPECTED_EXIT = re.compile(r"#\s*exit (\d+)\b")
# The test command itself: the suite that runs these checks cannot run itself.
SUITE = re.compile(r"(?:^|\s)\./scripts/test(?:\s|$)")
_HEREDOC = re.compile(r"<<-?\s*'?\"?(\w+)'?\"?")


@dataclass
class Check:
    """What a block's `<!-- check: ... -->` comment says."""

    skipped: str = ""  # why the block is not run
    skipped_prefixes: dict[str, str] = field(default_factory=dict)
    cluster: bool = False
    cwd: str = ""
    codes: frozenset[int] = frozenset({0})
    stderr: bool = False


def parse_check(comment: str, where: str) -> Check:
    check = Check()
    match = re.fullmatch(r"<!--\s*check:(.*?)-->", comment, re.DOTALL)
    if match is None:
        return check  # another comment (a generated region's mark): no instructions
    for clause in _clauses(match.group(1)):
        found = _CLAUSE.match(clause)
        if found is None:
            raise AssertionError(f"{where}: a check clause this harness does not know: {clause!r}")
        if found["reason"]:
            check.skipped = found["reason"]
        elif found["prefix"]:
            check.skipped_prefixes[found["prefix"]] = found["why"]
        elif found["cluster"]:
            check.cluster = True
        elif found["cwd"]:
            check.cwd = found["cwd"]
        elif found["codes"]:
            check.codes |= {int(c) for c in found["codes"].split(",")}
        else:
            check.stderr = True
    return check


def _clauses(text: str) -> list[str]:
    """The clauses, `;` apart; a reason (`not run: ...`) takes the rest of the comment, `;`
    and all."""
    out: list[str] = []
    parts = text.split(";")
    for i, part in enumerate(parts):
        clause = " ".join(part.split())
        if clause.startswith("not "):
            out.append(" ".join(";".join(parts[i:]).split()))
            break
        if clause:
            out.append(clause)
    return out


@dataclass(frozen=True)
class Command:
    text: str  # as a shell reads it: continuation lines and here-documents included
    expected_exit: int | None  # from its trailing comment (`# exit 2: ...`)
    output: tuple[str, ...] = ()  # a console block's shown output


def commands(block: Block) -> list[Command]:
    """The block's commands: a shell script's, or a console transcript's `$ ` lines."""
    lines = block.content.rstrip("\n").split("\n")
    if block.language != "console":
        return _script_commands(lines)
    found: list[Command] = []
    i = 0
    while i < len(lines):
        if not lines[i].startswith("$ "):
            raise AssertionError(f"console line {i + 1} is output before any command: {lines[i]!r}")
        first = [lines[i][2:]]
        i += 1
        while first[-1].endswith("\\") and i < len(lines):
            first.append(lines[i].removeprefix("> "))
            i += 1
        output = []
        while i < len(lines) and not lines[i].startswith("$ "):
            output.append(lines[i])
            i += 1
        text = "\n".join(first)
        found.append(Command(text, _expected_exit(text), tuple(output)))
    return found


def _script_commands(lines: list[str]) -> list[Command]:
    found: list[Command] = []
    i = 0
    while i < len(lines):
        if not lines[i].strip() or lines[i].lstrip().startswith("#"):
            i += 1
            continue
        text = [lines[i]]
        i += 1
        while text[-1].endswith("\\") and i < len(lines):
            text.append(lines[i])
            i += 1
        for terminator in _HEREDOC.findall("\n".join(text)):
            while i < len(lines) and lines[i].strip() != terminator:
                text.append(lines[i])
                i += 1
            text.append(lines[i] if i < len(lines) else terminator)
            i += 1
        joined = "\n".join(text)
        found.append(Command(joined, _expected_exit(joined)))
    return found


def _expected_exit(text: str) -> int | None:
    """The exit code a trailing comment names (`# exit 2: changes pending`), on any line of
    the command (a continued one's comment is on its last)."""
    for line in text.split("\n"):
        comment = line.split(" #", 1)[1] if " #" in line else ""
        found = _EXPECTED_EXIT.match("#" + comment) if comment else None
        if found:
            return int(found.group(1))
    return None


@dataclass
class Sandbox:
    """One page's copy of the checkout, its HOME, and the cluster its `cluster` blocks use."""

    root: Path
    kubeconfig: Path | None = None

    @classmethod
    def make(cls, directory: Path, kubeconfig: Path | None) -> Sandbox:
        # `./scripts/reconcile` sets the venv up when its stamp is stale: through the link it
        # would rewrite the checkout's venv for the copy's path. The test command sets it up
        # first; a venv older than pyproject.toml or the script is an error here, not an install.
        recipe = (ROOT / "pyproject.toml").read_bytes() + (ROOT / SETUP_VENV).read_bytes()
        stamp = ROOT / ".venv" / f".installed-{hashlib.sha1(recipe).hexdigest()[:12]}"
        assert stamp.exists(), (
            f"{stamp.parent} is older than pyproject.toml or {SETUP_VENV}: run {SETUP_VENV}"
        )
        directory.mkdir(parents=True)
        for name in COPIED:
            shutil.copytree(ROOT / name, directory / name, symlinks=True)
        for name in LINKED:
            (directory / name).symlink_to(ROOT / name)
        (directory / "home").mkdir()
        return cls(directory, kubeconfig)

    def environment(self, cluster: bool) -> dict[str, str]:
        env = command_env(
            HOME=str(self.root / "home"),
            PATH=f"{ROOT / '.venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', os.defpath)}",
            COLUMNS="100",
            # a reader's git has an identity; the sandbox's HOME has no configuration
            GIT_AUTHOR_NAME="Reader",
            GIT_AUTHOR_EMAIL="reader@example.com",
            GIT_COMMITTER_NAME="Reader",
            GIT_COMMITTER_EMAIL="reader@example.com",
        )
        env.pop("XDG_CACHE_HOME", None)
        if cluster:
            assert self.kubeconfig is not None, "a cluster block, and no cluster to run it on"
            env["KUBECONFIG"] = str(self.kubeconfig)
        return env


@dataclass(frozen=True)
class Outcome:
    command: Command
    code: int
    stdout: str
    stderr: str


def run_block(sandbox: Sandbox, block: Block, check: Check, timeout: float = 600) -> list[Outcome]:
    """The block's commands, run in one shell in order (so `cd` and variables carry on), each
    with its exit code and output."""
    todo = [
        c for c in commands(block)
        if not any(c.text.startswith(prefix) for prefix in check.skipped_prefixes)
        and not SUITE.search(c.text.split("\n", 1)[0].split(" #", 1)[0])
    ]  # fmt: skip
    work = sandbox.root / ".runs" / f"line-{block.line}"
    work.mkdir(parents=True, exist_ok=True)
    script = [f"cd {shlex.quote(str(sandbox.root / check.cwd))}"]
    for n, command in enumerate(todo):
        out, err, status = (
            shlex.quote(str(work / f"{n}.{kind}")) for kind in ("out", "err", "code")
        )
        script += [f"{{ {command.text}\n}} >{out} 2>{err}", f"echo $? >{status}"]
    subprocess.run(
        ["bash", "-c", "\n".join(script)],
        env=sandbox.environment(check.cluster),
        stdin=subprocess.DEVNULL,
        timeout=timeout,
        check=False,
    )
    outcomes = []
    for n, command in enumerate(todo):
        code_file = work / f"{n}.code"
        code = int(code_file.read_text()) if code_file.exists() else -1
        outcomes.append(
            Outcome(command, code, (work / f"{n}.out").read_text(), (work / f"{n}.err").read_text())
        )
    return outcomes


_DURATION = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s|m|h|d)\b")
_TIMESTAMP = re.compile(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z\b")


def _normal(line: str) -> str:
    return _DURATION.sub("<duration>", _TIMESTAMP.sub("<time>", line)).rstrip()


def output_matches(shown: tuple[str, ...], printed: str) -> bool:
    """Whether `printed` reads as the `shown` output (`...` lines and `...` within a line
    standing for anything; durations and timestamps compared as such)."""
    want = [_normal(line) for line in shown]
    while want and not want[-1]:
        want.pop()
    got = [_normal(line) for line in printed.rstrip("\n").split("\n")] if printed.strip() else []
    return _match(want, got)


def _match(want: list[str], got: list[str]) -> bool:
    if not want:
        return not got
    if want[0].strip() == "...":
        return any(_match(want[1:], got[i:]) for i in range(len(got) + 1))
    if not got:
        return False
    pattern = ".*".join(re.escape(part) for part in want[0].split("..."))
    return re.fullmatch(pattern, got[0]) is not None and _match(want[1:], got[1:])


def problems(outcomes: list[Outcome], check: Check, where: str) -> list[str]:
    """What in a block's run differs from what its page says."""
    found = []
    for outcome in outcomes:
        command = outcome.command
        allowed = {command.expected_exit} if command.expected_exit is not None else check.codes
        said = f"{where}: `{command.text.splitlines()[0]}`"
        if outcome.code not in allowed:
            found.append(
                f"{said} exited {outcome.code}, not {sorted(allowed)}\n--- stdout (end):\n"
                f"{outcome.stdout[-3000:]}\n--- stderr (end):\n{outcome.stderr[-3000:]}"
            )
        elif command.output and not output_matches(
            command.output, outcome.stderr if check.stderr else outcome.stdout
        ):
            printed = outcome.stderr if check.stderr else outcome.stdout
            found.append(
                f"{said} printed what the page does not show.\n--- shown:\n"
                + "\n".join(command.output)
                + f"\n--- printed:\n{printed}"
            )
    return found


@dataclass(frozen=True)
class PageBlock:
    page: str  # relative to the checkout
    block: Block
    check: Check


def shell_blocks(page: Path) -> list[PageBlock]:
    relative = str(page.relative_to(ROOT))
    found = []
    for block in read(page.read_text()).blocks:
        if block.language not in SHELLS:
            continue
        where = f"{relative}:{block.line}"
        check = parse_check(block.comment, where)
        found.append(PageBlock(relative, block, check))
    return found


def pages() -> list[Path]:
    """The README and every page of the site, in the site's order."""
    import yaml

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    ordered: list[str] = []

    def walk(entries: list[object]) -> None:
        for entry in entries:
            if isinstance(entry, str):
                ordered.append(entry)
            elif isinstance(entry, dict):
                for value in entry.values():
                    walk(value if isinstance(value, list) else [value])

    walk(config["nav"])
    return [ROOT / "README.md", *(ROOT / "docs" / name for name in ordered)]
