"""An object's diff lines within a size, cut so that no part of it can push another out of view.

The lines are YAML (a created or deleted object) or `path: value` entries (a changed one), each
after its sign (`+ `, `- `). Cut from the end, a long `metadata.annotations` would hide the
`roleRef` and `subjects` after it: instead the room is shared between the parts at each level
of indentation (the top-level fields, then the keys and list items inside a part that is still
too large), each part getting what it needs up to an equal share of what the smaller ones leave.
A part that does not fit whole keeps its first lines, and a line in its place says how many
more are not shown."""

from __future__ import annotations

from reconcile.report.markdown_text import cut, size

_MARKER = 64  # room kept for a line saying what is not shown
_SMALLEST = 2 * _MARKER  # the least a part is given before parts are left out whole


def fit(lines: list[str], budget: int) -> tuple[list[str], bool]:
    """`lines` within `budget` characters (a line break each), and whether any was cut."""
    if _total(lines) <= budget:
        return lines, False
    out = _fit(lines, budget)
    if _total(out) > budget:  # markers' rounding: cut from the end as a last resort
        while out and _total(out) + _MARKER > budget:
            out.pop()
        out.append(_marker(lines[0], len(lines) - len(out), 0))
    return out, True


def _fit(lines: list[str], budget: int) -> list[str]:
    if _total(lines) <= budget:
        return lines
    if len(lines) == 1 or budget < _SMALLEST:
        first = cut(lines[0], max(24, budget - _MARKER - 1))
        return [first, *([_marker(lines[0], len(lines) - 1)] if len(lines) > 1 else [])]
    groups = _groups(lines)
    if len(groups) == 1:  # one entry and what is under it
        head = cut(lines[0], budget // 4)
        return [head, *_fit(lines[1:], budget - size(head) - 1)]
    out: list[str] = []
    shares = _shares([_total(g) for g in groups], budget)
    for index, (group, share) in enumerate(zip(groups, shares, strict=True)):
        if share == 0:  # too many parts: the rest are counted, not shown
            rest = sum(len(g) for g in groups[index:])
            out.append(_marker(group[0], rest, 0))
            break
        out += _fit(group, share)
    return out


def _groups(lines: list[str]) -> list[list[str]]:
    """The lines split where a line is at their least indentation (a list item, `- `, counts
    as one deeper than its key, as YAML writes lists under a key without indenting them)."""
    least = min(_indent(line) for line in lines)
    groups: list[list[str]] = []
    for line in lines:
        if _indent(line) <= least or not groups:
            groups.append([line])
        else:
            groups[-1].append(line)
    return groups


def _indent(line: str) -> int:
    text = line[2:]  # after the sign
    stripped = text.lstrip(" ")
    return len(text) - len(stripped) + (1 if stripped.startswith("- ") else 0)


def _shares(sizes: list[int], budget: int) -> list[int]:
    """Each part's room: what it needs, up to an equal share of what the smaller parts leave;
    0 for the parts past those that can be given `_SMALLEST` (one marker counts them)."""
    if len(sizes) * _SMALLEST > budget:
        fits = max(1, (budget - _MARKER) // _SMALLEST)
        return [budget // (fits + 1)] * fits + [0] * (len(sizes) - fits)
    shares = [0] * len(sizes)
    left, waiting = budget, sorted(range(len(sizes)), key=lambda i: sizes[i])
    while waiting:
        fair = left // len(waiting)
        index = waiting[0]
        if sizes[index] <= fair:
            shares[index] = sizes[index]
            left -= sizes[index]
            waiting.pop(0)
            continue
        for index in waiting:
            shares[index] = fair
        break
    return shares


def _marker(like: str, lines: int, deeper: int = 2) -> str:
    indent = " " * (_indent(like) + deeper)
    return (
        f"{like[:1] or ' '} {indent}… {lines} more line{'s' if lines != 1 else ''} not shown here"
    )


def _total(lines: list[str]) -> int:
    return sum(size(line) + 1 for line in lines)
