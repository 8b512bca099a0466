"""Reports of a run (reconcile.report): JSON structure, text, Markdown, redaction."""

from __future__ import annotations

import base64
import copy
import json
import re
from typing import Any

import jsonpatch
import pytest

from reconcile.engine.actions import Action, ActionKind
from reconcile.objects.meta import Obj
from reconcile.objects.resource import ResourceInfo
from reconcile.report import (
    MARKDOWN_LIMIT,
    REPORT_SCHEMA_VERSION,
    ReportFormat,
    render,
    report_dict,
)
from reconcile.report.diff import strip_noise
from reconcile.report.markdown import render_markdown
from reconcile.results import (
    ActionResult,
    ControllerResult,
    HookCall,
    Outcome,
    ParentResult,
    PassResult,
    RunResult,
)

LAST_APPLIED = "metacontroller.k8s.io/last-applied-configuration"
HOOK = "http://hooks.default.svc:8080/sync"

# Distinctive secret values: neither they nor their base64 may appear in any report.
SECRET_VALUE = "hunter2-Zq9-very-secret"
OLD_SECRET_VALUE = "old-pw-Kx7-also-secret"
STRING_DATA_VALUE = "plain-stringdata-Wv3-secret"


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


SECRET_NEEDLES = [
    SECRET_VALUE,
    OLD_SECRET_VALUE,
    STRING_DATA_VALUE,
    b64(SECRET_VALUE),
    b64(OLD_SECRET_VALUE),
    b64(STRING_DATA_VALUE),
]

CONFIGMAPS = ResourceInfo("", "v1", "configmaps", "ConfigMap", True)
PODS = ResourceInfo("", "v1", "pods", "Pod", True)
SERVICES = ResourceInfo("", "v1", "services", "Service", True)
SECRETS = ResourceInfo("", "v1", "secrets", "Secret", True)
WEBAPPS = ResourceInfo("example.com", "v1", "webapps", "WebApp", True, has_status=True)

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def server_meta(name: str, **extra: Any) -> dict[str, Any]:
    """Metadata as the API server returns it, noise included."""
    return {
        "name": name,
        "namespace": "default",
        "uid": f"uid-{name}",
        "resourceVersion": "1001",
        "generation": 1,
        "creationTimestamp": "2024-05-01T10:00:00Z",
        "managedFields": [{"manager": "reconcile", "operation": "Update"}],
        **extra,
    }


def configmap_update() -> Action:
    before: Obj = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": server_meta(
            "frontend-config",
            labels={"app": "frontend"},
            annotations={LAST_APPLIED: '{"data":{"replicas":"2"}}'},
        ),
        "data": {"replicas": "2", "mode": "fast"},
    }
    after = copy.deepcopy(before)
    after["data"]["replicas"] = "3"
    after["metadata"]["annotations"][LAST_APPLIED] = '{"data":{"replicas":"3"}}'
    after["metadata"]["resourceVersion"] = "1002"  # noise
    after["metadata"]["managedFields"] = []  # noise
    return Action(ActionKind.UPDATE, CONFIGMAPS, before, after, "differs from desired")


def pod_create() -> Action:
    after: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "frontend-0",
            "namespace": "default",
            "labels": {"app": "frontend"},
            "annotations": {LAST_APPLIED: '{"kind":"Pod"}'},
        },
        "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]},
    }
    return Action(ActionKind.CREATE, PODS, None, after, "desired, missing")


def service_delete() -> Action:
    before: Obj = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": server_meta("frontend-old"),
        "spec": {"ports": [{"port": 80}]},
    }
    return Action(ActionKind.DELETE, SERVICES, before, None, "not in the hook's desired children")


def status_write() -> Action:
    before: Obj = {
        "apiVersion": "example.com/v1",
        "kind": "WebApp",
        "metadata": server_meta("frontend"),
        "spec": {"replicas": 3},
        "status": {"readyReplicas": 1, "observedGeneration": 0},
    }
    after = copy.deepcopy(before)
    after["status"] = {"readyReplicas": 2, "observedGeneration": 1}
    return Action(ActionKind.STATUS, WEBAPPS, before, after, "status from the hook")


