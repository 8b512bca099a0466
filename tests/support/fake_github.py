"""A fake GitHub REST API on loopback for the action's pull-request comment: the comments of
an issue (a pull request), listed a few a page with `Link` headers as GitHub pages them,
created and edited, and `GET /user`. Every request is recorded; one without the expected token
is answered 401, as GitHub does; `refuse` makes every request of a method fail with a status of
the test's choosing (403 for a token that may not write, 500 for an outage).

The token writes as `login`: comments it posts are that user's. An installation token (the
default: a workflow's GITHUB_TOKEN, `github-actions[bot]`) is refused `GET /user` with 403
"Resource not accessible by integration", as GitHub refuses it; a user's token (`user_token`)
gets its login and id. As on GitHub, a token that may write to pull requests may edit anyone's
comment on them: what keeps the action to its own is the action."""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

MAX_BODY = 65_536  # characters GitHub takes in a comment

_ISSUE_COMMENTS = re.compile(r"/repos/([^/]+/[^/]+)/issues/(\d+)/comments")
_COMMENT = re.compile(r"/repos/([^/]+/[^/]+)/issues/comments/(\d+)")
ACTIONS_BOT = "github-actions[bot]"
USER_IDS = {ACTIONS_BOT: 41898282}


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    authorization: str | None
    body: Any  # the JSON sent, None for a GET


@dataclass
class Comment:
    id: int
    issue: int
    body: str
    user: str = ACTIONS_BOT
    edits: int = 0

    def json(self, base: str) -> dict[str, Any]:
        return {
            "id": self.id,
            "body": self.body,
            "user": {"login": self.user, "id": user_id(self.user)},
            "html_url": f"{base}/pull/{self.issue}#issuecomment-{self.id}",
        }


@dataclass
class Refusal:
    status: int
    message: str


def user_id(login: str) -> int:
    """A stable id per login (GitHub's own for github-actions[bot])."""
    return USER_IDS.get(login, 1000 + sum(ord(c) * (i + 1) for i, c in enumerate(login)))


class FakeGitHub(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self,
        token: str,
        repository: str = "acme/platform",
        page_size: int = 2,
        *,
        login: str = ACTIONS_BOT,
        user_token: bool = False,
    ) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.token = token
        self.login = login  # who the token writes as
        self.user_token = user_token  # GET /user answers (else 403, as for GITHUB_TOKEN)
        self.repository = repository
        self.page_size = page_size  # at most this many a page, whatever per_page asks
        self.comments: list[Comment] = []
        self.requests: list[Request] = []
        # method, or `METHOD /path`, → the answer to every such request
        self.refuse: dict[str, Refusal] = {}
        self._ids = iter(range(5001, 10**9))
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def add(self, issue: int, body: str, user: str = "someone") -> Comment:
        with self.lock:
            comment = Comment(next(self._ids), issue, body, user)
            self.comments.append(comment)
            return comment

    def on(self, issue: int) -> list[Comment]:
        with self.lock:
            return [c for c in self.comments if c.issue == issue]

    def writes(self) -> list[Request]:
        with self.lock:
            return [r for r in self.requests if r.method != "GET"]

    # -- answering (from the handler's thread) --------------------------------------------

    def answer(self, request: Request) -> tuple[int, Any, dict[str, str]]:
        with self.lock:
            self.requests.append(request)
            if request.authorization != f"Bearer {self.token}":
                return 401, {"message": "Bad credentials"}, {}
            refusal = self.refuse.get(f"{request.method} {request.path}") or self.refuse.get(
                request.method
            )
            if refusal is not None:
                return refusal.status, {"message": refusal.message}, {}
            if request.path == "/user" and request.method == "GET":
                if not self.user_token:
                    return 403, {"message": "Resource not accessible by integration"}, {}
                return 200, {"login": self.login, "id": user_id(self.login), "type": "User"}, {}
            listed = _ISSUE_COMMENTS.fullmatch(request.path)
            edited = _COMMENT.fullmatch(request.path)
            route = listed or edited
            repository = route.group(1) if route else None
            if repository != self.repository:
                return 404, {"message": "Not Found"}, {}
            if listed and request.method == "GET":
                return self._list(request, int(listed.group(2)))
            body = request.body.get("body") if isinstance(request.body, dict) else None
            if not isinstance(body, str):
                return 422, {"message": "Invalid request: body is not a string"}, {}
            if len(body) > MAX_BODY:
                return 422, {"message": "Validation Failed: body is too long"}, {}
            base = f"https://github.example/{self.repository}"
            if listed and request.method == "POST":
                comment = Comment(next(self._ids), int(listed.group(2)), body, self.login)
                self.comments.append(comment)
                return 201, comment.json(base), {}
            if edited and request.method == "PATCH":
                found = [c for c in self.comments if c.id == int(edited.group(2))]
                if not found:
                    return 404, {"message": "Not Found"}, {}
                found[0].body = body
                found[0].edits += 1
                return 200, found[0].json(base), {}
            return 404, {"message": "Not Found"}, {}

    def _list(self, request: Request, issue: int) -> tuple[int, Any, dict[str, str]]:
        per_page = min(int(request.query.get("per_page", ["30"])[0]), self.page_size)
        page = int(request.query.get("page", ["1"])[0])
        comments = [c for c in self.comments if c.issue == issue]
        shown = comments[(page - 1) * per_page : page * per_page]
        headers = {}
        if page * per_page < len(comments):
            link = f"{self.url}{request.path}?per_page={per_page}&page="
            last = (len(comments) + per_page - 1) // per_page
            headers["Link"] = f'<{link}{page + 1}>; rel="next", <{link}{last}>; rel="last"'
        base = f"https://github.example/{self.repository}"
        return 200, [c.json(base) for c in shown], headers


class _Handler(BaseHTTPRequestHandler):
    server: FakeGitHub

    def _handle(self) -> None:
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        request = Request(
            self.command, parts.path, parse_qs(parts.query), self.headers.get("Authorization"), body
        )
        status, answer, headers = self.server.answer(request)
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def do_PATCH(self) -> None:
        self._handle()

    def log_message(self, format: str, *args: Any) -> None:
        pass
