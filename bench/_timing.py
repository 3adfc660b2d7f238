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
