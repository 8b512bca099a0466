"""Every wait inside the budget and the signal handling, through the real command on both
backends: a webhook that trickles its answer (status line, headers or body) is cut by the
hook's timeout or the run's end; a command hook whose child leaves its session and keeps the
output open neither holds the run nor loses the answer; a signal during either still leaves
the report."""

from __future__ import annotations

import json
import signal
import threading
import time
from typing import Any

import pytest
import yaml

from tests.support.poll import eventually
from tests.support.trickle import trickling_server
from tests.support.vault import Vault

PARTS = ["status", "headers", "body"]


def use_webhook(vault: Vault, url: str, timeout: str) -> None:
    controller = vault.controller()
    controller["spec"]["hooks"] = {"sync": {"webhook": {"url": url, "timeout": timeout}}}
    vault.controller_path.write_text(yaml.safe_dump(controller))


def report_of(vault: Vault) -> dict[str, Any]:
    report: dict[str, Any] = json.loads((vault.directory / "report.json").read_text())
    return report


def report_file(vault: Vault) -> list[str]:
    return ["--report-file", f"json:{vault.directory / 'report.json'}"]


@pytest.mark.parametrize("where", PARTS)
def test_a_trickling_webhook_is_cut_at_the_end_of_the_budget(vault: Vault, where: str) -> None:
    vault.parent("drip")
    vault.write()
    with trickling_server(where, interval=0.5) as url:
        use_webhook(vault, url, timeout="120s")
        started = time.monotonic()
        done = vault.run("--max-duration", "4s", *report_file(vault), timeout=60)
        elapsed = time.monotonic() - started
    assert elapsed < 4 + 8, f"a 4 s run took {elapsed:.1f} s"  # process start-up included
    assert done.returncode == 1, done.stderr[-2000:]
    report = report_of(vault)
    assert report["interrupted"] == "budget"
    assert "Traceback" not in done.stdout + done.stderr


@pytest.mark.parametrize("where", PARTS)
def test_a_trickling_webhook_fails_its_own_parent_at_its_timeout(vault: Vault, where: str) -> None:
    vault.parent("drip")
    vault.write()
    with trickling_server(where, interval=0.5) as url:
        use_webhook(vault, url, timeout="2s")
        started = time.monotonic()
        done = vault.run("--max-duration", "60s", *report_file(vault), timeout=90)
        elapsed = time.monotonic() - started
    assert elapsed < 2 + 12, f"a hook with a 2 s timeout held the run {elapsed:.1f} s"
    assert done.returncode == 1, done.stderr[-2000:]
    report = report_of(vault)
    assert report["interrupted"] is None
    assert any("no complete response within the 2s timeout" in e for e in report["errors"])


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_cuts_a_trickling_webhook_and_leaves_the_report(
    vault: Vault, sig: signal.Signals
) -> None:
    vault.parent("drip")
    vault.write()
    hook_called = threading.Event()
    with trickling_server("body", interval=1.0, connected=hook_called) as url:
        use_webhook(vault, url, timeout="300s")
        process = vault.start("--max-duration", "300s", *report_file(vault))
        # started (its signal handlers in place), and the hook is trickling
        assert hook_called.wait(60), "the run never called the hook"
        sent = time.monotonic()
        process.send_signal(sig)
        stdout, stderr = process.communicate(timeout=60)
    assert time.monotonic() - sent < 10, "the run did not stop promptly"
    assert process.returncode == 128 + sig.value, stderr[-2000:]
    assert report_of(vault)["interrupted"] == sig.name
    assert "Traceback" not in stdout + stderr


def test_a_command_hook_whose_child_keeps_the_output_open_does_not_hold_the_run(
    vault: Vault,
) -> None:
    vault.parent("daemon", "detach", seconds=60, secret="a-secret-value")
    vault.write()
    started = time.monotonic()
    done = vault.run("--max-duration", "60s", *report_file(vault), timeout=90)
    elapsed = time.monotonic() - started
    assert elapsed < 15, f"the run waited {elapsed:.1f} s for the hook's detached child"
    assert done.returncode == 0, done.stderr[-2000:]
    assert "a process it started still holds its output" in done.stderr
    applied = {
        a["object"]["name"]
        for p in report_of(vault)["passes"]
        for c in p["controllers"]
        for parent in c["parents"]
        for a in parent["actions"]
        if a["state"] == "applied"
    }
    assert {"daemon-creds", "daemon-settings"} <= applied


def test_a_hanging_command_hook_with_a_detached_child_ends_at_the_budget(vault: Vault) -> None:
    vault.parent("stuck", "detach-hang", seconds=60)
    vault.write()
    started = time.monotonic()
    done = vault.run("--max-duration", "3s", *report_file(vault), timeout=60)
    elapsed = time.monotonic() - started
    assert elapsed < 3 + 8, f"a 3 s run took {elapsed:.1f} s"
    assert done.returncode == 1, done.stderr[-2000:]
    assert report_of(vault)["interrupted"] == "budget"


def test_sigterm_stops_a_command_hook_with_a_detached_child(vault: Vault) -> None:
    vault.parent("stuck", "detach-hang", seconds=60)
    vault.write()
    process = vault.start("--max-duration", "300s", *report_file(vault))
    eventually((vault.markers / "stuck").exists, what="the hook to start", timeout=60)
    time.sleep(0.5)
    sent = time.monotonic()
    process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=60)
    assert time.monotonic() - sent < 10, "the run did not stop promptly"
    assert process.returncode == 143, stderr[-2000:]
    assert report_of(vault)["interrupted"] == "SIGTERM"
    assert "Traceback" not in stdout + stderr
