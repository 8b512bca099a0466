"""The documentation site is built as the test command builds it (`mkdocs build --strict`, with
mkdocs.yml's `validation`), and that build fails on what a reader would trip over: a link to
a page that is not there, a link to an anchor a page does not have, and a page left out of the
navigation. Each is checked on a copy of the site broken that way, beside the copy unbroken."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.cli import ROOT

MKDOCS = Path(sys.executable).parent / "mkdocs"


def site_copy(tmp_path: Path) -> Path:
    """What the build reads: mkdocs.yml, docs/, and the files pages include."""
    copy = tmp_path / "checkout"
    copy.mkdir()
    shutil.copy(ROOT / "mkdocs.yml", copy / "mkdocs.yml")
    shutil.copytree(ROOT / "docs", copy / "docs")
    shutil.copytree(ROOT / "manifests" / "alerts", copy / "manifests" / "alerts")
    return copy


def build(checkout: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(MKDOCS), "build", "--strict", "--site-dir", str(checkout.parent / "site")],
        cwd=checkout,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )


def append(page: str, text: str) -> Callable[[Path], None]:
    def edit(checkout: Path) -> None:
        path = checkout / "docs" / page
        path.write_text(path.read_text() + f"\n{text}\n")

    return edit


def orphan(checkout: Path) -> None:
    (checkout / "docs" / "notes.md").write_text("# Notes\n\nA page nobody can navigate to.\n")


def test_the_site_as_it_is_builds(tmp_path: Path) -> None:
    done = build(site_copy(tmp_path))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "reference" / "cli" / "index.html").exists()


@pytest.mark.parametrize(
    ("edit", "warning"),
    [
        pytest.param(
            append("concepts.md", "See [the missing page](no-such-page.md)."),
            "contains a link 'no-such-page.md', but the target is not found",
            id="link-to-a-missing-page",
        ),
        pytest.param(
            append("concepts.md", "See [the lock](operations.md#no-such-anchor)."),
            "does not contain an anchor '#no-such-anchor'",
            id="link-to-a-missing-anchor",
        ),
        pytest.param(
            append("concepts.md", "See [above](#no-such-section)."),
            "there is no such anchor on this page",
            id="link-to-a-missing-anchor-of-the-page",
        ),
        pytest.param(orphan, 'not included in the "nav" configuration', id="page-not-in-nav"),
    ],
)
def test_a_broken_site_fails_the_build(
    tmp_path: Path, edit: Callable[[Path], None], warning: str
) -> None:
    checkout = site_copy(tmp_path)
    edit(checkout)
    done = build(checkout)
    said = done.stdout + done.stderr
    assert done.returncode != 0, said
    assert warning in said, said
    assert "Aborted with 1 warnings in strict mode" in said, said
