"""A chart reader as a PythonModel: Tesseract finds the words of each bar chart with their positions, and the
answer to "What is the value of <category>?" is the number printed nearest above that category's name.

``model_path`` holds the settings, e.g. ``"scale=1"`` (the factor the chart is resized by before OCR) and
``psm=11`` (sparse text: Tesseract's mode for labels scattered over a figure). A batch of charts is read by one
``tesseract`` process (TSV output, one page per chart), with ``OMP_THREAD_LIMIT=1`` (see vision_ocr.py). A chart
that cannot be read, or a category that is not found, gives an empty prediction (counted wrong).
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

_NUMBER = re.compile(r"^-?\d[\d,]*(\.\d+)?%?$")
_QUESTION = re.compile(r"what is the value of (.+?)\??", re.IGNORECASE)


class ChartReader:
    def __init__(self, spec: str | None) -> None:
        self.settings = {"scale": 1.0, "psm": 11.0}
        for part in filter(None, (spec or "").split(",")):
            key, _, value = part.partition("=")
            if key not in self.settings:
                raise ValueError(f"unknown reader setting '{key}' in {spec!r}; known: {', '.join(self.settings)}")
            self.settings[key] = float(value)
        self.binary = shutil.which("tesseract")
        if self.binary is None:
            raise RuntimeError("the tesseract binary is not on PATH (Debian: apt-get install tesseract-ocr)")

    def __call__(self, batch: dict[str, Any]) -> list[str]:
        pages = self.words(batch["image"])
        return [answer(q, words) for q, words in zip(batch["question"], pages, strict=True)]

    def words(self, images: list[Any]) -> list[list[tuple[str, float, float]]]:
        """Per chart, its words as (text, x centre, y centre) in the original image's pixels."""
        scale = self.settings["scale"]
        pages: list[list[tuple[str, float, float]]] = [[] for _ in images]
        with tempfile.TemporaryDirectory() as tmp:
            listing = Path(tmp) / "charts.txt"
            paths = []
            for i, image in enumerate(images):
                if scale != 1:
                    image = image.resize((round(image.width * scale), round(image.height * scale)), resample=3)
                paths.append(Path(tmp) / f"{i}.png")
                image.save(paths[-1])
            listing.write_text("".join(f"{p}\n" for p in paths))
            done = subprocess.run(
                [self.binary, str(listing), "stdout", "--psm", str(int(self.settings["psm"])), "tsv"],
                capture_output=True,
                env={**os.environ, "OMP_THREAD_LIMIT": "1"},
                check=False,
            )
        if done.returncode != 0:
            return pages
        rows = csv.DictReader(done.stdout.decode("utf-8", "replace").splitlines(), delimiter="\t", quoting=3)
        for row in rows:
            text = (row.get("text") or "").strip()
            if not text or row.get("level") != "5":
                continue
            page = int(row["page_num"]) - 1
            x = (int(row["left"]) + int(row["width"]) / 2) / scale
            y = (int(row["top"]) + int(row["height"]) / 2) / scale
            if 0 <= page < len(pages):
                pages[page].append((text, x, y))
        return pages


def answer(question: str, words: list[tuple[str, float, float]]) -> str:
    match = _QUESTION.fullmatch(question.strip())
    if match is None:
        return ""
    name = match.group(1).strip().lower()
    found = [(x, y) for text, x, y in words if text.strip(".,:;").lower() == name]
    if not found:
        return ""
    x, y = found[0]
    numbers = [(abs(nx - x), text) for text, nx, ny in words if _NUMBER.match(text) and ny < y]
    return min(numbers)[1].replace(",", "") if numbers else ""


def load_chart_reader(model_path: str | None) -> ChartReader:
    return ChartReader(model_path)