def secret_update() -> Action:
    before: Obj = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": server_meta(
            "frontend-creds",
            annotations={LAST_APPLIED: json.dumps({"data": {"password": b64(OLD_SECRET_VALUE)}})},
        ),
        "type": "Opaque",
        "data": {"password": b64(OLD_SECRET_VALUE), "username": b64("admin")},
    }
    after = copy.deepcopy(before)
    after["data"]["password"] = b64(SECRET_VALUE)
    after["stringData"] = {"extra": STRING_DATA_VALUE}
    after["metadata"]["annotations"][LAST_APPLIED] = json.dumps(
        {"data": {"password": b64(SECRET_VALUE)}, "stringData": {"extra": STRING_DATA_VALUE}}
    )
    return Action(ActionKind.UPDATE, SECRETS, before, after, "differs from desired")


def secret_create() -> Action:
    after: Obj = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "new-creds", "namespace": "default"},
        "data": {"token": b64(SECRET_VALUE)},
    }
    return Action(ActionKind.CREATE, SECRETS, None, after, "desired, missing")


def secret_delete() -> Action:
    before: Obj = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": server_meta("gone-creds"),
        "data": {"token": b64(OLD_SECRET_VALUE)},
    }
    return Action(ActionKind.DELETE, SECRETS, before, None, "not in the hook's desired children")


def sample(*, dry_run: bool = True) -> RunResult:
    """A dry run (or its applied twin) with every kind of content a report shows."""
    applied = not dry_run
    frontend = ParentResult(
        "webapps",
        "WebApp default/frontend",
        "sync",
        hooks=[HookCall("sync", HOOK, Outcome.OK, 0.0123)],
        actions=[
            ActionResult(configmap_update(), applied),
            ActionResult(pod_create(), applied),
            ActionResult(service_delete(), applied),
            ActionResult(secret_update(), applied),
            ActionResult(status_write(), applied),
        ],
        waits=["Pod default/frontend-1 is being deleted before it is created"],
        resync_after=600.0,
    )
    backend = ParentResult(
        "webapps",
        "WebApp default/backend",
        "sync",
        hooks=[HookCall("sync", HOOK, Outcome.FAILED, 2.5, "connection refused")],
        errors=["WebApp default/backend: sync hook: connection refused"],
    )
    quiet = ParentResult(
        "webapps",
        "WebApp default/quiet",
        "sync",
        hooks=[HookCall("sync", HOOK, Outcome.CACHED, 0.0)],
    )
    broken = ControllerResult(
        "broken", errors=["CompositeController broken: no resource widgets.example.com"]
    )
    return RunResult(
        dry_run=dry_run,
        passes=[PassResult(1, [ControllerResult("webapps", [frontend, backend, quiet]), broken])],
        load_errors=["controllers/bad.yaml: spec.parentResource: required"],
        due_next_run=["WebApp default/frontend: resyncAfterSeconds 600"],
        converged=False,
        duration=1.5,
        requests={"get": 1, "list": 6},
        hook_calls=3,
    )


def two_pass_run() -> RunResult:
    """A real run: pass 1 applies two actions (one fails), pass 2 finds everything in sync."""
    first = ParentResult(
        "webapps",
        "WebApp default/frontend",
        "sync",
        hooks=[HookCall("sync", HOOK, Outcome.OK, 0.02)],
        actions=[
            ActionResult(pod_create(), applied=True),
            ActionResult(configmap_update(), applied=False, error="Conflict: the object changed"),
        ],
        errors=["WebApp default/frontend: update ConfigMap default/frontend-config failed"],
    )
    second = ParentResult(
        "webapps",
        "WebApp default/frontend",
        "sync",
        hooks=[HookCall("sync", HOOK, Outcome.CACHED, 0.0)],
    )
    return RunResult(
        dry_run=False,
        passes=[
            PassResult(1, [ControllerResult("webapps", [first])]),
            PassResult(2, [ControllerResult("webapps", [second])]),
        ],
        converged=True,
        duration=3.25,
        requests={"create": 1, "list": 4, "update": 1},
        hook_calls=2,
    )


def empty_run() -> RunResult:
    quiet = ParentResult(
        "webapps", "WebApp default/a", "sync", hooks=[HookCall("sync", HOOK, Outcome.OK, 0.001)]
    )
    return RunResult(
        dry_run=True,
        passes=[PassResult(1, [ControllerResult("webapps", [quiet])])],
        converged=True,
        duration=0.2,
        requests={"list": 2},
        hook_calls=1,
    )


