"""The run's Markdown report as one comment on the pull request, edited by every later run.

The comment starts with a hidden marker, `<!-- reconcile-report: KEY -->`: a later run finds
it among the pull request's comments and edits that comment (PATCH) instead of adding one
(POST). KEY tells one use of the action from another on the same pull request (two jobs, two
steps, two legs of a matrix). Anyone who may comment can write the marker too: only a comment
whose author is the token's own identity is edited, never another's. That identity is what
`GET /user` answers for a user's token; the job's own GITHUB_TOKEN (RECONCILE_WORKFLOW_TOKEN
holds it, to compare), which `GET /user` refuses, writes as `github-actions[bot]`. When the
identity cannot be told (another installation token, a GitHub App's, writes as its app's bot),
nothing is edited: the report is a new comment.

Only `pull_request` and `pull_request_target` events have a pull request to comment on; other
events are left alone. The comment never fails the job: a token that may not write (a pull
request from a fork gets a read-only one), GitHub refusing the request or not answering, is a
warning and a note in the job summary, which holds the report anyway. The token is sent to
GITHUB_API_URL only (no redirect is followed, no page link elsewhere) and never printed.

A comment holds at most 65,536 characters: a longer report is cut at a line (an open code
fence or `<details>` closed), and the comment says what was left out and that the job summary
has all of it.

Standard library only, so that it runs with any Python.

Usage: python comment.py --markdown PATH --key KEY [--exit-code N], with the token in
RECONCILE_COMMENT_TOKEN and the runner's GITHUB_* variables (GITHUB_EVENT_NAME,
GITHUB_EVENT_PATH, GITHUB_API_URL, GITHUB_REPOSITORY, GITHUB_SERVER_URL, GITHUB_RUN_ID,
GITHUB_RUN_ATTEMPT, GITHUB_STEP_SUMMARY). Exits 0 whatever becomes of the comment."""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from email.message import Message
from typing import IO, Any

MAX_BODY = 65_536  # characters GitHub takes in a comment
PULL_REQUEST_EVENTS = ("pull_request", "pull_request_target")
TOKEN_VARIABLE = "RECONCILE_COMMENT_TOKEN"
WORKFLOW_TOKEN_VARIABLE = "RECONCILE_WORKFLOW_TOKEN"  # the job's GITHUB_TOKEN, to compare
TIMEOUT = 30.0  # seconds for one request
RETRY_DELAY = 2.0  # seconds before the one retry of a read or an edit
MAX_PAGES = 100  # of 100 comments each
TITLE = "reconcile"
ACTIONS_BOT = "github-actions[bot]"  # who writes with the workflow's GITHUB_TOKEN
_MARKER_SAFE = " /._:()[]@+=,"  # everything else in a key is %-quoted: no `-->` ends the marker


def marker(key: str) -> str:
    return f"<!-- reconcile-report: {urllib.parse.quote(key, safe=_MARKER_SAFE)} -->"


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|~#$!])")
_ACTIVE = re.compile(r"(?<=@)(?=\w)|(?<=#)(?=[0-9])|(?<=:)(?=//)|(?<=www)(?=\.)", re.IGNORECASE)


def inert(text: str) -> str:
    """A value of the workflow's (a key may be its name, which a pull request may change) as
    plain Markdown text: on one line, controls written as escapes, no Markdown or HTML of its
    own, no mention or link (a zero-width space after `@`, `#`, a scheme's `:`)."""
    shown = "".join(
        c if c.isprintable() else f"\\u{ord(c):04x}" for c in " ".join(text.splitlines())
    )
    return _ACTIVE.sub("\u200b", _MARKDOWN_SPECIAL.sub(r"\\\1", html.escape(shown, quote=False)))


def size(text: str) -> int:
    """Characters as GitHub may count them: UTF-16 code units, never fewer than code points."""
    return len(text.encode("utf-16-le")) // 2


# -- the body ---------------------------------------------------------------------------------


def compose(
    markdown: str | None,
    *,
    key: str,
    run_url: str | None,
    head_sha: str | None = None,
    exit_code: str = "",
) -> str:
    """The comment: the marker, the report (cut to fit), a line naming the run."""
    head = marker(key) + "\n"
    run = f"[workflow run]({run_url})" if run_url else "the workflow run"
    facts = [inert(key), run] + ([f"commit {inert(head_sha[:12])}"] if head_sha else [])
    footer = f"\n\n<sub>{' · '.join(facts)}</sub>\n"
    if markdown is None or not markdown.strip():
        code = f" (exit code {exit_code})" if exit_code else ""
        markdown = (
            f"### reconcile: no report\n\nreconcile stopped before it wrote its report{code}: "
            f"its output is in the job's log of {run}."
        )
    room = MAX_BODY - size(head) - size(footer)
    text = markdown.rstrip("\n")
    if size(text) > room:
        text = cut(text, room, run)
    return head + text + footer


