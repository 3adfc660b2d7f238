"""A deterministic scripted judge: it reads the prompt like a model would, and answers from what the test data
spells out.

* Extraction prompts ("You split a text into its statements / claims / opinions"): the items are the text's
  pieces between ``|``; an empty text has none. ``#bad`` anywhere in a prompt makes the reply prose (unparseable),
  ``#empty`` an empty reply, ``#boom`` raises, ``#number`` returns 42 (not text), ``#slow`` sleeps 0.5 s.
* Verdict prompts: the items are the JSON list after the last ``(a JSON list):``; an item is "yes" when it contains
  ``+`` and "no" otherwise, except under ``support`` prompts, where an item is "yes" when the prompt's text holds it (a
  prediction statement in the reference, a reference statement in the prediction).
* Usefulness prompts (context precision): a context is useful when it holds the expected answer's text.
* Coherence and criteria prompts: the score is the digit after ``coherence=`` in the summary (the response).
"""

from __future__ import annotations

import json
import re
import time

CALLS: list[str] = []
EXTRACT = re.compile(r"You split a text into its (\w+)\.")


def _text(prompt: str, label: str) -> str:
    return prompt.split(f"{label}:\n", 1)[1].split("\n\n", 1)[0]


def judge(prompt: str) -> object:
    CALLS.append(prompt)
    kind = EXTRACT.search(prompt)
    if "#boom" in prompt:
        raise ValueError("the judge broke on purpose")
    if "#number" in prompt:
        return 42
    if "#slow" in prompt:
        time.sleep(0.5)
    if "#bad" in prompt:
        return "Sure! Here are the verdicts: yes, no."
    if "#empty" in prompt:
        return "  "
    if kind:
        items = [piece.strip() for piece in _text(prompt, "Text").split("|") if piece.strip()]
        return json.dumps({kind.group(1): items})
    if '{"score": N}' in prompt:  # coherence of a summary, or a criteria prompt's response
        label = "Summary" if "Summary:\n" in prompt else "Response"
        return json.dumps({"score": int(re.search(r"coherence=(\d)", _text(prompt, label)).group(1))})
    items = json.loads(prompt.rsplit("(a JSON list):\n", 1)[1].split("\n\n", 1)[0])
    if "useful to arrive at the expected answer" in prompt:
        answer = _text(prompt, "Expected answer")
        return json.dumps({"verdicts": ["yes" if answer in item else "no" for item in items]})
    if "say whether the text supports it" in prompt:
        reference = _text(prompt, "Text")
        return json.dumps({"verdicts": ["yes" if item in reference else "no" for item in items]})
    return "```json\n" + json.dumps({"verdicts": ["yes" if "+" in item else "no" for item in items]}) + "\n```"


def judge_batch(prompts: list[str]) -> list[object]:
    CALLS.append(f"batch of {len(prompts)}")
    return [judge(p) for p in prompts]
