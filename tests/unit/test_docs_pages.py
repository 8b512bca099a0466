"""What the documentation says of the code is what the code has: the messages the
troubleshooting page quotes are the program's own words, the repository's files and tests the
pages name exist, the alert rules name only metrics a run writes, and the README stays a front
door that starts with the two commands."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import yaml

from tests.support.markdown_check import read

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
REPOSITORY = "https://github.com/acme/reconcile/"
# Spans that read like a path of this repository and are not one.
NOT_PATHS = {
    "docs/src/api/hook.md",  # in Metacontroller's repository
    "reconcile/reconcile",  # the CronJob's Lease, NAMESPACE/NAME
}
# Words of the command-line framework's (click's), not of the program's own code.
FRAMEWORK = ("Invalid value for",)


def literals() -> list[str]:
    """Every string in the program's code, with the literal parts of f-strings (implicit
    concatenations joined, as Python joins them)."""
    found: list[str] = []
    for directory in ("reconcile", "github-actions"):
        for path in (ROOT / directory).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    found.append(node.value)
    return found


def quoted_messages() -> list[str]:
    """The messages the troubleshooting page quotes: `> ` lines holding one code span."""
    text = (DOCS / "troubleshooting.md").read_text()
    return re.findall(r"^> `(.+)`$", text, re.M)


def test_the_troubleshooting_page_quotes_the_programs_own_words() -> None:
    known = literals()
    messages = quoted_messages()
    assert len(messages) > 15
    for message in messages:
        for piece in re.split(r"<[^>]*>", message):
            for part in (p.strip(" :;'\"") for p in re.split(r": |; ", piece)):
                if len(part) < 4 or part.startswith(FRAMEWORK):
                    continue
                assert any(part in literal for literal in known), (message, part)


def test_a_made_up_message_is_caught() -> None:
    """The check above can fail: words the code does not have are found out."""
    known = literals()
    assert not any("the cluster is on fire" in literal for literal in known)


def repository_links() -> list[str]:
    links = [link for page in PAGES for link in read(page.read_text()).links]
    return [link for link in links if link.startswith(REPOSITORY)]


def test_links_into_the_repository_name_files_it_has() -> None:
    links = repository_links()
    assert len(links) > 20
    for link in links:
        match = re.fullmatch(rf"{re.escape(REPOSITORY)}(?:tree|blob)/main/(.+?)/?", link)
        assert match is not None, link
        assert (ROOT / match.group(1)).exists(), link


def test_the_tests_the_pages_name_exist() -> None:
    named = {
        found
        for page in PAGES
        for found in re.findall(r"`(tests/[\w/.-]+\.py(?:::\w+)?)", page.read_text())
    }
    assert len(named) > 20
    for reference in sorted(named):
        path, _, test = reference.partition("::")
        assert (ROOT / path).is_file(), reference
        if test:
            assert re.search(rf"^def {test}\b", (ROOT / path).read_text(), re.M), reference


def test_the_repository_paths_the_pages_name_exist() -> None:
    """A file or directory of the repository named in a code span (`reconcile/cli/`,
    `manifests/cronjob/options.env`): a layout that moved is found here, not by a reader."""
    spans = {
        found
        for page in PAGES
        for found in re.findall(
            r"`((?:reconcile|scripts|manifests|github-actions|examples|tests|docs)/[\w./-]*)`",
            page.read_text(),
        )
    }
    assert len(spans) > 30
    missing = sorted(span for span in spans - NOT_PATHS if not (ROOT / span).exists())
    assert missing == []


def test_the_readme_starts_with_the_two_commands_and_stays_a_front_door() -> None:
    text = (ROOT / "README.md").read_text()
    first = read(text).blocks[0]
    assert text.startswith("# reconcile\n\n```sh\n")
    commands = [line.split("#")[0].strip() for line in first.content.splitlines()]
    assert commands == ["./scripts/reconcile --local examples/hello-world", "./scripts/test"]
    assert "./scripts/test" in (ROOT / ".ci" / "run").read_text().splitlines()
    assert len(text.splitlines()) <= 200


def test_the_readmes_links_lead_somewhere() -> None:
    for link in read((ROOT / "README.md").read_text()).links:
        if "://" in link:
            continue
        path = link.split("#")[0]
        assert (ROOT / path).exists(), link


def test_the_alert_rules_name_only_metrics_a_run_writes() -> None:
    reference = (DOCS / "reference" / "metrics.md").read_text()
    written = set(re.findall(r"^\| `([a-z_<>]+)` \|", reference, re.M))
    hook = {name.replace("<hook>", "sync") for name in written}
    series = {f"{name}{suffix}" for name in hook for suffix in ("", "_sum", "_count", "_bucket")}
    rules = yaml.safe_load((ROOT / "manifests" / "alerts" / "reconcile-rules.yaml").read_text())
    exprs = [rule["expr"] for group in rules["groups"] for rule in group["rules"]]
    assert len(exprs) >= 4
    for expr in exprs:
        for name in re.findall(r"\b(?:reconcile|metacontroller)_[a-z_]+", expr):
            assert name in series, (name, expr)
