"""Jobs and CronJobs.

Defaults: Job `backoffLimit: 6`, `completions`/`parallelism: 1`, a generated selector and
`controller-uid`/`job-name` labels set once the Job has its uid (1.27+: also the
`batch.kubernetes.io/` ones), kept by an update that leaves them out; 1.21+: `completionMode:
NonIndexed`, `suspend: false`; 1.29+: `podReplacementPolicy`. CronJob `concurrencyPolicy:
Allow`, `suspend: false`, `successfulJobsHistoryLimit: 3`, `failedJobsHistoryLimit: 1`.

Validation: pod templates with `restartPolicy` OnFailure or Never; on update, a Job's template,
selector and completions immutable; a status write's counts non-negative.
"""

from __future__ import annotations

from reconcile.cluster.memory.strategies.kinds.base import (
    Context,
    Errors,
    KindRules,
    as_dict,
    child,
    immutable,
    spec_of,
)
from reconcile.cluster.memory.strategies.kinds.pods import (
    ANY_RESTART,
    default_template,
    pod_spec_errors,
    template_metadata,
)
from reconcile.cluster.memory.validation import fielderrors
from reconcile.objects.meta import Obj


def _job(obj: Obj, context: Context) -> None:
    spec = child(obj, "spec")
    if "completions" not in spec and "parallelism" not in spec:
        spec["completions"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 6)
    if context.minor >= 21:
        spec.setdefault("completionMode", "NonIndexed")
        spec.setdefault("suspend", False)
    if context.minor >= 29:
        spec.setdefault("manualSelector", False)
        spec.setdefault(
            "podReplacementPolicy",
            "Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed",
        )
    default_template(spec, context.minor)
    labels_from_template(obj)


def _cronjob(obj: Obj, context: Context) -> None:
    spec = child(obj, "spec")
    spec.setdefault("concurrencyPolicy", "Allow")
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)
    job_template = child(spec, "jobTemplate")
    template_metadata(job_template, context.minor)
    default_template(child(job_template, "spec"), context.minor)


def labels_from_template(obj: Obj) -> None:
    """A Job without labels takes its template's."""
    meta = child(obj, "metadata")
    template = as_dict(spec_of(obj).get("template"))
    labels = as_dict(as_dict(template.get("metadata")).get("labels"))
    if not meta.get("labels") and labels:
        meta["labels"] = dict(labels)


def _assign_selector(job: Obj, minor: int) -> None:
    """The Job strategy's generated selector: the Job's uid, labelled on its pod template."""
    spec = child(job, "spec")
    if spec.get("manualSelector"):
        return
    meta = as_dict(job.get("metadata"))
    uid, name = str(meta.get("uid", "")), str(meta.get("name", ""))
    labels = {"controller-uid": uid, "job-name": name}
    selector = {"controller-uid": uid}
    if minor >= 27:
        labels = {
            "batch.kubernetes.io/controller-uid": uid,
            "batch.kubernetes.io/job-name": name,
            **labels,
        }
        selector = {"batch.kubernetes.io/controller-uid": uid}
    spec.setdefault("selector", {"matchLabels": selector})
    template_labels = child(child(child(spec, "template"), "metadata"), "labels")
    for key, value in labels.items():
        template_labels.setdefault(key, value)
    job_meta = child(job, "metadata")
    if job_meta.get("labels") == {}:
        del job_meta["labels"]
    labels_from_template(job)


def _keep_selector(stored: Obj, job: Obj) -> None:
    """An update that leaves out the generated selector keeps it."""
    spec = child(job, "spec")
    old = spec_of(stored).get("selector")
    if "selector" not in spec and old is not None and not spec.get("manualSelector"):
        spec["selector"] = old


def job_spec_errors(spec: Obj, path: str) -> Errors:
    template = as_dict(spec.get("template"))
    pod_spec = as_dict(template.get("spec"))
    errors = pod_spec_errors(pod_spec, f"{path}.template.spec", ANY_RESTART)
    policy = pod_spec.get("restartPolicy")
    if policy not in ("OnFailure", "Never"):
        errors.append(
            fielderrors.required(
                f"{path}.template.spec.restartPolicy", 'valid values: "OnFailure", "Never"'
            )
            if policy is None or policy == "Always"
            else fielderrors.unsupported(
                f"{path}.template.spec.restartPolicy", policy, ["OnFailure", "Never"]
            )
        )
    return errors


def _job_update_errors(old: Obj, new: Obj, _: int) -> Errors:
    errors: Errors = []
    for name in ("selector", "template", "completions"):
        errors += immutable(spec_of(old).get(name), spec_of(new).get(name), f"spec.{name}")
    return errors


def _job_status_errors(_: Obj, job: Obj, __: int) -> Errors:
    status = as_dict(job.get("status"))
    return [
        fielderrors.invalid_value(
            f"status.{name}", status[name], "must be greater than or equal to 0"
        )
        for name in ("active", "succeeded", "failed", "ready", "terminating")
        if isinstance(status.get(name), int) and status[name] < 0
    ]


JOBS = KindRules(
    default=_job,
    keep=_keep_selector,
    errors=lambda job: job_spec_errors(spec_of(job), "spec"),
    update_errors=_job_update_errors,
    created=_assign_selector,
    status_errors=_job_status_errors,
)
CRONJOBS = KindRules(
    default=_cronjob,
    errors=lambda cronjob: job_spec_errors(
        as_dict(as_dict(spec_of(cronjob).get("jobTemplate")).get("spec")), "spec.jobTemplate.spec"
    ),
)
