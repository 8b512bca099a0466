"""A paginated LIST with the next page asked for while this one is read.

Each page's `continue` token is in the List's top-level `metadata`, which the API server writes
before the items (built-in kinds) or after them (custom resources, whose fields come sorted).
`peek_continue` reads it from the raw body without decoding the items, so the next page's
request goes out at once and the server prepares it while this page is decoded. The decoded
page's own token is what counts: a peeked token that differs from it (or a body it cannot be
peeked from) means the next page is asked for after decoding, as without the peek, and what
was asked for early is dropped."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor

from reconcile.cluster.errors import Unavailable
from reconcile.cluster.protocol import with_type
from reconcile.cluster.types import ObjectList, ResourceInfo

#: A request's query parameters, in order.
Query = list[tuple[str, str]]

#: How much of a body's start and end the top-level metadata is looked for in.
PEEK_BYTES = 4096

# `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{...}`: the metadata (no nested map)
# before the items
_HEAD = re.compile(rb'\{(?:"(?:kind|apiVersion)":"[^"\\]*",)*"metadata":\{([^{}]*)\}')
# `...],"kind":"WidgetList","metadata":{...}}` at the very end: after the items
_TAIL = re.compile(rb'"metadata":\{([^{}]*)\}\}\s*\Z')
_CONTINUE = re.compile(rb'"continue":"([A-Za-z0-9_=.-]*)"')


def peek_continue(body: bytes) -> str | None:
    """The `continue` token of a List body as the API server writes it ("" on the last page),
    or None when the top-level metadata is not where it is looked for."""
    found = _HEAD.match(body[:PEEK_BYTES]) or _TAIL.search(body[-PEEK_BYTES:])
    if found is None:
        return None
    token = _CONTINUE.search(found.group(1))
    return token.group(1).decode() if token else ""


def pipelined_pages(
    fetch: Callable[[str | None], bytes], decode: Callable[[bytes], ObjectList]
) -> Iterator[ObjectList]:
    """Every page: `fetch(token)` sends one page's request and returns its body (None: the
    first page), `decode` makes the page of it. An error is raised where its page would be."""
    with ThreadPoolExecutor(1, thread_name_prefix="next-page") as ahead:
        body = fetch(None)
        while True:
            peeked = peek_continue(body)
            early: Future[bytes] | None = ahead.submit(fetch, peeked) if peeked else None
            page = decode(body)
            yield page
            token = page.continue_token
            if not token:
                return
            if early is not None and peeked == token:
                body = early.result()
            else:
                if early is not None:
                    early.cancel()
                body = fetch(token)


def list_query(
    label_selector: str | None,
    field_selector: str | None,
    limit: int | None,
    continue_token: str | None,
) -> Query:
    """A LIST request's query parameters."""
    query: Query = []
    if label_selector:
        query.append(("labelSelector", label_selector))
    if field_selector:
        query.append(("fieldSelector", field_selector))
    if limit:
        query.append(("limit", str(limit)))
    if continue_token:
        query.append(("continue", continue_token))
    return query


def decoded_page(resource: ResourceInfo, body: bytes) -> ObjectList:
    """A LIST answer's page, each item with its apiVersion and kind. Unavailable when the
    answer is no List (an empty body from something between the run and the server): read
    as an empty last page, it would end the listing with objects missing."""
    try:
        document = json.loads(body)
    except ValueError:
        document = None
    if not isinstance(document, dict) or not isinstance(document.get("items") or [], list):
        what = "empty" if not body.strip() else "not a JSON List"
        raise Unavailable(f"LIST {resource.group_resource}: the answer is {what}", status=0)
    meta = document.get("metadata") or {}
    return ObjectList(
        items=[with_type(resource, item) for item in document.get("items") or []],
        resource_version=str(meta.get("resourceVersion") or ""),
        continue_token=str(meta.get("continue") or ""),
        remaining_item_count=meta.get("remainingItemCount"),
    )
