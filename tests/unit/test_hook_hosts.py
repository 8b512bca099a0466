"""`--allowed-hook-hosts` patterns and what they let through, with plain strings."""

from __future__ import annotations

import pytest

from reconcile.specs.hook_hosts import host_allowed, parse_host_patterns

ALLOWED = parse_host_patterns(["hooks.example.com, 127.0.0.1:8443", "*.svc.cluster.local [::1]"])


@pytest.mark.parametrize(
    "url",
    [
        "https://hooks.example.com/sync",
        "http://HOOKS.example.com.:8080/sync",  # any port; case and a trailing dot do not count
        "https://127.0.0.1:8443/sync",
        "http://my-hooks.my-ns.svc.cluster.local/sync",
        "http://[::1]:9000/sync",
    ],
)
def test_allowed(url: str) -> None:
    assert host_allowed(url, ALLOWED)


@pytest.mark.parametrize(
    "url",
    [
        "https://hooks.example.com.evil.test/sync",  # a suffix is not the host
        "https://evilhooks.example.com/sync",
        "https://127.0.0.1/sync",  # the port must match when the pattern names one
        "https://127.0.0.1:9443/sync",
        "http://svc.cluster.local/sync",  # *.domain is below the domain, not the domain
        "http://user:pass@attacker.test/@hooks.example.com/sync",  # the host is attacker.test
        "http://attacker.test#@hooks.example.com",
        "http://[::2]/sync",
    ],
)
def test_refused(url: str) -> None:
    assert not host_allowed(url, ALLOWED)


@pytest.mark.parametrize(
    "value", ["http://hooks.example.com", "a_b.example", "*", "*.", "host:port", "", " , "]
)
def test_not_a_pattern(value: str) -> None:
    with pytest.raises(ValueError):
        parse_host_patterns([value])


def test_patterns_are_normalised_and_deduplicated() -> None:
    assert parse_host_patterns(["A.example.", "a.example", "b.example:443"]) == (
        "a.example",
        "b.example:443",
    )
