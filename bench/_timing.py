"""Timing helpers the benches share."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def best_of(funcs: dict[str, Callable[[], Any]], repeat: int) -> tuple[dict[str, float], dict[str, Any]]:
    """Best wall time of each function over ``repeat`` rounds, run interleaved; and each one's result."""
    times = {name: float("inf") for name in funcs}
    results: dict[str, Any] = {}
    for _ in range(repeat):
        for name, func in funcs.items():
            start = time.perf_counter()
            results[name] = func()
            times[name] = min(times[name], time.perf_counter() - start)
    return times, results


def median_of(funcs: dict[str, Callable[[], Any]], repeat: int) -> tuple[dict[str, float], dict[str, Any]]:
    """Median wall time of each function over ``repeat`` rounds, run interleaved; and each one's result."""
    runs: dict[str, list[float]] = {name: [] for name in funcs}
    results: dict[str, Any] = {}
    for _ in range(repeat):
        for name, func in funcs.items():
            start = time.perf_counter()
            results[name] = func()
            runs[name].append(time.perf_counter() - start)
    return {name: sorted(t)[len(t) // 2] for name, t in runs.items()}, results
