"""Write ``data/documents.jsonl``: short documents, hand-labelled against four style rules.

Each document is written below with its violations as ``(span text, rule, explanation, correction)``; the span's
offsets are those of its first occurrence in the text, so the labels stay exact when a sentence is edited. Rules and their categories:

* ``passive voice`` (grammar): a passive construction where an active one reads better;
* ``spelling`` (spelling): a misspelt word;
* ``banned word`` (terminology): a word the style guide bans (utilize, leverage, synergy, very unique);
* ``wordiness`` (style): a phrase with a shorter equivalent (in order to, at this point in time, due to the fact that).

    python examples/violations/make_data.py     # rewrites data/documents.jsonl (deterministic)
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
CATEGORY = {"passive voice": "grammar", "spelling": "spelling", "banned word": "terminology", "wordiness": "style"}

P, S, B, W = "passive voice", "spelling", "banned word", "wordiness"

# (document, [(span, rule, explanation, correction), ...])
DOCUMENTS: list[tuple[str, list[tuple[str, str, str, str]]]] = [
    (
        "The report was written by the finance team.",
        [("was written by the finance team", P, "Passive voice hides who acts.", "the finance team wrote")],
    ),
    ("We will recieve the shipment on Monday.", [("recieve", S, "Misspelt word.", "receive")]),
    ("Our teams leverage shared tools every day.", [("leverage", B, "The style guide bans 'leverage'.", "use")]),
    ("In order to apply, fill in the form.", [("In order to", W, "Wordy phrase.", "To")]),
    (
        "The budget was approved by the board, and we can utilize it now.",
        [
            ("was approved by the board", P, "Passive voice hides who acts.", "the board approved"),
            ("utilize", B, "The style guide bans 'utilize'.", "use"),
        ],
    ),
    ("Please keep the two files seperate.", [("seperate", S, "Misspelt word.", "separate")]),
    (
        "This is a very unique opportunity for the whole team.",
        [("very unique", B, "'Unique' takes no degree; the guide bans 'very unique'.", "unique")],
    ),
    ("At this point in time we have no plans to move.", [("At this point in time", W, "Wordy phrase.", "Now")]),
    ("The meeting starts at nine and ends at ten.", []),
    ("The error occured twice during the upgrade.", [("occured", S, "Misspelt word.", "occurred")]),
    (
        "The servers were restarted by the night shift.",
        [("were restarted by the night shift", P, "Passive voice hides who acts.", "the night shift restarted")],
    ),
    (
        "Due to the fact that it rained, the match was cancelled.",
        [
            ("Due to the fact that", W, "Wordy phrase.", "Because"),
            ("was cancelled", P, "Passive voice hides who acts.", "they cancelled"),
        ],
    ),
    (
        "We definately need more synergy between the groups.",
        [
            ("definately", S, "Misspelt word.", "definitely"),
            ("synergy", B, "The style guide bans 'synergy'.", "cooperation"),
        ],
    ),
    ("Anna sent the invoice yesterday.", []),
    (
        "The new policy was announced in March.",
        [("was announced", P, "Passive voice hides who acts.", "management announced")],
    ),
    ("Teh results look promising so far.", [("Teh", S, "Misspelt word.", "The")]),
    (
        "We leverage data in order to decide faster.",
        [("leverage", B, "The style guide bans 'leverage'.", "use"), ("in order to", W, "Wordy phrase.", "to")],
    ),
    (
        "The garden is watered by a timer every morning.",
        [("is watered by a timer", P, "Passive voice hides who acts.", "a timer waters")],
    ),
    ("Please utilize the side entrance after six.", [("utilize", B, "The style guide bans 'utilize'.", "use")]),
    ("His adress changed last month.", [("adress", S, "Misspelt word.", "address")]),
    ("The printer on the third floor works again.", []),
    (
        "Tickets are sold at the door, and the hall is very unique.",
        [
            ("are sold at the door", P, "Passive voice hides who acts.", "we sell tickets at the door"),
            ("very unique", B, "'Unique' takes no degree; the guide bans 'very unique'.", "unique"),
        ],
    ),
    ("At this point in time the project is on hold.", [("At this point in time", W, "Wordy phrase.", "Now")]),
    ("We will arange a call next week.", [("arange", S, "Misspelt word.", "arrange")]),
    (
        "The contract was signed by both parties in May.",
        [("was signed by both parties", P, "Passive voice hides who acts.", "both parties signed")],
    ),
    (
        "Due to the fact that the road is closed, take the bus.",
        [("Due to the fact that", W, "Wordy phrase.", "Because")],
    ),
    ("Good synergy comes from clear goals.", [("synergy", B, "The style guide bans 'synergy'.", "cooperation")]),
    (
        "The keys were left on the desk.",
        [("were left on the desk", P, "Passive voice hides who acts.", "someone left the keys on the desk")],
    ),
    ("Our goverment contacts replied quickly.", [("goverment", S, "Misspelt word.", "government")]),
    ("She reads the minutes before every meeting.", []),
    (
        "In order to save time we utilize templates.",
        [("In order to", W, "Wordy phrase.", "To"), ("utilize", B, "The style guide bans 'utilize'.", "use")],
    ),
    (
        "The bridge was built in 1920 and is still used.",
        [
            ("was built in 1920", P, "Passive voice hides who acts.", "workers built the bridge in 1920"),
            ("is still used", P, "Passive voice hides who acts.", "people still use it"),
        ],
    ),
    ("I beleive the numbers are right.", [("beleive", S, "Misspelt word.", "believe")]),
    ("The office closes early on Fridays.", []),
    ("We can leverage the new API and the old one.", [("leverage", B, "The style guide bans 'leverage'.", "use")]),
    (
        "The samples were tested by an outside lab, which was very unique.",
        [
            ("were tested by an outside lab", P, "Passive voice hides who acts.", "an outside lab tested"),
            ("very unique", B, "'Unique' takes no degree; the guide bans 'very unique'.", "unique"),
        ],
    ),
    ("Untill Friday the shop opens at eight.", [("Untill", S, "Misspelt word.", "Until")]),
    (
        "At this point in time, we recieve ten orders a day.",
        [("At this point in time", W, "Wordy phrase.", "Now"), ("recieve", S, "Misspelt word.", "receive")],
    ),
    ("The train left on time.", []),
    (
        "All complaints are handled by the support desk.",
        [("are handled by the support desk", P, "Passive voice hides who acts.", "the support desk handles")],
    ),
]


def rows() -> list[dict]:
    out = []
    for i, (text, labels) in enumerate(DOCUMENTS):
        violations = []
        for span, rule, explanation, correction in labels:
            start = text.find(span)
            assert start >= 0, (i, span)
            violations.append(
                {
                    "span": [start, start + len(span)],
                    "rule": rule,
                    "category": CATEGORY[rule],
                    "explanation": explanation,
                    "correction": correction,
                }
            )
        out.append({"id": i, "text": text, "violations": violations})
    return out


def main() -> None:
    path = HERE / "data" / "documents.jsonl"
    path.parent.mkdir(exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows()))
    n = sum(len(r["violations"]) for r in rows())
    print(f"wrote {path.relative_to(HERE.parents[1])}: {len(DOCUMENTS)} documents, {n} violations")


if __name__ == "__main__":
    main()
