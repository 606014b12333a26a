"""Runs of kernel calls that repeat with offsets moving by a fixed step each round: a tiled stage's bands
(codegen/tiling.py) call the same kernels band after band, a row further into the tensors each time.
The run function emits such a run as a loop over rounds instead of one call site per call.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

MAX_PERIOD = 256   # the most calls in one round the search tries


@dataclass(frozen=True)
class Repeat:
    """Calls start .. start + period × rounds − 1: round r's call j is call start + j with each argument's
    offset moved by r × steps[j][k]."""

    start: int
    period: int
    rounds: int
    steps: tuple[tuple[int, ...], ...]

    @property
    def saved(self) -> int:
        return self.period * (self.rounds - 1)


def find_repeats(keys: Sequence[Hashable], offsets: Sequence[tuple[int, ...]],
                 max_period: int = MAX_PERIOD) -> list[int | Repeat]:
    """The calls (`keys`: what must be equal, the function and the arguments' bases; `offsets`: the
    arguments' offsets) in order as single calls (their index) and Repeats, greedily the one saving the
    most call sites at each place (the shortest round among equals)."""
    out: list[int | Repeat] = []
    i = 0
    while i < len(keys):
        best = None
        for period in range(1, min(max_period, (len(keys) - i) // 2) + 1):
            repeat = _repeat(keys, offsets, i, period)
            if repeat is not None and (best is None or repeat.saved > best.saved):
                best = repeat
        out.append(i if best is None else best)
        i += 1 if best is None else best.period * best.rounds
    return out


def _repeat(keys: Sequence[Hashable], offsets: Sequence[tuple[int, ...]], start: int, period: int) -> Repeat | None:
    """The longest run of rounds of `period` calls from `start`, at least two, or None."""
    round_one = range(start, start + period)
    if any(keys[j + period] != keys[j] for j in round_one):
        return None
    steps = tuple(tuple(b - a for a, b in zip(offsets[j], offsets[j + period])) for j in round_one)
    rounds = 2
    while start + (rounds + 1) * period <= len(keys) and all(
            keys[j + rounds * period] == keys[j]
            and offsets[j + rounds * period] == tuple(a + rounds * s for a, s in zip(offsets[j], steps[j - start]))
            for j in round_one):
        rounds += 1
    return Repeat(start, period, rounds, steps)
