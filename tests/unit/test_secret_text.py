"""Secret values in free text: the structural pass (redact_text) and the registry of values
seen (secret_values), table-driven on the shapes excerpts really take."""

from __future__ import annotations

import base64
import json

import pytest

from reconcile.objects.redact import REDACTED, redact_text
from reconcile.secret_values import SecretValues

VALUE = "pl4nted-S3CRET-marker-7f3a"
B64 = base64.b64encode(VALUE.encode()).decode()


def secret(**fields: object) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, **fields}


RESPONSE = json.dumps({"children": [secret(stringData={"password": VALUE, "user": "admin"})]})


@pytest.mark.parametrize(
    "text",
    [
        RESPONSE,
        RESPONSE + "\ndebug: done",
        RESPONSE[:60],  # cut inside the map
        json.dumps(secret(data={"password": B64})),
        json.dumps({"a": json.dumps(secret(data={"password": B64}))}),  # JSON inside a string
        '{"stringData": {"x": "has } and , inside", "password": "' + VALUE + '"}}',
        'decode base64: illegal base64 data, error found in #10 byte of ...|rd":"'
        + VALUE[:14]
        + '|..., bigger context ...|{"data":{"password":"'
        + VALUE
        + '"}}|...',
    ],
)
def test_structural_redaction_hides_every_value(text: str) -> None:
    out = redact_text(text)
    assert VALUE[:10] not in out and B64[:10] not in out, out
    assert "admin" not in out or "user" not in text


def test_text_without_maps_is_untouched() -> None:
    text = 'Pod "web-0" is invalid: spec.containers[0].image: Required value'
    assert redact_text(text) == text


def test_keys_stay_visible() -> None:
    out = redact_text(json.dumps(secret(data={"password": B64})))
    assert '"password": "' + REDACTED + '"' in out


def test_the_registry_scrubs_every_form_of_a_remembered_value() -> None:
    seen = SecretValues()
    seen.remember({"items": [secret(data={"token": B64}), secret(stringData={"pin": "12"})]})
    for text in (f"password={VALUE}", f"b64 {B64} here", f"yaml:\n  token: {VALUE}\n"):
        assert VALUE not in seen.scrub(text) and B64 not in seen.scrub(text)
    assert seen.scrub("pin 12") == "pin 12", "values under MIN_LENGTH are not scrubbed"


def test_the_registry_ignores_other_kinds() -> None:
    seen = SecretValues()
    seen.remember({"apiVersion": "v1", "kind": "ConfigMap", "data": {"mode": "production"}})
    assert seen.scrub("mode production") == "mode production"


def test_multi_line_values_are_scrubbed_line_by_line() -> None:
    pem = "-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END KEY-----"
    seen = SecretValues()
    seen.remember(secret(data={"tls.key": base64.b64encode(pem.encode()).decode()}))
    assert "MIIEvQIBADAN" not in seen.scrub("stderr tail: MIIEvQIBADANBgkqhkiG9w0BAQEFAASC")


@pytest.mark.parametrize(
    "text",
    [
        b'{"children": [{"apiVersion": "v1", "kind": "Secret", '
        b'"data": {"k": "c2VjcmV0LXZhbHVl"}}]}',
        # the kind spelled with escapes: decoded, it is a Secret all the same
        b'{"children": [{"apiVersion": "v1", "kind": "\\u0053ecret", '
        b'"stringData": {"k": "plain-value-1"}}]}',
    ],
)
def test_a_hook_answer_s_secrets_are_remembered_however_the_kind_is_spelled(text: bytes) -> None:
    from reconcile.hooks.parse import parse_object
    from reconcile.objects.secrets import text_may_hold_secret
    from reconcile.secret_values import SEEN, scrub
    from reconcile.specs.hooks import HookSpec, WebhookSpec

    assert text_may_hold_secret(text)
    hook = HookSpec("sync", "CompositeController c", webhook=WebhookSpec("http://h.example/"))
    child = parse_object(hook, text, "response body")["children"][0]
    value = next(iter((child.get("data") or child["stringData"]).values()))
    try:
        assert scrub(f"the hook said {value}") == f"the hook said {REDACTED}"
    finally:
        SEEN.forget_all()


def test_text_without_a_secret_s_kind_is_not_walked_for_one() -> None:
    from reconcile.objects.secrets import text_may_hold_secret

    assert not text_may_hold_secret(b'{"children": [{"kind": "ConfigMap", "data": {"k": "v"}}]}')
