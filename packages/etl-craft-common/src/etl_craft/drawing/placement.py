"""Vertical positions: each layer stacked in its order, then pulled toward its neighbours.

A unit is a node or a dummy point of a long edge. Within a layer the order is fixed; each pass
moves every unit as close as it can to the mean height of the rows it connects to, without
overlapping, by isotonic regression (pool adjacent violators), so a pass is linear per layer.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

NODE_GAP = 16.0
DUMMY_GAP = 6.0

# One hop of an edge between adjacent layers: the upper unit, the row's offset from its top,
# the lower unit (one layer later) and the row's offset from its top.
Segment = tuple[int, float, int, float]


def separations(
    layer: Sequence[int], heights: Sequence[float], dummy: Sequence[bool]
) -> list[float]:
    """The distance from each unit's top to the next one's top in `layer`."""
    return [
        heights[u] + (NODE_GAP if not dummy[u] and not dummy[v] else DUMMY_GAP)
        for u, v in pairwise(layer)
    ]


def stacked(layer: Sequence[int], steps: Sequence[float]) -> dict[int, float]:
    tops, y = {}, 0.0
    for i, unit in enumerate(layer):
        tops[unit] = y
        if i < len(steps):
            y += steps[i]
    return tops


def pack(desired: Sequence[float], steps: Sequence[float]) -> list[float]:
    """Tops as close to `desired` (least squares) as the minimal `steps` between them allow."""
    offsets = [0.0]
    for step in steps:
        offsets.append(offsets[-1] + step)
    blocks: list[list[float]] = []  # [sum, count] of pooled shifted targets
    for target, offset in zip(desired, offsets, strict=True):
        blocks.append([target - offset, 1.0])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            total, count = blocks.pop()
            blocks[-1][0] += total
            blocks[-1][1] += count
    shifts = [total / count for total, count in blocks for _ in range(int(count))]
    return [shift + offset for shift, offset in zip(shifts, offsets, strict=True)]


def place(
    order: Sequence[Sequence[int]],
    segments: Sequence[Segment],
    heights: Sequence[float],
    dummy: Sequence[bool],
    rounds: int = 4,
) -> dict[int, float]:
    """The top of every unit, the highest at 0."""
    neighbours: dict[int, list[tuple[int, float, float]]] = {}
    for upper, upper_offset, lower, lower_offset in segments:
        neighbours.setdefault(upper, []).append((lower, lower_offset, upper_offset))
        neighbours.setdefault(lower, []).append((upper, upper_offset, lower_offset))
    steps = [separations(layer, heights, dummy) for layer in order]
    tops: dict[int, float] = {}
    for layer, layer_steps in zip(order, steps, strict=True):
        tops.update(stacked(layer, layer_steps))
    sweep = list(range(len(order)))
    for _ in range(rounds):
        for index in sweep + sweep[::-1]:
            layer = order[index]
            desired = [_wanted(unit, tops, neighbours.get(unit, ())) for unit in layer]
            tops.update(zip(layer, pack(desired, steps[index]), strict=True))
    lowest = min(tops.values(), default=0.0)
    return {unit: top - lowest for unit, top in tops.items()}


def _wanted(unit: int, tops: dict[int, float], links: Sequence[tuple[int, float, float]]) -> float:
    if not links:
        return tops[unit]
    return sum(tops[other] + other_offset - own for other, other_offset, own in links) / len(links)