def cut(markdown: str, room: int, run: str) -> str:
    """The longest run of whole first lines of `markdown` that fits in `room` characters with
    the blocks it leaves open closed and a note on what was left out."""
    lines = markdown.split("\n")

    def render(kept: int) -> str:
        left_out = lines[kept:]
        note = (
            f"\n\n> [!NOTE]\n> This comment is cut to stay under GitHub's {MAX_BODY} "
            f"characters: lines {kept + 1} to {len(lines)} of the report "
            f"({sum(size(line) + 1 for line in left_out)} characters) are left out. The "
            f"whole report is in the job summary of {run}."
        )
        return "\n".join(lines[:kept]) + _closers(lines[:kept]) + note

    low, high = 0, len(lines)  # the most lines that fit, found by bisection
    while low < high:
        middle = (low + high + 1) // 2
        if size(render(middle)) <= room:
            low = middle
        else:
            high = middle - 1
    return render(low)


_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


def _closers(lines: list[str]) -> str:
    """What closes the code fence and the `<details>` blocks left open at the end of `lines`."""
    fence: str | None = None
    depth = 0
    for line in lines:
        if fence is not None:
            stripped = line.strip()
            if len(stripped) >= len(fence) and set(stripped) == {fence[0]}:
                fence = None
            continue
        opened = _FENCE.match(line)
        if opened:
            fence = opened.group(1)
            continue
        depth += len(re.findall(r"<details\b", line, re.IGNORECASE))
        depth = max(0, depth - len(re.findall(r"</details>", line, re.IGNORECASE)))
    return (f"\n{fence}" if fence else "") + "\n\n</details>" * depth


# -- the API ----------------------------------------------------------------------------------


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


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is an error: followed, it would carry the token to another host."""

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: Message,
        newurl: str,
    ) -> urllib.request.Request | None:
        return None


@dataclass
class Client:
    api: str  # GITHUB_API_URL, without a trailing /
    token: str = field(repr=False)
    timeout: float = TIMEOUT
    retry_delay: float = RETRY_DELAY

    def __post_init__(self) -> None:
        self._opener = urllib.request.build_opener(_NoRedirect)

    def comments(self, repository: str, number: int) -> Iterator[dict[str, Any]]:
        """The pull request's comments, oldest first, a page at a time."""
        url: str | None = f"{self._repo(repository)}/issues/{number}/comments?per_page=100"
        for _ in range(MAX_PAGES):
            if url is None:
                return
            page, headers = self._call("GET", url, retry=True)
            if not isinstance(page, list):
                raise GitHubError(None, "the list of comments is not a list")
            yield from (comment for comment in page if isinstance(comment, dict))
            url = _next_page(headers.get("Link") or "")
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
    ) -> tuple[Any, Mapping[str, str]]:
        try:
            return self._request(method, url, payload)
        except GitHubError as exc:
            if not retry or (exc.status is not None and exc.status < 500):
                raise
        time.sleep(self.retry_delay)
        return self._request(method, url, payload)

    def _request(self, method: str, url: str, payload: Any) -> tuple[Any, Mapping[str, str]]:
        data = None if payload is None else json.dumps(payload).encode()
        headers = {
            "Accept": "application/vnd.github+json",
            "Authorization": f"Bearer {self.token}",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": "reconcile-github-action",
        }
        if data is not None:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with self._opener.open(request, timeout=self.timeout) as response:
                raw = response.read()
                answer_headers = {k: v for k, v in response.headers.items()}
        except urllib.error.HTTPError as exc:
            raise GitHubError(exc.code, self._scrub(_message(exc))) from None
        except (OSError, ValueError) as exc:  # URLError, a timeout, a refused connection
            reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
            raise GitHubError(None, self._scrub(str(reason) or type(exc).__name__)) from None
        try:
            return (json.loads(raw) if raw.strip() else None), answer_headers
        except ValueError:
            raise GitHubError(None, "an answer that is not JSON") from None

    def _scrub(self, text: str) -> str:
        return text.replace(self.token, "***") if self.token else text


def _message(error: urllib.error.HTTPError) -> str:
    try:
        answer = json.loads(error.read(65536) or b"null")
    except (OSError, ValueError):
        answer = None
    if isinstance(answer, dict) and isinstance(answer.get("message"), str):
        return " ".join(answer["message"].split())
    return str(error.reason)


def _next_page(link: str) -> str | None:
    found = re.search(r'<([^>]+)>\s*;\s*rel="next"', link)
    return found.group(1) if found else None


def find(
    comments: Iterator[dict[str, Any]], key: str, identity: Identity | None
) -> dict[str, Any] | None:
    """The first comment (the oldest) that starts with the key's marker and that `identity`
    wrote: another's, marker or not, is never ours to edit. None without an identity."""
    if identity is None:
        return None
    wanted = marker(key)
    for comment in comments:
        body = comment.get("body")
        if (
            isinstance(body, str)
            and body.split("\n", 1)[0].strip() == wanted
            and identity.wrote(comment)
        ):
            return comment
    return None


