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
GITHUB_API_URL only (no redirect is followed, no page link elsewhere, no ~/.netrc login
replaces it) and never printed.

A comment holds at most 65,536 characters: a longer report is cut at a line (an open code
fence or `<details>` closed), and the comment says what was left out and that the job summary
has all of it.

It runs with the Python of the action's virtual environment, where reconcile is installed
with its dependencies: the API is spoken with requests (github_api.py, beside it).

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
import urllib.parse
from collections.abc import Iterator, Mapping
from typing import Any

from github_api import Client, GitHubError, Identity  # beside this file, as the step runs it

MAX_BODY = 65_536  # characters GitHub takes in a comment
PULL_REQUEST_EVENTS = ("pull_request", "pull_request_target")
TOKEN_VARIABLE = "RECONCILE_COMMENT_TOKEN"
WORKFLOW_TOKEN_VARIABLE = "RECONCILE_WORKFLOW_TOKEN"  # the job's GITHUB_TOKEN, to compare
TITLE = "reconcile"
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


# -- the API (github_api.py) and the comment in it ----------------------------------------


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
