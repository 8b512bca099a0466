"""A webhook URL parsed once (`specs.hook_url`): what it accepts, every other parser in play
(urllib.parse, urllib3, http.client's Host) reads the same way; what two parsers could read two
ways is refused. Property-tested over strings built from the characters parsers disagree on."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from urllib3.util import parse_url

from reconcile.specs.hook_hosts import host_allowed, parse_host_patterns
from reconcile.specs.hook_url import HookUrlError, parse_hook_url


@pytest.mark.parametrize(
    ("text", "scheme", "host", "port", "target"),
    [
        ("http://hooks.example.com/sync", "http", "hooks.example.com", 80, "/sync"),
        ("https://Hooks.Example.COM.:8443/a?b=c", "https", "hooks.example.com", 8443, "/a?b=c"),
        ("http://127.0.0.1:0080", "http", "127.0.0.1", 80, "/"),
        ("http://[0:0::1]:9/x", "http", "::1", 9, "/x"),
        ("http://u:p%40ss@h.test/x@y", "http", "h.test", 80, "/x@y"),
        ("http://h.test?x=1", "http", "h.test", 80, "/?x=1"),
    ],
)
def test_accepted_and_normalised_once(
    text: str, scheme: str, host: str, port: int, target: str
) -> None:
    url = parse_hook_url(text)
    assert (url.scheme, url.host, url.port, url.target) == (scheme, host, port, target)


@pytest.mark.parametrize(
    "text",
    [
        "http://127.0.0.2\\.hooks.allowed.test/",
        "http://x.allowed.test:80\\@127.0.0.2/",
        "http://a@b@c.test/",
        "http://c.test#@127.0.0.2/",
        "http://127.0.0.2%2f.allowed.test/",
        "http://[::1%25eth0]/",
        "http://[::1/",
        "HTTP://h.test/",
        "Http://h.test/",
        "ftp://h.test/",
        "http://2130706434/",
        "http://0x7f.0.0.2/",
        "http://0177.0.0.2/",
        "http://127.1/",
        "http://127.0.0.256/",
        "http://h.test:+80/",
        "http://h.test:/",
        "http://h.test:65536/",
        "http://h.test:0/",
        "http://h.test\t/",
        "http://h .test/",
        "http://h.test/\x00",
        "http://h.test/\x7f",
        "http://hé.test/",
        "http://h.test/é",
        "http://h_1.test/",
        "http://-h.test/",
        "http://h..test/",
        "http:///x",
        "http://",
        "http://h.test/{x}",
        "http://h.test/%zz",
        "http://us er@h.test/",
    ],
)
def test_refused(text: str) -> None:
    with pytest.raises(HookUrlError):
        parse_hook_url(text)


TRICKY = "ab.:/@\\?#%[]-_09 \t\x00\x7f+~!$&'()*,;=é１"
NARROW = "ab.:/@?#%[]-09+~!$&'()*,;=x7f1"  # more of these are accepted


@settings(max_examples=3000, deadline=None)
@given(
    st.sampled_from(["http://", "https://"]),
    st.one_of(st.text(alphabet=TRICKY, max_size=30), st.text(alphabet=NARROW, max_size=20)),
)
def test_what_is_accepted_every_parser_reads_alike(prefix: str, rest: str) -> None:
    text = prefix + rest
    try:
        url = parse_hook_url(text)
    except HookUrlError:
        return
    # the original text: urllib3 (the transport's old reading) and urllib.parse (the old
    # check's) agree with the one reading
    for parts in (parse_url(text), parse_url(url.url)):
        assert parts.scheme == url.scheme
        assert (parts.host or "").lower().rstrip(".").strip("[]") == url.host
        assert (parts.port or (443 if url.scheme == "https" else 80)) == url.port
    split = urlsplit(text)
    assert (split.hostname or "").rstrip(".") == url.host
    assert (split.port or (443 if url.scheme == "https" else 80)) == url.port
    rebuilt = urlsplit(url.url)
    assert (rebuilt.hostname, rebuilt.port or url.port) == (url.host, url.port)


def test_the_allow_list_reads_the_url_as_the_connection_does() -> None:
    allowed = parse_host_patterns(["*.allowed.test", "127.0.0.3"])
    assert not host_allowed("http://127.0.0.2\\.hooks.allowed.test/", allowed)
    assert not host_allowed("http://127.0.0.3:80\\@127.0.0.2/", allowed)
    assert host_allowed("http://Hooks.Allowed.Test./x", allowed)
    assert host_allowed(parse_hook_url("http://127.0.0.3:8080/"), allowed)