def frontend_actions(report: dict[str, Any]) -> list[dict[str, Any]]:
    actions: list[dict[str, Any]] = report["passes"][0]["controllers"][0]["parents"][0]["actions"]
    return actions


# -- JSON ----------------------------------------------------------------------------------


def test_json_top_level() -> None:
    report = report_dict(sample())
    assert list(report) == [
        "schemaVersion",
        "outcome",
        "headline",
        "dryRun",
        "dryRunMode",
        "source",
        "shard",
        "applyStrategy",
        "converged",
        "durationSeconds",
        "hookCalls",
        "requests",
        "interrupted",
        "stopped",
        "skipped",
        "loadErrors",
        "warnings",
        "dueNextRun",
        "errors",
        "notConverging",
        "summary",
        "passes",
    ]
    assert report["schemaVersion"] == REPORT_SCHEMA_VERSION == "reconcile.report/v2"
    assert report["outcome"] == "errors"
    assert report["headline"] == "3 errors, 5 changes pending"
    assert report["dryRun"] is True
    assert report["dryRunMode"] == "client"
    assert report["converged"] is False
    assert report["durationSeconds"] == 1.5
    assert report["hookCalls"] == 3
    assert report["requests"] == {"get": 1, "list": 6}
    assert report["loadErrors"] == ["controllers/bad.yaml: spec.parentResource: required"]
    assert report["dueNextRun"] == ["WebApp default/frontend: resyncAfterSeconds 600"]
    assert report["errors"] == [
        "controllers/bad.yaml: spec.parentResource: required",
        "CompositeController broken: no resource widgets.example.com",
        "WebApp default/backend: sync hook: connection refused",
    ]


def test_json_summary() -> None:
    summary = report_dict(sample())["summary"]
    assert {k: v for k, v in summary.items() if k not in ("actions", "hooks")} == {
        "passes": 1,
        "parents": 3,
        "applied": 0,
        "pending": 5,
        "serverValidated": 0,
        "failed": 0,
        "waits": 1,
        "errors": 3,
        "requests": 7,
    }
    assert list(summary["actions"]) == [k.value for k in ActionKind]
    assert summary["actions"]["update"] == {"applied": 0, "pending": 2, "failed": 0}
    assert summary["actions"]["create"] == {"applied": 0, "pending": 1, "failed": 0}
    assert summary["actions"]["adopt"] == {"applied": 0, "pending": 0, "failed": 0}
    assert summary["hooks"] == {"ok": 1, "cached": 1, "failed": 1, "total": 3}


def test_json_controllers_parents_hooks_in_result_order() -> None:
    report = report_dict(sample())
    controllers = report["passes"][0]["controllers"]
    assert report["passes"][0]["number"] == 1
    assert [c["name"] for c in controllers] == ["webapps", "broken"]
    assert controllers[1] == {
        "name": "broken",
        "kind": None,
        "resyncPeriodSeconds": None,
        "errors": ["CompositeController broken: no resource widgets.example.com"],
        "parents": [],
    }
    parents = controllers[0]["parents"]
    assert [p["parent"] for p in parents] == [
        "WebApp default/frontend",
        "WebApp default/backend",
        "WebApp default/quiet",
    ]
    frontend = parents[0]
    assert (frontend["kind"], frontend["namespace"], frontend["name"]) == (
        "WebApp",
        "default",
        "frontend",
    )
    assert frontend["mode"] == "sync"
    assert frontend["resyncAfterSeconds"] == 600.0
    assert frontend["waits"] == ["Pod default/frontend-1 is being deleted before it is created"]
    assert frontend["hooks"] == [
        {"hook": "sync", "target": HOOK, "outcome": "ok", "durationMs": 12.3, "error": None}
    ]
    assert [a["action"] for a in frontend["actions"]] == [
        "update",
        "create",
        "delete",
        "update",
        "status",
    ]
    backend = parents[1]
    assert backend["hooks"] == [
        {
            "hook": "sync",
            "target": HOOK,
            "outcome": "failed",
            "durationMs": 2500.0,
            "error": "connection refused",
        }
    ]
    assert backend["errors"] == ["WebApp default/backend: sync hook: connection refused"]
    assert parents[2]["hooks"][0]["outcome"] == "cached"


