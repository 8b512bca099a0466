"""Safe to run unattended, through the real command on both backends: no Secret value leaks
through any output, a report whatever happens (signals, the budget), output paths checked
before the first write, and inputs that cannot be read as given change nothing."""

from __future__ import annotations

import base64
import json
import signal
import time
from pathlib import Path

import pytest
import yaml

from reconcile.cluster.errors import NotFound
from tests.support.poll import eventually
from tests.support.vault import Vault, vault_scenario

SECRET = "pl4nted-S3CRET-marker-7f3a"
SECRET_FORMS = (SECRET, base64.b64encode(SECRET.encode()).decode())


def assert_no_secret(text: str, where: str) -> None:
    for form in SECRET_FORMS:
        assert form not in text, f"the Secret's value ({form}) leaked into {where}"
    # Nor a recognisable piece of it (an excerpt cut in the middle of the value).
    assert SECRET[:12] not in text, f"a piece of the Secret's value leaked into {where}"


def report_args(directory: Path) -> list[str]:
    return [
        "--report-file",
        f"json:{directory / 'report.json'}",
        "--report-file",
        f"markdown:{directory / 'report.md'}",
        "--report-file",
        f"text:{directory / 'report.txt'}",
    ]


def reports(directory: Path) -> dict[str, str]:
    return {
        name: (directory / name).read_text() for name in ("report.json", "report.md", "report.txt")
    }


# -- class 2: secrets through error excerpts ---------------------------------------------------


@pytest.mark.parametrize("behaviour", ["almost-json", "stderr", "bad-base64"])
@pytest.mark.parametrize("log_format", ["text", "json"])
def test_no_secret_value_reaches_a_report_a_log_or_an_event(
    vault: Vault, behaviour: str, log_format: str
) -> None:
    vault.parent("leaky", behaviour, secret=SECRET)
    vault.parent("fine", "ok", secret="another-value-not-planted")
    vault.write()
    out = vault.directory / "out"
    extra = ["--output-dir", str(out)] if vault.backend is None else []
    done = vault.run(
        "--log-level", "debug", "--log-format", log_format, *report_args(vault.directory), *extra
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert_no_secret(done.stdout, "the text report on stdout")
    assert_no_secret(done.stderr, f"the {log_format} log")
    for name, text in reports(vault.directory).items():
        assert_no_secret(text, name)
    report = json.loads((vault.directory / "report.json").read_text())
    assert any("leaky" in e for e in report["errors"]), report["errors"]
    events = vault.events(out)
    if vault.backend is None:
        # --local: Events are a record of the run, not state; the dump leaves them out
        assert events == []
        return
    assert any(e["reason"] == "SyncError" for e in events), events
    for event in events:
        assert_no_secret(json.dumps(event), f"Event {event['metadata']['name']}")


def test_secret_files_in_the_output_directory_are_private(tmp_path: Path) -> None:
    with vault_scenario(tmp_path, None) as vault:
        vault.parent("kept", "ok", secret=SECRET)
        vault.write()
        out = tmp_path / "out"
        done = vault.run("--output-dir", str(out))
        assert done.returncode == 0, done.stderr
        secret_file = out / vault.namespace / "secrets" / "kept-creds.yaml"
        assert secret_file.stat().st_mode & 0o777 == 0o600
        config_file = out / vault.namespace / "configmaps" / "kept-settings.yaml"
        assert config_file.stat().st_mode & 0o077 != 0  # other files keep the default mode
        assert_no_secret(done.stdout + done.stderr, "the run's output")


# -- class 5: a report whatever happens ---------------------------------------------------------


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_ends_the_run_with_the_report_of_what_it_did(
    vault: Vault, sig: signal.Signals, code: int
) -> None:
    vault.parent("a-first", "ok", secret="first")
    vault.parent("b-slow", "sleep", seconds=60, secret="second")
    vault.write()
    process = vault.start("--workers", "1", "--max-duration", "120", *report_args(vault.directory))
    eventually((vault.markers / "b-slow").exists, what="the slow hook to start", timeout=60)
    sent = time.monotonic()
    process.send_signal(sig)
    stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == code, stderr
    assert time.monotonic() - sent < 10, "the run did not stop promptly"
    assert "Traceback" not in stdout + stderr
    report = json.loads((vault.directory / "report.json").read_text())
    assert report["interrupted"] == sig.name
    assert sig.name in report["stopped"]
    applied = [
        a
        for p in report["passes"]
        for c in p["controllers"]
        for parent in c["parents"]
        for a in parent["actions"]
        if a["state"] == "applied"
    ]
    assert {a["object"]["name"] for a in applied} >= {"a-first-creds", "a-first-settings"}
    for name in ("report.md", "report.txt"):
        assert "interrupted by " + sig.name in (vault.directory / name).read_text()
    assert "interrupted by " + sig.name in stdout
    if vault.backend is not None:  # the first parent's children really exist
        configmaps = vault.backend.admin.discover("v1", "configmaps")
        vault.backend.admin.get(configmaps, "a-first-settings", namespace=vault.namespace)
        with pytest.raises(NotFound):
            vault.backend.admin.get(configmaps, "b-slow-settings", namespace=vault.namespace)


def test_the_budget_holds_while_a_hook_hangs(vault: Vault) -> None:
    vault.parent("stuck", "sleep", seconds=60)
    vault.write(timeout="60s")
    started = time.monotonic()
    done = vault.run("--max-duration", "3s", *report_args(vault.directory))
    elapsed = time.monotonic() - started
    assert elapsed < 3 + 8, f"a 3 s run took {elapsed:.1f} s"  # process start-up included
    assert done.returncode == 1, done.stderr
    report = json.loads((vault.directory / "report.json").read_text())
    assert report["interrupted"] == "budget"
    assert "time budget" in report["stopped"]
    assert "Traceback" not in done.stdout + done.stderr


def test_output_paths_are_checked_before_the_first_write(vault: Vault) -> None:
    vault.parent("untouched", "ok")
    vault.write()
    blocker = vault.directory / "not-a-directory"
    blocker.write_text("a file")
    mark = vault.backend.mark() if vault.backend else None
    for bad in (f"json:{blocker}/report.json", str(vault.directory)):
        done = vault.run("--report-file", bad)
        assert done.returncode == 1
        assert "--report-file" in done.stderr and "Traceback" not in done.stderr
        assert not (vault.markers / "untouched").exists(), "the hook ran before the check"
    if vault.backend is not None and mark is not None:
        assert vault.backend.mutations_since(mark) == {}


# -- class 9: inputs that cannot be read as given change nothing -------------------------------


def test_a_missing_controllers_path_writes_nothing(vault: Vault) -> None:
    vault.parent("would-sync", "ok")
    vault.write()
    mark = vault.backend.mark() if vault.backend else None
    missing = vault.directory / "no-such-controllers.yaml"
    done = vault.run("--controllers", str(missing), *report_args(vault.directory))
    assert done.returncode == 1
    assert str(missing) in done.stderr
    assert not (vault.markers / "would-sync").exists()
    report = json.loads((vault.directory / "report.json").read_text())
    assert "nothing was changed" in report["stopped"]
    if vault.backend is not None and mark is not None:
        assert vault.backend.mutations_since(mark) == {}


def test_invalid_and_stray_objects_in_controller_files(vault: Vault) -> None:
    vault.parent("p", "ok")
    vault.write()
    stray = vault.directory / "more-controllers.yaml"
    stray.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: not-a-controller}\n---\n"
        "apiVersion: metacontroller.k8s.io/v1alpha1\nkind: MapController\n"
        "metadata: {name: decorate-me}\nspec: {}\n"
    )
    done = vault.run("--controllers", str(stray), "--report-format", "json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert any("MapController decorate-me" in e for e in report["loadErrors"])
    assert any("ConfigMap not-a-controller" in w for w in report["warnings"])
    assert not (vault.markers / "p").exists()
    # Without the invalid controller, the stray object is only a warning and the run goes on.
    stray.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: not-a-controller}\n")
    done = vault.run("--controllers", str(stray), "--report-format", "json")
    assert done.returncode == 0, done.stderr
    assert any("not-a-controller" in w for w in json.loads(done.stdout)["warnings"])


