"""Parsing hook specs: `webhook` (url, or service + path) or `command` (our local hook)."""

from __future__ import annotations

import os.path
from dataclasses import replace

from reconcile.specs.duration import parse_duration
from reconcile.specs.fields import Fields
from reconcile.specs.hook_env import refusal
from reconcile.specs.hook_url import HookUrlError, parse_hook_url
from reconcile.specs.hooks import (
    CommandProtocol,
    CommandSpec,
    EtagSettings,
    HookSpec,
    HookVersion,
    WebhookSpec,
)
from reconcile.specs.webhook_security import (
    SECURITY_FIELDS,
    EndpointConfig,
    parse_security,
    with_endpoint,
)

DEFAULT_TIMEOUT = 10.0
MAX_PORT = 65535


def url_problem(url: str) -> str | None:
    """Why an http(s) URL cannot be called (None: it can), in words that do not repeat it:
    read as `specs.hook_url` reads it, the one reading the call is made from."""
    try:
        parse_hook_url(url)
    except HookUrlError as exc:
        return str(exc)
    return None


def _timeout(fields: Fields) -> float:
    text = fields.optional_string("timeout")
    if text is None:
        return DEFAULT_TIMEOUT
    try:
        seconds = parse_duration(text)
    except ValueError as exc:
        raise fields.error("timeout", str(exc)) from exc
    if seconds <= 0:
        raise fields.error("timeout", f"must be positive, not {text!r}")
    return seconds


_MODES = ("loose", "strict")


def _webhook(fields: Fields) -> WebhookSpec:
    fields.check_keys(
        {"url", "service", "path", "timeout", "etag", "responseUnMarshallMode", *SECURITY_FIELDS}
    )
    url = fields.optional_string("url")
    if url is None:
        service = fields.optional_child("service")
        if service is None:
            raise fields.error("url", "a webhook needs either url or service (and usually path)")
        service.check_keys({"name", "namespace", "port", "protocol"})
        port = service.number("port", minimum=1)
        if port is not None and port > MAX_PORT:
            raise service.error("port", f"must be at most {MAX_PORT}, not {port:g}")
        protocol = service.string("protocol", "http")
        if protocol not in ("http", "https"):
            raise service.error("protocol", f"must be http or https, not {protocol!r}")
        path = fields.string("path", "")
        if path and not path.startswith("/"):
            path = "/" + path
        url = (
            f"{protocol}://{service.string('name')}.{service.string('namespace')}"
            f":{int(port or 80)}{path}"
        )
        problem = url_problem(url)
        if problem is not None:
            raise fields.error("service", f"makes a URL that cannot be called: {problem}")
    elif not url.startswith(("http://", "https://")):
        raise fields.error("url", f"must be an http:// or https:// URL, not {url!r}")
    else:
        problem = url_problem(url)
        if problem is not None:
            # the URL itself is not repeated: it may carry a password
            raise fields.error("url", f"cannot be called: {problem}")
    etag_fields = fields.optional_child("etag")
    etag = EtagSettings()
    if etag_fields is not None:
        etag_fields.check_keys({"enabled", "cacheTimeoutSeconds", "cacheCleanupSeconds"})
        etag = EtagSettings(
            enabled=etag_fields.boolean("enabled"),
            cache_timeout_seconds=etag_fields.number("cacheTimeoutSeconds", minimum=0)
            or EtagSettings.cache_timeout_seconds,
            cache_cleanup_seconds=etag_fields.number("cacheCleanupSeconds", minimum=0)
            or EtagSettings.cache_cleanup_seconds,
        )
    security = parse_security(fields)
    return WebhookSpec(url=url, timeout=_timeout(fields), etag=etag, security=security)


def _command(fields: Fields, base_dir: str | None) -> CommandSpec:
    fields.check_keys({"argv", "timeout", "workingDir", "env", "inheritEnv", "protocol"})
    argv = fields.strings("argv")
    if not argv or not argv[0]:
        raise fields.error(
            "argv", "is required: the program and its arguments, e.g. [python3, sync.py]"
        )
    working_dir = fields.optional_string("workingDir")
    if base_dir is not None:
        working_dir = os.path.normpath(os.path.join(base_dir, working_dir or "."))
    return CommandSpec(
        argv=tuple(argv),
        timeout=_timeout(fields),
        working_dir=working_dir,
        env=tuple(sorted(fields.string_map("env").items())),
        inherit_env=_inherit_env(fields),
        protocol=_protocol(fields),
    )


def _protocol(fields: Fields) -> CommandProtocol:
    text = fields.string("protocol", CommandProtocol.EXEC.value)
    if text not in {p.value for p in CommandProtocol}:
        raise fields.error("protocol", f"must be exec or lines, not {text!r}")
    return CommandProtocol(text)


def _inherit_env(fields: Fields) -> tuple[str, ...]:
    names = fields.strings("inheritEnv")
    for index, name in enumerate(names):
        problem = refusal(name)
        if problem is not None:
            raise fields.error(f"inheritEnv[{index}]", problem)
    return tuple(dict.fromkeys(names))


def parse_hook(fields: Fields, name: str, owner: str, base_dir: str | None = None) -> HookSpec:
    fields.check_keys({"webhook", "command", "version"})
    webhook, command = fields.optional_child("webhook"), fields.optional_child("command")
    if webhook is not None and command is not None:
        raise fields.error("webhook", "exactly one of webhook and command must be set")
    if webhook is None and command is None:
        # the likely cause when read from a cluster: the API server dropped `command`
        raise fields.error(
            "webhook",
            "exactly one of webhook and command must be set, and neither is (read from a "
            "cluster, a command hook is dropped by a CRD that does not declare it, as "
            "Metacontroller's own do not: install reconcile's CRDs, `kubectl apply -k "
            "manifests/crds`)",
        )
    text = fields.string("version", HookVersion.V1.value)
    if text not in {v.value for v in HookVersion}:
        raise fields.error("version", f"must be v1 or v2, not {text!r}")
    version = HookVersion(text)
    # Metacontroller: loose by default for v1 hooks, strict for v2
    mode = "strict" if version is HookVersion.V2 else "loose"
    if webhook is not None:
        mode = webhook.string("responseUnMarshallMode", mode)
        if mode not in _MODES:
            raise webhook.error("responseUnMarshallMode", f"must be loose or strict, not {mode!r}")
    return HookSpec(
        name=name,
        owner=owner,
        webhook=_webhook(webhook) if webhook is not None else None,
        command=_command(command, base_dir) if command is not None else None,
        version=version,
        strict=mode == "strict",
    )


def optional_hook(
    hooks: Fields,
    name: str,
    owner: str,
    base_dir: str | None = None,
    endpoints: tuple[EndpointConfig, ...] = (),
) -> HookSpec | None:
    """The hook `name` if set; its webhook takes its host's `endpoints` entry unless it sets
    TLS or authentication fields of its own."""
    fields = hooks.optional_child(name)
    if fields is None:
        return None
    hook = parse_hook(fields, name, owner, base_dir)
    if hook.webhook is None or not endpoints:
        return hook
    return replace(hook, webhook=with_endpoint(hook.webhook, endpoints))