def test_json_configmap_update_ignores_noise() -> None:
    update = frontend_actions(report_dict(sample()))[0]
    assert update == {
        "action": "update",
        "object": {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "namespace": "default",
            "name": "frontend-config",
        },
        "resource": "configmaps",
        "reason": "differs from desired",
        "for": None,
        "state": "pending",
        "serverValidated": False,
        "notValidated": None,
        "error": None,
        # resourceVersion, managedFields and the last-applied annotation changed too: noise.
        "diff": [{"path": "data.replicas", "op": "change", "before": "2", "after": "3"}],
        "patch": [{"op": "replace", "path": "/data/replicas", "value": "3"}],
    }


def test_json_create_lists_the_whole_object_without_noise() -> None:
    create = frontend_actions(report_dict(sample()))[1]
    assert create["object"] == {
        "apiVersion": "v1",
        "kind": "Pod",
        "namespace": "default",
        "name": "frontend-0",
    }
    assert [(d["path"], d["op"], d["before"]) for d in create["diff"]] == [
        ("apiVersion", "add", None),
        ("kind", "add", None),
        ("metadata", "add", None),
        ("spec", "add", None),
    ]
    expected = strip_noise(pod_create().after or {})
    del expected["metadata"]["annotations"]  # it held only the last-applied one
    assert create["diff"][2]["after"] == expected["metadata"]
    assert all(op["op"] == "add" for op in create["patch"])
    assert jsonpatch.apply_patch({}, create["patch"]) == expected


def test_json_delete_status_and_secret() -> None:
    delete, secret, status = (frontend_actions(report_dict(sample()))[i] for i in (2, 3, 4))
    assert delete["action"] == "delete"
    assert delete["object"]["name"] == "frontend-old"
    assert (delete["diff"], delete["patch"]) == ([], [])

    assert status["object"]["kind"] == "WebApp"
    assert status["object"]["apiVersion"] == "example.com/v1"
    assert status["resource"] == "webapps.example.com"
    assert status["diff"] == [
        {"path": "status.readyReplicas", "op": "change", "before": 1, "after": 2},
        {"path": "status.observedGeneration", "op": "change", "before": 0, "after": 1},
    ]
    assert status["patch"] == [
        {"op": "replace", "path": "/status/readyReplicas", "value": 2},
        {"op": "replace", "path": "/status/observedGeneration", "value": 1},
    ]

    assert secret["diff"] == [
        {
            "path": "data.password",
            "op": "change",
            "before": "<redacted>",
            "after": "<redacted (changed)>",
        },
        {
            "path": "stringData",
            "op": "add",
            "before": None,
            "after": {"extra": "<redacted (added)>"},
        },
    ]
    assert sorted(secret["patch"], key=lambda op: str(op["path"])) == [
        {"op": "replace", "path": "/data/password", "value": "<redacted (changed)>"},
        {"op": "add", "path": "/stringData", "value": {"extra": "<redacted (added)>"}},
    ]


def test_json_render_is_report_dict_and_deterministic() -> None:
    text = render(sample(), ReportFormat.JSON)
    assert json.loads(text) == report_dict(sample())
    assert text == render(sample(), ReportFormat.JSON)
    assert text.endswith("}\n")


def test_json_real_run_groups_applied_actions_by_pass() -> None:
    report = report_dict(two_pass_run())
    assert [p["number"] for p in report["passes"]] == [1, 2]
    first = report["passes"][0]["controllers"][0]["parents"][0]
    assert [(a["action"], a["state"], a["error"]) for a in first["actions"]] == [
        ("create", "applied", None),
        ("update", "failed", "Conflict: the object changed"),
    ]
    assert report["passes"][1]["controllers"][0]["parents"][0]["actions"] == []
    summary = report["summary"]
    assert (summary["applied"], summary["pending"], summary["failed"]) == (1, 0, 1)
    assert summary["parents"] == 1
    assert report["outcome"] == "applied"  # pass 1's errors are not the run's (last pass) errors
    assert report["headline"] == "1 change applied"


# -- text ----------------------------------------------------------------------------------


