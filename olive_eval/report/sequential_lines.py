"""The console table's words for a sequential run: the examples each candidate used, and why it stopped."""

from __future__ import annotations

from olive_eval.records.sequential import SequentialPass


def examples_used(passes: dict[str, SequentialPass]) -> str:
    """``1,200 of 10,000`` (summed over the candidate's passes); ``-`` for a model run in full (the baseline)."""
    if not passes:
        return "-"
    used, total = sum(p.examples for p in passes.values()), sum(p.total for p in passes.values())
    return f"{used:,} of {total:,}" + (" +all" if any(p.finished for p in passes.values()) else "")


def sequential_lines(name: str, passes: dict[str, SequentialPass]) -> list[str]:
    """One line per pass: decided after how many examples, stopped by a rival, or why it ran in full."""
    out = []
    for data_config, p in passes.items():
        where = f"SEQUENTIAL {name} on '{data_config}':"
        decided = {key: d for key, d in p.goals.items() if d.state != "open"}
        if p.full is not None:
            out.append(f"{where} ran on all {p.total:,} examples: {p.full}")
        elif p.stopped is not None and p.stopped.startswith("dominated"):
            out.append(f"{where} stopped after {p.examples:,} of {p.total:,}, {p.stopped}")
        elif decided:
            at = max(d.examples for d in decided.values())
            states = ", ".join(f"{key} {d.state}" for key, d in decided.items())
            out.append(f"{where} decided after {at:,} of {p.total:,} ({states})")
        else:
            out.append(f"{where} undecided after all {p.total:,} examples (goals checked as in a full run)")
        if p.finished:
            out.append(f"{where} evaluated again on all {p.total:,} examples (finish: best)")
    return out
