"""The GitHub REST API as the pull-request comment uses it (comment.py): the comments of a pull
request a page at a time, who a token writes as, a comment created or edited.

Over requests, in a session of its own: the runner's proxy variables and CA bundle variables are
honoured, as for any requests session. The token goes to GITHUB_API_URL only: no redirect is
followed (one is an error, as a refusal is), no next page on another host is asked for, and no
`~/.netrc` login replaces it (requests reads one for a request that brings no authentication of
its own). It is never in an error's text."""

from __future__ import annotations

import json
import os
import re
import time
import urllib.parse
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import requests
from requests.auth import AuthBase

TIMEOUT = 30.0  # seconds for one request
RETRY_DELAY = 2.0  # seconds before the one retry of a read or an edit
MAX_PAGES = 100  # of 100 comments each
ACTIONS_BOT = "github-actions[bot]"  # who writes with the workflow's GITHUB_TOKEN
Links = dict[str, dict[str, str]]  # an answer's Link header: relation -> {"url": ...}


@dataclass(frozen=True)
class Identity:
    """Who a token writes as: a login (and its id when GitHub said it)."""

    login: str
    id: int | None = None

    def wrote(self, comment: Mapping[str, Any]) -> bool:
        user = comment.get("user")
        if not isinstance(user, dict) or not isinstance(user.get("login"), str):
            return False
        if user["login"].casefold() != self.login.casefold():
            return False
        return self.id is None or user.get("id") == self.id


class GitHubError(Exception):
    def __init__(self, status: int | None, message: str) -> None:
        super().__init__(message)
        self.status = status  # None: no answer
        self.message = message


class _Bearer(AuthBase):
    """The token as the request's Authorization: requests then reads no ~/.netrc login, which
    would replace it."""

    def __init__(self, token: str) -> None:
        self.token = token

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        request.headers["Authorization"] = f"Bearer {self.token}"
        return request


_HEADERS = {
    "Accept": "application/vnd.github+json",
    "X-GitHub-Api-Version": "2022-11-28",
    "User-Agent": "reconcile-github-action",
}


@dataclass
class Client:
    api: str  # GITHUB_API_URL, without a trailing /
    token: str = field(repr=False)
    timeout: float = TIMEOUT
    retry_delay: float = RETRY_DELAY

    def __post_init__(self) -> None:
        self._session = requests.Session()
        self._auth = _Bearer(self.token)

    def comments(self, repository: str, number: int) -> Iterator[dict[str, Any]]:
        """The pull request's comments, oldest first, a page at a time."""
        url: str | None = f"{self._repo(repository)}/issues/{number}/comments?per_page=100"
        for _ in range(MAX_PAGES):
            if url is None:
                return
            page, links = self._call("GET", url, retry=True)
            if not isinstance(page, list):
                raise GitHubError(None, "the list of comments is not a list")
            yield from (comment for comment in page if isinstance(comment, dict))
            url = links.get("next", {}).get("url")  # the Link header, as requests reads it
            if url is not None and not url.startswith(f"{self.api}/"):
                return  # the token goes to the API only

    def identity(self, *, workflow_token: bool) -> Identity | None:
        """Who the token writes as (None: it cannot be told; raises GitHubError for a token
        that is not accepted, or an API that has no such path). `workflow_token`: the token is
        the job's own GITHUB_TOKEN, whose comments are github-actions[bot]'s; another
        installation token (a GitHub App's) writes as its app's bot, which cannot be told."""
        try:
            user, _ = self._call("GET", f"{self.api}/user", retry=True)
        except GitHubError as exc:
            if exc.status == 403 and "integration" in exc.message:
                return Identity(ACTIONS_BOT) if workflow_token else None
            if exc.status is not None and exc.status < 500 and exc.status != 403:
                raise  # not accepted, not found: as any other request would be answered
            return None  # no answer, a server error, another refusal: unknown
        login = user.get("login") if isinstance(user, dict) else None
        if not isinstance(login, str) or not login:
            return None
        user_id = user.get("id") if isinstance(user, dict) else None
        return Identity(login, user_id if isinstance(user_id, int) else None)

    def create(self, repository: str, number: int, body: str) -> dict[str, Any]:
        url = f"{self._repo(repository)}/issues/{number}/comments"
        made, _ = self._call("POST", url, {"body": body}, retry=False)  # a retry could post twice
        return made if isinstance(made, dict) else {}

    def update(self, repository: str, comment: int, body: str) -> dict[str, Any]:
        url = f"{self._repo(repository)}/issues/comments/{comment}"
        edited, _ = self._call("PATCH", url, {"body": body}, retry=True)
        return edited if isinstance(edited, dict) else {}

    def _repo(self, repository: str) -> str:
        owner, _, name = repository.partition("/")
        quoted = "/".join(urllib.parse.quote(part, safe="") for part in (owner, name))
        return f"{self.api}/repos/{quoted}"

    def _call(
        self, method: str, url: str, payload: Any = None, *, retry: bool
    ) -> tuple[Any, Links]:
        try:
            return self._request(method, url, payload)
        except GitHubError as exc:
            if not retry or (exc.status is not None and exc.status < 500):
                raise
        time.sleep(self.retry_delay)
        return self._request(method, url, payload)

    def _request(self, method: str, url: str, payload: Any) -> tuple[Any, Links]:
        try:
            with self._session.request(
                method,
                url,
                json=payload,
                headers=_HEADERS,
                auth=self._auth,
                timeout=self.timeout,
                allow_redirects=False,  # followed, a redirect would carry the token elsewhere
            ) as response:
                if response.status_code >= 300:  # a redirect is refused as an error is
                    raise GitHubError(response.status_code, self._scrub(_message(response)))
                raw = response.content
                links = response.links
        except (requests.RequestException, OSError, ValueError) as exc:  # no answer
            raise GitHubError(None, self._scrub(_unreached(exc))) from None
        try:
            return (json.loads(raw) if raw.strip() else None), links
        except ValueError:
            raise GitHubError(None, "an answer that is not JSON") from None

    def _scrub(self, text: str) -> str:
        """The token, and the user and password of any URL (a proxy's from the runner's
        environment: requests' parse errors quote it whole), never shown."""
        if self.token:
            text = text.replace(self.token, "***")
        for name in PROXY_VARIABLES:
            value = os.environ.get(name) or os.environ.get(name.lower()) or ""
            userinfo = value.partition("://")[2].rpartition("@")[0]
            if userinfo:
                text = text.replace(userinfo, "***")
        return _URL_USERINFO.sub(r"\1***@", text)


PROXY_VARIABLES = ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY")
_URL_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://)[^\s@]*@")


def _message(response: requests.Response) -> str:
    try:
        answer = json.loads(response.content[:65536] or b"null")
    except (requests.RequestException, ValueError):
        answer = None
    if isinstance(answer, dict) and isinstance(answer.get("message"), str):
        return " ".join(answer["message"].split())
    return str(response.reason)


def _unreached(error: BaseException) -> str:
    """Why no answer came: the socket's own words (`Connection refused`), not requests' and
    urllib3's wrappings around them."""
    while isinstance(error, requests.RequestException) and error.args:
        inner = error.args[0]
        if not isinstance(inner, BaseException):
            break
        error = getattr(inner, "reason", None) or inner
    found = re.search(r"\[Errno -?\d+\] ([^'\")\]]+)", str(error))
    return found.group(1).strip() if found else str(error) or type(error).__name__