def test_text_folds_parents_in_sync_and_tells_each_error_once() -> None:
    lines = render(sample(), ReportFormat.TEXT).splitlines()
    assert "  = 1 parent in sync" in lines
    assert not [line for line in lines if "hook sync ok" in line]
    assert f"      hook sync failed 2500 ms  {HOOK}" in lines  # its error: the parent's, below
    assert "      ! error: WebApp default/backend: sync hook: connection refused" in lines


def test_text_lists_parents_actions_and_diffs() -> None:
    text = render(sample(), ReportFormat.TEXT, verbose=True)
    lines = text.splitlines()
    assert lines[0] == "reconcile dry run: 3 errors, 5 changes pending"
    assert "Controller webapps" in lines
    assert "  * WebApp default/frontend [sync]: 5 pending, 1 wait" in lines
    assert "  ! WebApp default/backend [sync]: 1 error" in lines
    assert "  = WebApp default/quiet [sync]: in sync" in lines
    assert f"      hook sync ok 12.3 ms  {HOOK}" in lines
    assert f"      hook sync failed 2500 ms  {HOOK}  error: connection refused" in lines
    assert (
        "      ~ update ConfigMap default/frontend-config (v1) [pending] differs from desired"
        in lines
    )
    assert "          - data.replicas: '2'" in lines
    assert "          + data.replicas: '3'" in lines
    assert "      + create Pod default/frontend-0 (v1) [pending] desired, missing" in lines
    assert "          +   name: frontend-0" in lines
    assert lines[lines.index("          +   containers:") + 1 :][:2] == [
        "          +   - name: web",
        "          +     image: nginx:1.25",
    ]
    assert (
        "      - delete Service default/frontend-old (v1) [pending] "
        "not in the hook's desired children" in lines
    )
    assert "          - deleted" in lines
    assert (
        "      ~ status WebApp default/frontend (example.com/v1) [pending] status from the hook"
        in lines
    )
    assert "          + status.readyReplicas: 2" in lines
    assert "          - data.password: <redacted>" in lines
    assert "          + data.password: <redacted (changed)>" in lines
    assert "      ! waits: Pod default/frontend-1 is being deleted before it is created" in lines
    assert "      ! error: WebApp default/backend: sync hook: connection refused" in lines
    assert (
        "  ! controller error: CompositeController broken: no resource widgets.example.com" in lines
    )
    assert "resourceVersion" not in text
    assert "managedFields" not in text
    assert LAST_APPLIED not in text


def test_text_summary_table() -> None:
    text = render(sample(), ReportFormat.TEXT)
    summary = text[text.index("\nSummary\n") :]
    expected = {
        "Mode": "dry run",
        "Passes": "1",
        "Parents synced": "3",
        "Applied": "0",
        "Pending": "5",
        "Waits": "1",
        "Hook calls": "3 (ok 1, cached 1, failed 1)",
        "API requests": "7 (get 1, list 6)",
        "Errors": "3",
        "Wall time": "1.50 s",
        "Converged": "no",
    }
    for name, value in expected.items():
        assert re.search(rf"^ {re.escape(name)} +{re.escape(value)}$", summary, re.M), name
    assert re.search(r"^ Action +Applied +Pending +Failed$", summary, re.M)
    assert re.search(r"^ update +0 +2 +0$", summary, re.M)
    assert re.search(r"^ delete +0 +1 +0$", summary, re.M)
    assert "  - WebApp default/frontend: resyncAfterSeconds 600" in summary
    assert "  ! controllers/bad.yaml: spec.parentResource: required" in summary


def test_text_real_run_groups_by_pass() -> None:
    text = render(two_pass_run(), ReportFormat.TEXT)
    assert text.splitlines()[0] == "reconcile run: 1 change applied"
    assert text.index("Pass 1") < text.index("[applied]") < text.index("Pass 2")
    assert "      ! failed: Conflict: the object changed" in text
    assert re.search(r"^ Converged +yes$", text, re.M)


