"""Where the pull-request comment's token goes, against fake GitHub APIs on loopback: to
GITHUB_API_URL and nowhere else. A redirect is an error, not followed; a next page on another
host is not asked for; a ~/.netrc login for the API's host does not replace the token."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.test_github_action_comment import PR, TOKEN, event_env, run_comment
from tests.support.fake_github import FakeGitHub, Request
from tests.support.hookserver import serving


class _Redirecting(FakeGitHub):
    """Answers every request with a redirect to the same path on `elsewhere`."""

    def __init__(self, elsewhere: str) -> None:
        super().__init__(TOKEN)
        self.elsewhere = elsewhere

    def answer(self, request: Request) -> tuple[int, Any, dict[str, str]]:
        with self.lock:
            self.requests.append(request)
        return 307, {"message": "Moved"}, {"Location": f"{self.elsewhere}{request.path}"}


class _PagedElsewhere(FakeGitHub):
    """A pull request with no comments whose list says its next page is on `elsewhere`."""

    def __init__(self, elsewhere: str) -> None:
        super().__init__(TOKEN)
        self.elsewhere = elsewhere

    def _list(self, request: Request, issue: int) -> tuple[int, Any, dict[str, str]]:
        link = f'<{self.elsewhere}{request.path}?page=2>; rel="next"'
        return 200, [], {"Link": link}


@pytest.fixture
def elsewhere() -> Iterator[FakeGitHub]:
    """Another host's API, recording whatever reaches it."""
    with serving(FakeGitHub(TOKEN)) as server:
        yield server


@pytest.fixture
def markdown(tmp_path: Path) -> Path:
    path = tmp_path / "report.md"
    path.write_text("### reconcile: 2 changes pending\n")
    return path


def test_a_redirect_is_not_followed(elsewhere: FakeGitHub, markdown: Path, tmp_path: Path) -> None:
    with serving(_Redirecting(elsewhere.url)) as api:
        done = run_comment(markdown, event_env(tmp_path, api.url), tmp_path)
        asked = list(api.requests)
    assert done.returncode == 0, done.stderr[-2000:]
    assert asked and elsewhere.requests == []
    assert "GitHub answered 307 (Moved)" in done.stdout
    assert TOKEN not in done.stdout + done.stderr


def test_a_next_page_on_another_host_is_not_asked_for(
    elsewhere: FakeGitHub, markdown: Path, tmp_path: Path
) -> None:
    with serving(_PagedElsewhere(elsewhere.url)) as api:
        done = run_comment(markdown, event_env(tmp_path, api.url), tmp_path)
        posted = api.on(PR)
    assert done.returncode == 0, done.stderr[-2000:]
    assert elsewhere.requests == []
    assert len(posted) == 1  # the list as far as the API's host gave it, then the comment


def test_a_netrc_login_does_not_replace_the_token(markdown: Path, tmp_path: Path) -> None:
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login someone password netrc-Passw0rd\n")
    netrc.chmod(0o600)
    with serving(FakeGitHub(TOKEN)) as api:
        env = event_env(tmp_path, api.url) | {"NETRC": str(netrc)}
        done = run_comment(markdown, env, tmp_path)
        seen = {request.authorization for request in api.requests}
        posted = api.on(PR)
    assert done.returncode == 0, done.stderr[-2000:]
    assert seen == {f"Bearer {TOKEN}"}
    assert len(posted) == 1


@pytest.mark.parametrize(
    "proxy",
    ["http://puser:ProxyPassw0rd@127.0.0.1:99999", "http://puser:Proxy/Passw0rd@127.0.0.1:99999"],
)
def test_a_proxy_s_password_is_never_shown(markdown: Path, tmp_path: Path, proxy: str) -> None:
    env = event_env(tmp_path, "http://api.github.invalid") | {"HTTP_PROXY": proxy}
    done = run_comment(markdown, env, tmp_path)
    shown = done.stdout + done.stderr + (tmp_path / "summary.md").read_text()
    assert "could not be reached" in shown  # the call failed, and said so
    assert "Passw0rd" not in shown and "Proxy/" not in shown
