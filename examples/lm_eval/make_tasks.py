"""Write the lm_eval example's two task data files from the LLM example's held-out copy strings.

The strings are ``examples/llm/data/copy_test.jsonl`` (``{"prompt": "40271>", "answer": "40271"}``), which
``examples/llm/build.py`` keeps out of training, so both tasks measure copying, not recall:

* ``tasks/copy_gen.jsonl``: the rows as they are, for the ``generate_until`` task;
* ``tasks/copy_mc.jsonl``: the prompt and four choices, the right copy and three near misses (one digit changed,
  one digit dropped, two digits swapped), in a seeded order, for the ``multiple_choice`` task.

The dropped digit is never one of the trailing run of equal digits (the last ``0`` or either ``0`` of ``09100``): that
choice would be a prefix of the right copy, and a prefix's log-likelihood is at least the copy's own (lm-eval scores
the choice's tokens, not the end of the text after them), so ``acc`` would count the item wrong however well the
model copies. Strings whose digits are all the same (no swap changes them) are left out of the multiple-choice file.

Run: ``python examples/lm_eval/make_tasks.py`` (rewrites both files; the same seed gives the same bytes), or
``--check`` to verify that the shipped files match.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent / "llm" / "data" / "copy_test.jsonl"
TASKS = HERE / "tasks"
SEED = 0
DIGITS = "0123456789"


def changed(digits: str, rng: random.Random) -> str:
    at = rng.randrange(len(digits))
    return digits[:at] + rng.choice(DIGITS.replace(digits[at], "")) + digits[at + 1 :]


def dropped(digits: str, rng: random.Random) -> str:
    """One digit left out, never one of the trailing run of equal digits (that would leave a prefix)."""
    run = len(digits) - len(digits.rstrip(digits[-1]))
    at = rng.randrange(len(digits) - run)
    return digits[:at] + digits[at + 1 :]


def swapped(digits: str, rng: random.Random) -> str | None:
    pairs = [(i, j) for i in range(len(digits)) for j in range(i + 1, len(digits)) if digits[i] != digits[j]]
    if not pairs:
        return None
    i, j = rng.choice(pairs)
    out = list(digits)
    out[i], out[j] = out[j], out[i]
    return "".join(out)


def mc_row(prompt: str, answer: str, rng: random.Random) -> dict[str, object] | None:
    swap = swapped(answer, rng)
    if swap is None:
        return None
    choices = [answer, changed(answer, rng), dropped(answer, rng), swap]
    assert len(set(choices)) == 4, choices
    rng.shuffle(choices)
    return {"prompt": prompt, "choices": choices, "answer": choices.index(answer)}


def rows() -> dict[str, list[dict[str, object]]]:
    source = [json.loads(line) for line in SOURCE.read_text().splitlines() if line.strip()]
    rng = random.Random(SEED)
    mc = [mc_row(r["prompt"], r["answer"], rng) for r in source]
    return {
        "copy_gen.jsonl": [{"prompt": r["prompt"], "answer": r["answer"]} for r in source],
        "copy_mc.jsonl": [r for r in mc if r is not None],
    }


def text(lines: list[dict[str, object]]) -> str:
    return "".join(json.dumps(row) + "\n" for row in lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="verify the shipped files instead of writing them")
    args = parser.parse_args(argv)
    if not SOURCE.is_file():
        sys.exit(f"make_tasks.py: {SOURCE} is missing (it ships with the repository; build.py rewrites it)")
    for name, lines in rows().items():
        path = TASKS / name
        if args.check:
            if not path.is_file() or path.read_text() != text(lines):
                sys.exit(f"make_tasks.py: {path} differs from what the script writes; run it without --check")
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text(lines))
        print(f"wrote {path} ({len(lines)} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
