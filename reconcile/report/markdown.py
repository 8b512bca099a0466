"""The Markdown report, for a GitHub step summary or a PR comment.

A heading with the outcome, a summary table, then one `<details>` block per parent with its
hook calls, actions and ```diff fences. The whole stays under MARKDOWN_LIMIT bytes (GitHub
refuses larger step summaries): past it, parent blocks are dropped from the end and a note
says how many parents and actions were left out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial

from reconcile.records import dataclass
from reconcile.report.markdown_text import fence_for, fence_line, html_text, inline
from reconcile.report.model import (
    ActionState,
    ActionView,
    Totals,
    has_news,
    headline,
    hooks_summary,
    mode,
    ms,
    parent_summary,
    plural,
    requests_summary,
    source_line,
    stop_note,
    symbol,
    totals,
    view,
)
from reconcile.results import HookCall, ParentResult, RunResult

MARKDOWN_LIMIT = 1024 * 1024  # bytes; GitHub's limit for a step summary
LIST_ITEMS = 100  # errors and due resyncs listed in the head
_NOTE_RESERVE = 512  # bytes kept free for the truncation note


@dataclass(frozen=True)
class _Chunk:
    """A piece of the body, rendered only when it may fit (a huge run is cut early)."""

    render: Callable[[], str]
    parents: int = 0
    actions: int = 0
    heading: bool = False  # only worth keeping when something follows it


def render_markdown(result: RunResult, *, limit: int = MARKDOWN_LIMIT) -> str:
    t = totals(result)
    head = _head(result, t)
    room = limit - len(head.encode())
    chunks = list(_body(result))
    texts: list[str] = []
    sizes: list[int] = []
    used = 0
    for chunk in chunks:
        text = chunk.render()
        size = len(text.encode())
        if used + size > room:
            break
        texts.append(text)
        sizes.append(size)
        used += size
    else:
        return head + "".join(texts)
    # Too large: keep what fits with room for the note, never a heading left without content.
    kept = len(texts)
    while kept and (used > room - _NOTE_RESERVE or chunks[kept - 1].heading):
        kept -= 1
        used -= sizes[kept]
    dropped = chunks[kept:]
    parents = sum(c.parents for c in dropped)
    actions = sum(c.actions for c in dropped)
    note = (
        f"\n> [!NOTE]\n> This report was cut to stay under {limit} bytes: the details of "
        f"{plural(parents, 'parent')} ({plural(actions, 'action')}) are left out. "
        "The JSON report has everything.\n"
    )
    out = head + "".join(texts[:kept]) + note
    encoded = out.encode()
    if len(encoded) > limit:  # only when the head alone is too large
        out = encoded[: limit - len(note.encode())].decode(errors="ignore") + note
    return out


# -- head: outcome and summary ------------------------------------------------------------


def _head(result: RunResult, t: Totals) -> str:
    facts = [
        mode(result),
        "converged" if result.converged else "not converged",
        f"{t.passes} pass" if t.passes == 1 else f"{t.passes} passes",
        f"{result.duration:.2f} s",
    ]
    lines = [f"### reconcile: {headline(t)}", "", " · ".join(facts), ""]
    if (source := source_line(result)) is not None:
        lines += [f"Source: {_md(source)}", ""]
    note = stop_note(result)
    if note:
        lines += [f"> **Stopped:** {_md(note)}", ""]
    rows: list[tuple[str, str]] = [
        ("Parents synced", str(t.parents)),
        ("Changes pending", _by_kind(t, ActionState.PENDING)),
        ("Changes applied", _by_kind(t, ActionState.APPLIED)),
        ("Actions failed", _by_kind(t, ActionState.FAILED)),
        ("Waits", str(t.waits)),
        ("Hook calls", hooks_summary(t)),
        ("API requests", requests_summary(result.requests)),
        ("Errors", str(t.errors)),
        ("Wall time", f"{result.duration:.2f} s"),
        ("Converged", "yes" if result.converged else "no"),
    ]
    if result.server_dry_run:
        rows.insert(2, ("Server-validated", f"{t.validated} of {t.pending} pending"))
    lines += ["| | |", "|:--|:--|"]
    lines += [f"| {name} | {_md(value)} |" for name, value in rows]
    lines.append("")
    lines += _listing("Errors", result.errors)
    lines += _listing("Warnings", result.warnings)
    lines += _listing("Due at the next run", result.due_next_run)
    return "\n".join(lines) + "\n"


def _by_kind(t: Totals, state: ActionState) -> str:
    counts = [(kind, c[state.value]) for kind, c in t.by_kind.items() if c[state.value]]
    if not counts:
        return "0"
    total = sum(n for _, n in counts)
    return f"{total} (" + ", ".join(f"{kind} {n}" for kind, n in counts) + ")"


def _listing(title: str, items: list[str]) -> list[str]:
    if not items:
        return []
    lines = [f"**{title}**", ""]
    lines += [f"- {_md(item)}" for item in items[:LIST_ITEMS]]
    if len(items) > LIST_ITEMS:
        lines.append(f"- … and {len(items) - LIST_ITEMS} more")
    return [*lines, ""]


# -- body: passes, controllers, parents ----------------------------------------------------


def _body(result: RunResult) -> Iterator[_Chunk]:
    for pass_ in result.passes:
        if len(result.passes) > 1:
            yield _text(f"\n#### Pass {pass_.number}\n", heading=True)
        for controller in pass_.controllers:
            kind = f" ({controller.kind})" if controller.kind else ""
            yield _text(f"\n**Controller {_md(controller.name)}**{kind}\n", heading=True)
            quiet = [p for p in controller.parents if not has_news(p)]
            for parent in controller.parents:
                if has_news(parent):
                    yield _Chunk(partial(_parent, parent), 1, len(parent.actions))
            if quiet:
                yield _Chunk(partial(_quiet, quiet), len(quiet))
            if controller.errors:
                errors = "".join(f"- controller error: {_md(e)}\n" for e in controller.errors)
                yield _text("\n" + errors)
            if not controller.parents and not controller.errors:
                yield _text("\nNo parents.\n")


def _text(text: str, *, heading: bool = False) -> _Chunk:
    return _Chunk(lambda: text, heading=heading)


def _parent(parent: ParentResult) -> str:
    summary = (
        f"<b>{_html(parent.parent)}</b> [{_html(parent.mode)}]: {_html(parent_summary(parent))}"
    )
    lines = ["", f"<details><summary>{summary}</summary>", ""]
    if parent.hooks:
        lines += _hooks_table(parent.hooks)
    group = ""
    for result in parent.actions:
        if result.action.group and result.action.group != group:
            group = result.action.group
            lines += [f"*for {_md(group)}*", ""]
        lines += _action(view(result))
    if parent.rollout is not None:
        lines += [f"- rollout: {_md(parent.rollout.describe())}"]
    for wait in parent.waits:
        lines += [f"- ⏳ waits: {_md(wait)}"]
    for error in parent.errors:
        lines += [f"- ❌ error: {_md(error)}"]
    lines += ["", "</details>", ""]
    return "\n".join(lines)


def _hooks_table(hooks: list[HookCall]) -> list[str]:
    lines = ["| Hook | Outcome | Duration | Target | Error |", "|:--|:--|--:|:--|:--|"]
    for h in hooks:
        lines.append(
            f"| {_md(h.hook)} | {h.outcome.value} | {ms(h.duration):g} ms "
            f"| {_md(h.target)} | {_md(h.error)} |"
        )
    return [*lines, ""]


def _action(action: ActionView) -> list[str]:
    obj = action.object
    state = action.state.value + (f" ({action.validation})" if action.validation else "")
    lines = [
        f"**{symbol(action.kind)} {action.kind.value}** {_md(str(obj))} ({_md(obj.api_version)})"
        f" · {_md(state)} · {_md(action.reason)}",
        "",
    ]
    if action.error:
        lines += [f"❌ failed: {_md(action.error)}", ""]
    body = [fence_line(f"{sign} {text}") for sign, text in action.bounded_lines()]
    fence = fence_for(body)
    lines += [fence + "diff", *body, fence, ""]
    return lines


def _quiet(parents: list[ParentResult]) -> str:
    lines = [
        "",
        f"<details><summary>{plural(len(parents), 'parent')} in sync</summary>",
        "",
        "| Parent | Mode | Hooks |",
        "|:--|:--|:--|",
    ]
    for p in parents:
        hooks = "; ".join(
            f"{h.hook} {h.outcome.value} {ms(h.duration):g} ms ({h.target})" for h in p.hooks
        )
        lines.append(f"| {_md(p.parent)} | {_md(p.mode)} | {_md(hooks)} |")
    lines += ["", "</details>", ""]
    return "\n".join(lines)


# -- escaping ------------------------------------------------------------------------------

ITEM_CHARS = 2_000  # of one free text (an error, a hook's error, a wait): each is cut alone


def _md(text: str) -> str:
    """Free text as literal Markdown (one line; `markdown_text.inline`), cut to ITEM_CHARS."""
    return inline(text, ITEM_CHARS)


def _html(text: str) -> str:
    return html_text(text, ITEM_CHARS)
