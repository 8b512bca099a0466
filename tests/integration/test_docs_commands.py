"""Every shell block of the README and of the documentation site, run as a reader would run it
(tests/support/doc_commands.py says how a page marks what is not run, and why): the commands
exit as the page says, and a `console` block's output is what the command prints.

A page whose blocks need a cluster runs against a control plane of its own, started for it (a
reader's cluster holds nothing of the other tests', nor of the other pages'); the others with
`--local` or no cluster at all."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.controlplane import ADMIN_USER, CURRENT_RELEASE, ControlPlane, build
from tests.support.doc_commands import (
    PageBlock,
    Sandbox,
    pages,
    problems,
    run_block,
    shell_blocks,
)

BLOCKS = {page: shell_blocks(page) for page in pages()}
WITH_CLUSTER = [page for page, blocks in BLOCKS.items() if any(b.check.cluster for b in blocks)]
WITHOUT = [page for page, blocks in BLOCKS.items() if page not in WITH_CLUSTER and blocks]


def run_page(sandbox: Sandbox, blocks: list[PageBlock]) -> list[str]:
    found: list[str] = []
    for item in blocks:
        if item.check.skipped:
            continue
        where = f"{item.page}:{item.block.line}"
        found += problems(run_block(sandbox, item.block, item.check), item.check, where)
    return found


def test_every_page_is_read_and_every_skipped_block_says_why() -> None:
    assert Path("README.md").name in {p.name for p in BLOCKS}
    assert WITH_CLUSTER and WITHOUT
    reasons = [
        (item.page, item.block.line, why)
        for blocks in BLOCKS.values()
        for item in blocks
        for why in (item.check.skipped, *item.check.skipped_prefixes.values())
        if why
    ]
    assert [r for r in reasons if len(r[2].split()) < 4] == []  # a reason, not a word
    ran = sum(1 for blocks in BLOCKS.values() for b in blocks if not b.check.skipped)
    assert ran >= 2 * len(reasons), (ran, reasons)  # not run: the exception, not the rule


@pytest.mark.parametrize("page", WITHOUT, ids=[p.name for p in WITHOUT])
def test_the_commands_of_a_page_run_as_it_says(page: Path, tmp_path: Path) -> None:
    sandbox = Sandbox.make(tmp_path / "reader", kubeconfig=None)
    found = run_page(sandbox, BLOCKS[page])
    assert not found, "\n\n".join(found)


@contextlib.contextmanager
def fresh_cluster(directory: Path) -> Iterator[Path]:
    """A control plane of the page's own, and an administrator's kubeconfig for it."""
    plane = ControlPlane(build(CURRENT_RELEASE), CURRENT_RELEASE)
    plane.start()
    try:
        config = json.loads(plane.kubeconfig.read_text())
        config["current-context"] = ADMIN_USER
        kubeconfig = directory / "kubeconfig"
        kubeconfig.write_text(json.dumps(config))
        yield kubeconfig
    finally:
        plane.stop()


@pytest.mark.long
@pytest.mark.controlplane
@pytest.mark.timeout(900)
@pytest.mark.parametrize("page", WITH_CLUSTER, ids=[p.name for p in WITH_CLUSTER])
def test_the_commands_of_a_page_run_on_a_cluster(
    control_planes: object, page: Path, tmp_path: Path
) -> None:
    """`control_planes`: skipped as the rest of the tier is, when it is opted out."""
    with fresh_cluster(tmp_path) as kubeconfig:
        sandbox = Sandbox.make(tmp_path / "reader", kubeconfig=kubeconfig)
        found = run_page(sandbox, BLOCKS[page])
    assert not found, "\n\n".join(found)
