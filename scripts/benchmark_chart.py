"""The benchmark's chart: wall time against parents, one line per way of doing the work, both
axes logarithmic, as a standalone SVG (no plotting library: a handful of lines and labels)."""

from __future__ import annotations

import math
from html import escape

WIDTH, HEIGHT = 760, 460
LEFT, RIGHT, TOP, BOTTOM = 70, 250, 50, 60  # margins: the legend sits on the right
# Distinct in colour and in dash, so the lines read apart in grey too.
STYLES = [
    ("#1f77b4", ""),
    ("#1f77b4", "6 4"),
    ("#d62728", ""),
    ("#d62728", "6 4"),
    ("#2ca02c", ""),
    ("#2ca02c", "6 4"),
    ("#7f7f7f", "2 3"),
    ("#9467bd", "2 3"),
]


def _decades(low: float, high: float) -> list[float]:
    first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
    return [10.0**e for e in range(first, last + 1)]


def _ticks(low: float, high: float) -> list[float]:
    """1, 2 and 5 of each decade, within the range."""
    ticks = [d * m for d in _decades(low, high) for m in (1, 2, 5)]
    return [t for t in ticks if low <= t <= high]


def _label(value: float) -> str:
    return f"{value:,.0f}" if value >= 1 else f"{value:g}"


def chart(title: str, subtitle: str, series: dict[str, dict[int, float]]) -> str:
    """`series`: a line's name -> {parents: seconds}."""
    points = [(x, y) for line in series.values() for x, y in line.items() if y > 0]
    if not points:
        raise ValueError("nothing to draw")
    xs = [x for x, _ in points]
    ys = [y for _, y in points]
    x_low, x_high = _decades(min(xs), max(xs))[0], _decades(min(xs), max(xs))[-1]
    if x_low == x_high:
        x_high *= 10
    y_low, y_high = _decades(min(ys), max(ys))[0], _decades(min(ys), max(ys))[-1]
    if y_low == y_high:
        y_high *= 10
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def px(x: float) -> float:
        return LEFT + plot_w * math.log10(x / x_low) / math.log10(x_high / x_low)

    def py(y: float) -> float:
        return TOP + plot_h * (1 - math.log10(y / y_low) / math.log10(y_high / y_low))

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        f'<text x="{LEFT}" y="20" font-size="15" font-weight="bold">{escape(title)}</text>',
        f'<text x="{LEFT}" y="38" fill="#555">{escape(subtitle)}</text>',
    ]
    for tick in _ticks(x_low, x_high):
        x = px(tick)
        out.append(
            f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{TOP + plot_h}" stroke="#e5e5e5"/>'
        )
        out.append(
            f'<text x="{x:.1f}" y="{TOP + plot_h + 16}" text-anchor="middle">{_label(tick)}</text>'
        )
    for tick in _ticks(y_low, y_high):
        y = py(tick)
        out.append(
            f'<line x1="{LEFT}" y1="{y:.1f}" x2="{LEFT + plot_w}" y2="{y:.1f}" stroke="#e5e5e5"/>'
        )
        out.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{_label(tick)}</text>')
    out += [
        f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" '
        f'stroke="#333"/>',
        f'<text x="{LEFT + plot_w / 2}" y="{HEIGHT - 18}" text-anchor="middle">'
        "parents (5 ConfigMaps each)</text>",
        f'<text x="18" y="{TOP + plot_h / 2}" text-anchor="middle" '
        f'transform="rotate(-90 18 {TOP + plot_h / 2})">wall time (s)</text>',
    ]
    for index, (name, line) in enumerate(series.items()):
        colour, dash = STYLES[index % len(STYLES)]
        dashes = f' stroke-dasharray="{dash}"' if dash else ""
        coords = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in sorted(line.items()) if y > 0)
        out.append(
            f'<polyline points="{coords}" fill="none" stroke="{colour}" stroke-width="2"{dashes}/>'
        )
        for x, y in sorted(line.items()):
            if y > 0:
                out.append(
                    f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{colour}">'
                    f"<title>{escape(name)}: {x:,} parents, {y:.2f} s</title></circle>"
                )
        legend_y = TOP + 8 + index * 22
        legend_x = LEFT + plot_w + 16
        out.append(
            f'<line x1="{legend_x}" y1="{legend_y}" x2="{legend_x + 28}" y2="{legend_y}" '
            f'stroke="{colour}" stroke-width="2"{dashes}/>'
        )
        out.append(f'<text x="{legend_x + 34}" y="{legend_y + 4}">{escape(name)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
