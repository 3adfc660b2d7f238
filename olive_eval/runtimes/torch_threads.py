"""torch's intra-op thread count for one model's calls (its ``threads`` setting).

torch's default count ignores the machine's load, so on a busy CPU its threads oversubscribe the cores; and a
count changed between the pass and the timing phase (by another model, a user's script) would time one thing and
score another. A torch-based model (``PyTorchModel``, ``HfModel``) therefore runs its pass and its timing under its
own count, set around the calls and restored afterwards, and records it in results.json. A ``PythonModel`` has no
such setting: olive-eval cannot know whether its object runs torch; its loader may call ``torch.set_num_threads``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pydantic import Field

from olive_eval.lazy import LazyModule

torch = LazyModule("torch")


def threads_field() -> Any:
    """The ``threads`` key of a torch-based model's config."""
    return Field(
        None,
        ge=1,
        description="torch's intra-op threads (torch.set_num_threads) for this model's pass and timing, restored "
        "afterwards; default: the cores this process may use (os.sched_getaffinity).",
    )


@contextmanager
def torch_threads(count: int) -> Iterator[None]:
    """torch's intra-op thread count set to ``count`` for the block, the previous one restored afterwards; nothing
    is set when it already is ``count`` (a block nested in another of the same count costs nothing)."""
    before = torch.get_num_threads()
    if before != count:
        torch.set_num_threads(count)
    try:
        yield
    finally:
        if before != count:
            torch.set_num_threads(before)