# -- the step ---------------------------------------------------------------------------------


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def warn(text: str, summary: str | None) -> None:
    """A warning annotation, and the same line in the step summary."""
    print(f"::warning title={TITLE}::{escape_data(text)}")
    if summary:
        with open(summary, "a", encoding="utf-8") as out:
            out.write(f"\n> [!WARNING]\n> **reconcile:** {' '.join(text.split())}\n")


def run_url(env: Mapping[str, str]) -> str | None:
    server, repository, run = (
        env.get(name) for name in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")
    )
    if not (server and repository and run):
        return None
    attempt = env.get("GITHUB_RUN_ATTEMPT")
    return f"{server}/{repository}/actions/runs/{run}" + (
        f"/attempts/{attempt}" if attempt and attempt != "1" else ""
    )


def explain(error: GitHubError, number: int, fork: str | None) -> str:
    where = f"the report was not posted on pull request #{number}"
    if error.status is None:
        return f"{where}: GitHub could not be reached ({error.message}); the job summary has it."
    answered = f"GitHub answered {error.status} ({error.message})"
    if error.status in (401, 403, 404):
        origin = (
            f"The pull request comes from the fork {fork}: its workflows get a read-only token. "
            if fork
            else ""
        )
        refused = "the token was not accepted" if error.status == 401 else "it may not write there"
        return (
            f"{where}: {answered}, {refused}. {origin}Commenting needs a token with "
            "`pull-requests: write` (the `permissions:` of the job); the job summary has the "
            "report."
        )
    return f"{where}: {answered}; the job summary has the report."


def _fork(pull_request: Mapping[str, Any]) -> str | None:
    """The head repository's name when it is not the base's."""
    head = (pull_request.get("head") or {}).get("repo") or {}
    base = (pull_request.get("base") or {}).get("repo") or {}
    name = head.get("full_name")
    return name if isinstance(name, str) and name != base.get("full_name") else None


def post(markdown: str | None, *, key: str, exit_code: str, env: Mapping[str, str]) -> None:
    summary = env.get("GITHUB_STEP_SUMMARY")
    event_name = env.get("GITHUB_EVENT_NAME", "")
    if event_name not in PULL_REQUEST_EVENTS:
        print(f"reconcile: no comment: the event is {event_name or 'unknown'}, not a pull request")
        return
    try:
        with open(env.get("GITHUB_EVENT_PATH", ""), encoding="utf-8") as stream:
            event = json.load(stream)
    except (OSError, ValueError) as exc:
        warn(f"the report was not posted: the event cannot be read ({exc})", summary)
        return
    pull_request = event.get("pull_request") if isinstance(event, dict) else None
    number = pull_request.get("number") if isinstance(pull_request, dict) else None
    if not isinstance(pull_request, dict) or not isinstance(number, int):
        warn("the report was not posted: the event names no pull request", summary)
        return
    token = env.get(TOKEN_VARIABLE, "")
    if not token:
        warn(
            f"the report was not posted on pull request #{number}: the input github-token is empty",
            summary,
        )
        return
    repository = env.get("GITHUB_REPOSITORY") or str(
        (event.get("repository") or {}).get("full_name") or ""
    )
    api = (env.get("GITHUB_API_URL") or "https://api.github.com").rstrip("/")
    if urllib.parse.urlsplit(api).scheme not in ("https", "http"):
        warn(f"the report was not posted: GITHUB_API_URL is not an HTTP URL ({api})", summary)
        return
    client = Client(api, token)
    head_sha = (pull_request.get("head") or {}).get("sha")
    body = compose(
        markdown,
        key=key,
        run_url=run_url(env),
        head_sha=head_sha if isinstance(head_sha, str) else None,
        exit_code=exit_code,
    )
    try:
        ours = client.identity(workflow_token=token == env.get(WORKFLOW_TOKEN_VARIABLE))
        found = find(client.comments(repository, number), key, ours)
        if found is not None and isinstance(found.get("id"), int):
            done, verb = client.update(repository, found["id"], body), "updated"
        else:
            done, verb = client.create(repository, number, body), "posted"
        print(f"reconcile: {verb} the report on pull request #{number}: {done.get('html_url')}")
    except GitHubError as exc:
        warn(explain(exc, number, _fork(pull_request)), summary)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--markdown", required=True, help="the Markdown report (may be missing)")
    parser.add_argument("--key", required=True, help="tells this comment from others")
    parser.add_argument("--exit-code", default="", help="reconcile's, named when no report")
    given = parser.parse_args(argv)
    try:
        with open(given.markdown, encoding="utf-8", errors="replace") as stream:
            markdown: str | None = stream.read()
    except OSError:
        markdown = None
    env = dict(os.environ)
    try:
        post(markdown, key=given.key, exit_code=given.exit_code, env=env)
    except Exception as exc:  # whatever happens to the comment, the job goes on
        token = env.get(TOKEN_VARIABLE, "")
        text = str(exc).replace(token, "***") if token else str(exc)
        summary = env.get("GITHUB_STEP_SUMMARY")
        warn(f"the report was not posted: {type(exc).__name__}: {text}", summary)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