def test_two_controllers_selecting_the_same_parents(vault: Vault) -> None:
    vault.parent("shared", "ok")
    vault.write()
    twin = vault.controller(name="twin")
    second = vault.directory / "twin.yaml"
    second.write_text(yaml.safe_dump(twin))
    done = vault.run("--controllers", str(second), "--report-format", "json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    problem = next(e for e in report["errors"] if "both sync every vaults" in e)
    assert twin["metadata"]["name"] in problem and vault.controller()["metadata"]["name"] in problem
    assert not (vault.markers / "shared").exists()
    # With label selectors, only the parents both select are refused.
    first = vault.controller()
    first["spec"]["parentResource"]["labelSelector"] = {"matchLabels": {"team": "a"}}
    twin["spec"]["parentResource"]["labelSelector"] = {
        "matchExpressions": [{"key": "team", "operator": "Exists"}]
    }
    vault.controller_path.write_text(yaml.safe_dump(first))
    second.write_text(yaml.safe_dump(twin))
    if vault.backend is None:
        parents = vault.inputs / "parents.yaml"
        docs = list(yaml.safe_load_all(parents.read_text()))
        docs[1]["metadata"]["labels"] = {"team": "a"}
        other = vault.parent("only-twin", "ok")
        other["metadata"]["labels"] = {"team": "b"}
        docs.append(other)
        parents.write_text(yaml.safe_dump_all(docs))
    else:
        vaults = vault.backend.admin.discover(f"{vault.group}/v1", "vaults")
        shared = vault.backend.admin.get(vaults, "shared", namespace=vault.namespace)
        shared["metadata"]["labels"] = {"team": "a"}
        vault.backend.admin.update(vaults, shared)
        other = vault.parent("only-twin", "ok")
        other["metadata"]["labels"] = {"team": "b"}
        vault.backend.admin.create(vaults, other)
    done = vault.run("--controllers", str(second), "--report-format", "json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    contested = [e for e in report["errors"] if "selected by more than one" in e]
    assert len(contested) == 2 and all("shared" in e for e in contested), report["errors"]
    assert not (vault.markers / "shared").exists()
    assert (vault.markers / "only-twin").exists()
