"""Crossing reduction: barycenter sweeps over the layers, keeping the order with fewest crossings.

Positions are heights in the stacked layer, so an edge from a table's fifth column weighs as
that row, not as the table's middle: ports take part in the ordering through their row offsets.
"""

from __future__ import annotations

from collections.abc import Sequence

from etl_craft.drawing.placement import Segment, separations, stacked

SWEEPS = 6
PATIENCE = 2  # sweeps without fewer crossings before giving up


def reduce_crossings(
    layers: Sequence[Sequence[int]],
    segments: Sequence[Segment],
    heights: Sequence[float],
    dummy: Sequence[bool],
) -> list[list[int]]:
    """`layers` reordered; `segments` run between adjacent layers, upper to lower."""
    order = [list(layer) for layer in layers]
    from_above: dict[int, list[tuple[int, float, float]]] = {}
    from_below: dict[int, list[tuple[int, float, float]]] = {}
    for upper, upper_offset, lower, lower_offset in segments:
        from_above.setdefault(lower, []).append((upper, upper_offset, lower_offset))
        from_below.setdefault(upper, []).append((lower, lower_offset, upper_offset))
    best = [list(layer) for layer in order]
    fewest = count_crossings(order, segments, heights, dummy)
    idle = 0
    for _ in range(SWEEPS):
        if fewest == 0 or idle == PATIENCE:
            break
        for index in range(1, len(order)):
            order[index] = _sorted(order[index], order[index - 1], from_above, heights, dummy)
        for index in range(len(order) - 2, -1, -1):
            order[index] = _sorted(order[index], order[index + 1], from_below, heights, dummy)
        crossings = count_crossings(order, segments, heights, dummy)
        idle += 1
        if crossings < fewest:
            best, fewest, idle = [list(layer) for layer in order], crossings, 0
    return best


def _sorted(
    layer: list[int],
    fixed: list[int],
    links: dict[int, list[tuple[int, float, float]]],
    heights: Sequence[float],
    dummy: Sequence[bool],
) -> list[int]:
    fixed_tops = stacked(fixed, separations(fixed, heights, dummy))
    own_tops = stacked(layer, separations(layer, heights, dummy))

    def centre(unit: int) -> float:
        found = links.get(unit)
        if not found:
            return own_tops[unit] + heights[unit] / 2
        top = sum(fixed_tops[other] + offset - own for other, offset, own in found) / len(found)
        return top + heights[unit] / 2

    keyed = sorted((centre(unit), position, unit) for position, unit in enumerate(layer))
    return [unit for _, _, unit in keyed]


def count_crossings(
    order: Sequence[Sequence[int]],
    segments: Sequence[Segment],
    heights: Sequence[float],
    dummy: Sequence[bool],
) -> int:
    """Pairs of segments between the same two layers whose rows come in opposite orders."""
    tops: dict[int, float] = {}
    layer_of: dict[int, int] = {}
    for index, layer in enumerate(order):
        tops.update(stacked(layer, separations(layer, heights, dummy)))
        layer_of.update(dict.fromkeys(layer, index))
    gaps: dict[int, list[tuple[float, float]]] = {}
    for upper, upper_offset, lower, lower_offset in segments:
        gaps.setdefault(layer_of[upper], []).append(
            (tops[upper] + upper_offset, tops[lower] + lower_offset)
        )
    return sum(_inversions([end for _, end in sorted(pairs)]) for pairs in gaps.values())


def _inversions(values: list[float]) -> int:
    """Pairs i < j with values[i] > values[j], with a Fenwick tree over the values' ranks."""
    ranks = {value: rank for rank, value in enumerate(sorted(set(values)), start=1)}
    tree = [0] * (len(ranks) + 1)
    count = 0
    for seen, value in enumerate(values):
        rank = ranks[value]
        at_most, i = 0, rank
        while i > 0:
            at_most += tree[i]
            i -= i & -i
        count += seen - at_most
        i = rank
        while i < len(tree):
            tree[i] += 1
            i += i & -i
    return count