def test_text_without_color_has_no_escapes_and_with_color_has_them() -> None:
    plain = render(sample(), ReportFormat.TEXT, color=False)
    colored = render(sample(), ReportFormat.TEXT, color=True)
    assert "\x1b" not in plain
    assert "\x1b[" in colored
    assert "\x1b[32m+ data.replicas: '3'" in colored  # additions green
    # Same content, only the escapes differ.
    stripped = "\n".join(line.rstrip() for line in ANSI.sub("", colored).splitlines())
    assert stripped + "\n" == plain


@pytest.mark.parametrize("variable", ["NO_COLOR", "FORCE_COLOR", "TERM", "COLUMNS"])
def test_text_color_ignores_environment(variable: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(variable, "1" if variable != "TERM" else "dumb")
    assert "\x1b" not in render(sample(), ReportFormat.TEXT, color=False)
    assert "\x1b[" in render(sample(), ReportFormat.TEXT, color=True)


# -- Markdown ------------------------------------------------------------------------------


def test_markdown_heading_summary_and_details() -> None:
    md = render(sample(), ReportFormat.MARKDOWN)
    assert md.startswith("### reconcile: 3 errors, 5 changes pending\n")
    assert "| Changes pending | 5 (delete 1, create 1, update 2, status 1) |" in md
    assert "| Hook calls | 3 (ok 1, cached 1, failed 1) |" in md
    assert "| API requests | 7 (get 1, list 6) |" in md
    assert "| Converged | no |" in md
    assert (
        "<details><summary><b>WebApp default/frontend</b> [sync]: 5 pending, 1 wait</summary>" in md
    )
    assert "<details><summary><b>WebApp default/backend</b> [sync]: 1 error</summary>" in md
    assert "<details><summary>1 parent in sync</summary>" in md
    assert md.count("<details>") == md.count("</details>") == 3
    assert "```diff\n- data.replicas: '2'\n+ data.replicas: '3'\n```" in md
    assert "```diff\n- deleted\n```" in md
    # a URL is not a link of the comment's (a zero-width space after its scheme)
    defused = HOOK.replace("://", ":\u200b//")
    assert f"| sync | failed | 2500 ms | {defused} | connection refused |" in md
    assert "- ⏳ waits: Pod default/frontend-1 is being deleted before it is created" in md
    assert "- controller error: CompositeController broken: no resource widgets.example.com" in md
    assert "**Errors**" in md
    assert "NOTE" not in md


@pytest.mark.parametrize(
    ("result", "heading"),
    [
        (empty_run(), "### reconcile: no changes"),
        (two_pass_run(), "### reconcile: 1 change applied"),
        (sample(dry_run=True), "### reconcile: 3 errors, 5 changes pending"),
    ],
)
def test_markdown_heading(result: RunResult, heading: str) -> None:
    assert render(result, ReportFormat.MARKDOWN).splitlines()[0] == heading


def test_markdown_escapes_free_text() -> None:
    parent = ParentResult(
        "webapps",
        "WebApp default/x",
        "sync",
        hooks=[HookCall("sync", "cmd | tee", Outcome.FAILED, 0.1, "bad <b>|` reply")],
        errors=["line one\nline *two* with ```"],
    )
    result = RunResult(dry_run=True, passes=[PassResult(1, [ControllerResult("c", [parent])])])
    md = render(result, ReportFormat.MARKDOWN)
    assert "| sync | failed | 100 ms | cmd \\| tee | bad &lt;b&gt;\\|\\` reply |" in md
    assert "- ❌ error: line one<br>line \\*two\\* with \\`\\`\\`" in md


def test_markdown_fence_outgrows_backticks_in_content() -> None:
    action = configmap_update()
    assert action.after is not None
    action.after["data"]["replicas"] = "```"
    parent = ParentResult("c", "WebApp default/x", "sync", actions=[ActionResult(action, False)])
    result = RunResult(dry_run=True, passes=[PassResult(1, [ControllerResult("c", [parent])])])
    md = render(result, ReportFormat.MARKDOWN)
    assert "````diff\n- data.replicas: '2'\n+ data.replicas: '```'\n````" in md


def large_run(parents: int) -> RunResult:
    results = []
    for i in range(parents):
        create = pod_create()
        assert create.after is not None
        create.after["metadata"]["name"] = f"frontend-{i}"
        create.after["spec"]["containers"][0]["args"] = [f"--arg-{n}" for n in range(20)]
        results.append(
            ParentResult(
                "webapps",
                f"WebApp default/app-{i}",
                "sync",
                hooks=[HookCall("sync", HOOK, Outcome.OK, 0.01)],
                actions=[ActionResult(create, False), ActionResult(configmap_update(), False)],
            )
        )
    return RunResult(dry_run=True, passes=[PassResult(1, [ControllerResult("webapps", results)])])


def test_markdown_stays_under_the_limit_and_says_what_it_left_out() -> None:
    parents = 4000
    md = render(large_run(parents), ReportFormat.MARKDOWN)
    assert len(md.encode()) <= MARKDOWN_LIMIT
    kept = md.count("<details><summary>")
    assert 0 < kept < parents
    assert md.count("</details>") == kept
    left = parents - kept
    note = md.splitlines()[-1]
    assert note == (
        f"> This report was cut to stay under {MARKDOWN_LIMIT} bytes: the details of "
        f"{left} parents ({2 * left} actions) are left out. The JSON report has everything."
    )
    # The head (outcome and totals) is always complete.
    assert md.startswith(f"### reconcile: {2 * parents} changes pending\n")
    assert f"| Parents synced | {parents} |" in md
    # What is kept is whole: every fence closed, the last parent block complete.
    assert md.count("```diff") == 2 * kept
    assert md.rstrip().split("\n\n")[-2].endswith("</details>")


def test_markdown_truncation_never_leaves_an_empty_heading() -> None:
    result = large_run(3)
    result.passes.append(PassResult(2, large_run(3).passes[0].controllers))
    full = render_markdown(result).encode()
    headings = b"#### Pass 2\n\n**Controller webapps**\n"
    assert headings in full
    # Room for pass 2's headings (and the note), not for its first parent.
    limit = full.index(headings) + len(headings) + 512 + 10
    md = render_markdown(result, limit=limit)
    assert "#### Pass 1" in md
    assert "#### Pass 2" not in md
    assert "the details of 3 parents (6 actions) are left out" in md


# -- redaction across formats --------------------------------------------------------------


def secret_run(*, dry_run: bool) -> RunResult:
    parent = ParentResult(
        "webapps",
        "WebApp default/frontend",
        "sync",
        hooks=[HookCall("sync", HOOK, Outcome.OK, 0.01)],
        actions=[
            ActionResult(secret_update(), not dry_run),
            ActionResult(secret_create(), not dry_run),
            ActionResult(secret_delete(), not dry_run),
        ],
    )
    return RunResult(dry_run=dry_run, passes=[PassResult(1, [ControllerResult("c", [parent])])])


@pytest.mark.parametrize("dry_run", [True, False])
def test_no_secret_value_in_any_format(dry_run: bool) -> None:
    result = secret_run(dry_run=dry_run)
    outputs = {
        "report_dict": json.dumps(report_dict(result)),
        "text": render(result, ReportFormat.TEXT),
        "text-color": render(result, ReportFormat.TEXT, color=True),
        "json": render(result, ReportFormat.JSON),
        "markdown": render(result, ReportFormat.MARKDOWN),
    }
    for name, output in outputs.items():
        for needle in SECRET_NEEDLES:
            assert needle not in output, f"{name} shows a secret value"
        assert "<redacted" in output, name
    # The keys stay visible, and which value changed.
    assert "+ data.password: <redacted (changed)>" in outputs["text"]
    assert "+   token: <redacted>" in outputs["text"]  # the created Secret
    assert "password" in outputs["json"]
    # The inputs were not touched.
    assert b64(SECRET_VALUE) in json.dumps(result.passes[0].parents()[0].actions[0].action.after)


# -- edges ---------------------------------------------------------------------------------


def test_a_run_without_passes_still_reports() -> None:
    result = RunResult(dry_run=False, load_errors=["controllers/x.yaml: not YAML"])
    assert report_dict(result)["passes"] == []
    assert report_dict(result)["outcome"] == "errors"
    assert render(result, ReportFormat.TEXT).startswith("reconcile run: 1 error\n")
    md = render(result, ReportFormat.MARKDOWN)
    assert md.startswith("### reconcile: 1 error\n")
    assert "- controllers/x.yaml: not YAML" in md


def test_finalizer_and_ownership_actions_use_the_change_symbol() -> None:
    parent_obj = status_write().before
    assert parent_obj is not None
    with_finalizer = copy.deepcopy(parent_obj)
    with_finalizer["metadata"]["finalizers"] = ["metacontroller.io/webapps"]
    child = copy.deepcopy(configmap_update().before)
    assert child is not None
    adopted = copy.deepcopy(child)
    adopted["metadata"]["ownerReferences"] = [
        {"apiVersion": "example.com/v1", "kind": "WebApp", "name": "frontend", "controller": True}
    ]
    actions = [
        Action(ActionKind.ADD_FINALIZER, WEBAPPS, parent_obj, with_finalizer, "finalize hook"),
        Action(ActionKind.ADOPT, CONFIGMAPS, child, adopted, "an orphan matching the selector"),
    ]
    parent = ParentResult(
        "c", "WebApp default/frontend", "sync", actions=[ActionResult(a, True) for a in actions]
    )
    result = RunResult(dry_run=False, passes=[PassResult(1, [ControllerResult("c", [parent])])])
    lines = render(result, ReportFormat.TEXT).splitlines()
    assert (
        "      ~ add-finalizer WebApp default/frontend (example.com/v1) [applied] finalize hook"
        in lines
    )
    assert "          + metadata.finalizers:" in lines
    assert "          +   - metacontroller.io/webapps" in lines
    assert (
        "      ~ adopt ConfigMap default/frontend-config (v1) [applied] "
        "an orphan matching the selector" in lines
    )
    adopt = report_dict(result)["passes"][0]["controllers"][0]["parents"][0]["actions"][1]
    assert adopt["patch"] == [
        {
            "op": "add",
            "path": "/metadata/ownerReferences",
            "value": adopted["metadata"]["ownerReferences"],
        }
    ]


def test_rendering_never_changes_the_result() -> None:
    result = sample()
    snapshot = copy.deepcopy(result)
    for fmt in ReportFormat:
        render(result, fmt, color=True)
    report_dict(result)
    assert result == snapshot


def test_render_accepts_format_names() -> None:
    assert render(empty_run(), "json") == render(empty_run(), ReportFormat.JSON)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="xml"):
        render(empty_run(), "xml")  # type: ignore[arg-type]


