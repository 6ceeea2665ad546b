"""Line charts as SVG data, made on the server: each series becomes the ``points`` of a
``<polyline>`` in a fixed view box. Only numbers come out of here, so a chart cannot
carry markup; the template draws them."""

from __future__ import annotations

from collections.abc import Sequence

from attrs import frozen

WIDTH = 600
HEIGHT = 200
#: Points per series at most: a week of samples is thinned to this.
MAX_POINTS = 600


@frozen
class Series:
    """One line: its name (shown in the legend), its CSS class and its SVG points."""

    name: str
    css: str
    points: str
    last: float


@frozen
class Chart:
    """A chart over ``span`` seconds ending at ``end``, its highest value ``top``."""

    series: tuple[Series, ...]
    top: float
    span: float
    end: float
    width: int = WIDTH
    height: int = HEIGHT


def _thin(values: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    if len(values) <= MAX_POINTS:
        return list(values)
    step = len(values) / MAX_POINTS
    return [values[int(i * step)] for i in range(MAX_POINTS)] + [values[-1]]


def line_chart(lines: Sequence[tuple[str, str, Sequence[tuple[float, float]]]], end: float, span: float) -> Chart:
    """A chart of ``lines`` (name, CSS class, (time, value) pairs) over ``span`` seconds up to ``end``."""
    top = max((value for _, _, values in lines for _, value in values), default=0.0)
    scale = top if top > 0 else 1.0
    start = end - span
    made = []
    for name, css, values in lines:
        coords = [(round((t - start) / span * WIDTH, 1), round(HEIGHT - value / scale * HEIGHT, 1))
                  for t, value in _thin(values) if start <= t <= end]
        made.append(Series(name, css, " ".join(f"{x:g},{y:g}" for x, y in coords),
                           float(values[-1][1]) if values else 0.0))
    return Chart(tuple(made), float(top), float(span), float(end))
