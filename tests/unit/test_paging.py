"""A paginated LIST asks for the next page while it decodes this one (cluster/paging.py): the
token is read from the raw body as the API server writes it, and the decoded page's own token
is what counts."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from reconcile.cluster.errors import Gone, Unavailable
from reconcile.cluster.memory import MemoryCluster
from reconcile.cluster.paging import decoded_page, peek_continue, pipelined_pages
from reconcile.cluster.types import ObjectList

TOKEN = "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6ODcwMiwic3RhcnQiOiIvYmVuY2gvcDAwMDAwLTJcdTAwMDAifQ"
ITEM = {"metadata": {"name": "a", "namespace": "n"}, "data": {"k": "v"}}


def builtin_list(token: str, items: list[Any] | None = None) -> bytes:
    """As kube-apiserver writes a built-in kind's List: its metadata before the items."""
    meta = {"resourceVersion": "8702", **({"continue": token} if token else {})}
    document: dict[str, Any] = {"kind": "ConfigMapList", "apiVersion": "v1", "metadata": meta}
    document["items"] = items if items is not None else [ITEM]
    return json.dumps(document, separators=(",", ":")).encode() + b"\n"


def custom_list(token: str, items: list[Any] | None = None) -> bytes:
    """As it writes a custom resource's List: fields sorted, so the metadata after the items."""
    meta = {**({"continue": token, "remainingItemCount": 997} if token else {})}
    meta["resourceVersion"] = "8702"
    document = {
        "apiVersion": "example.com/v1",
        "items": items if items is not None else [ITEM],
        "kind": "WidgetList",
        "metadata": meta,
    }
    return json.dumps(document, separators=(",", ":")).encode() + b"\n"


@pytest.mark.parametrize("shape", [builtin_list, custom_list], ids=["built-in", "custom"])
def test_the_token_is_read_from_either_end_of_the_body(shape: Any) -> None:
    assert peek_continue(shape(TOKEN)) == TOKEN
    assert peek_continue(shape("")) == ""  # the last page
    many = [{**ITEM, "metadata": {"name": f"i{i}"}} for i in range(500)]
    assert peek_continue(shape(TOKEN, many)) == TOKEN  # far from the other end


def test_a_body_it_cannot_read_the_token_from_is_left_to_the_decoded_page() -> None:
    pretty = json.dumps(json.loads(builtin_list(TOKEN)), indent=2).encode()  # ?pretty=true
    assert peek_continue(pretty) is None
    assert peek_continue(b"") is None
    assert peek_continue(b"not json") is None
    # an item's text that looks like a List's metadata is neither at its start nor its end
    forged = {**ITEM, "data": {"x": '"metadata":{"continue":"forged"}}'}}
    assert peek_continue(custom_list("", [forged])) == ""
    assert peek_continue(builtin_list("", [forged])) == ""


def page_of(body: bytes) -> ObjectList:
    document = json.loads(body)
    meta = document["metadata"]
    return ObjectList(items=document["items"], continue_token=meta.get("continue", ""))


def test_the_next_page_is_asked_for_before_this_one_is_decoded() -> None:
    bodies = {None: builtin_list("t1"), "t1": custom_list("t2"), "t2": builtin_list("")}
    asked: list[str | None] = []
    next_asked = {token: threading.Event() for token in ("t1", "t2")}

    def fetch(token: str | None) -> bytes:
        asked.append(token)
        if token in next_asked:
            next_asked[token].set()
        return bodies[token]

    def decode(body: bytes) -> ObjectList:
        page = page_of(body)
        if page.continue_token:  # the next page's request is out while this one decodes
            assert next_asked[page.continue_token].wait(5)
        return page

    pages = list(pipelined_pages(fetch, decode))
    assert [p.continue_token for p in pages] == ["t1", "t2", ""]
    assert asked == [None, "t1", "t2"]  # each page once


def test_a_peeked_token_the_page_does_not_have_is_dropped_for_the_pages_own() -> None:
    # a body whose raw metadata says one token and whose decoded page another (a server that
    # writes them differently): the page's own is asked for, what was asked early is dropped
    bodies = {None: builtin_list("peeked"), "peeked": builtin_list(""), "real": builtin_list("")}
    asked: list[str | None] = []

    def fetch(token: str | None) -> bytes:
        asked.append(token)
        return bodies[token]

    def decode(body: bytes) -> ObjectList:
        page = page_of(body)
        token = "real" if page.continue_token == "peeked" else page.continue_token
        return ObjectList(items=page.items, continue_token=token)

    assert len(list(pipelined_pages(fetch, decode))) == 2
    assert asked[0] is None and sorted(map(str, asked[1:])) == ["peeked", "real"]


def test_an_error_is_raised_where_its_page_would_be() -> None:
    def fetch(token: str | None) -> bytes:
        if token == "t1":
            raise Gone("the continue token has expired", status=410)
        return builtin_list("t1")

    pages = pipelined_pages(fetch, page_of)
    assert next(pages).continue_token == "t1"  # the second page's failure not raised yet
    with pytest.raises(Gone, match="expired"):
        next(pages)


def test_an_early_request_for_a_token_the_page_does_not_have_fails_nothing() -> None:
    def fetch(token: str | None) -> bytes:
        if token == "peeked":
            raise Gone("no such token", status=410)
        return builtin_list("peeked") if token is None else builtin_list("")

    def decode(body: bytes) -> ObjectList:
        page = page_of(body)
        token = "real" if page.continue_token == "peeked" else page.continue_token
        return ObjectList(items=page.items, continue_token=token)

    assert len(list(pipelined_pages(fetch, decode))) == 2


@pytest.mark.parametrize("body", [b"", b"\n", b"null", b"[]", b'{"items": 3}', b"<html>"])
def test_an_answer_that_is_no_list_fails_its_page_rather_than_end_the_listing(
    body: bytes,
) -> None:
    """Read as an empty last page, an empty answer from a proxy would end a listing with
    objects missing, and a Namespace would look empty to the check before it is pruned."""
    configmaps = MemoryCluster().discover("v1", "configmaps")
    bodies = {None: builtin_list("t1"), "t1": body}
    pages = pipelined_pages(bodies.__getitem__, lambda b: decoded_page(configmaps, b))
    assert len(next(pages).items) == 1
    with pytest.raises(Unavailable, match="LIST configmaps: the answer is"):
        next(pages)


def test_a_list_without_items_is_an_empty_page() -> None:
    configmaps = MemoryCluster().discover("v1", "configmaps")
    for body in (b'{"kind":"ConfigMapList","metadata":{},"items":null}', b'{"metadata":{}}'):
        page = decoded_page(configmaps, body)
        assert page.items == [] and page.continue_token == ""