def server_dry_run() -> RunResult:
    """--dry-run=server: one action accepted, one the server could not check, one refused."""
    refused = 'Invalid (422): Pod "frontend-0" is invalid: spec.containers: Required value'
    frontend = ParentResult(
        "webapps",
        "WebApp default/frontend",
        "sync",
        actions=[
            ActionResult(configmap_update(), False, validated=True),
            ActionResult(
                status_write(), False, not_validated="the object is created by this dry run only"
            ),
            ActionResult(pod_create(), False, error=refused),
        ],
        errors=[f"WebApp default/frontend: {pod_create().describe()} failed: {refused}"],
    )
    return RunResult(
        dry_run=True,
        server_dry_run=True,
        passes=[PassResult(1, [ControllerResult("webapps", [frontend])])],
    )


def test_a_server_dry_run_marks_what_the_server_checked_in_every_format() -> None:
    result = server_dry_run()
    report = report_dict(result)
    assert (report["dryRun"], report["dryRunMode"]) == (True, "server")
    assert report["summary"]["serverValidated"] == 1
    assert [
        (a["state"], a["serverValidated"], a["notValidated"]) for a in frontend_actions(report)
    ] == [
        ("pending", True, None),
        ("pending", False, "the object is created by this dry run only"),
        ("failed", False, None),
    ]
    text = render(result, ReportFormat.TEXT)
    assert text.startswith("reconcile server dry run: 1 error, 2 changes pending")
    assert "ConfigMap default/frontend-config (v1) [pending, server-validated]" in text
    assert "[pending, not validated: the object is created by this dry run only]" in text
    assert "[failed] desired, missing" in text and "spec.containers: Required value" in text
    assert re.search(r"Mode +server dry run", text) and re.search(r"Server-validated +1 of 2", text)
    markdown = render_markdown(result)
    assert "server dry run · not converged" in markdown
    assert "| Server-validated | 1 of 2 pending |" in markdown
    assert "· pending (server-validated) ·" in markdown
    assert "· pending (not validated: the object is created by this dry run only) ·" in markdown
