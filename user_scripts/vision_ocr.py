"""Tesseract as a PythonModel: reads each batch of document images in one ``tesseract`` process and answers.

``model_path`` holds the reader's settings, e.g. ``"psm=3,scale=1"``: the page segmentation mode (3: full layout
analysis, Tesseract's default; 6: assume one uniform block of text), the factor the image is resized by before
OCR, and ``fast=1`` for Tesseract's quick settings (no inverted-text pass, no dictionaries). The instruction
"Read the document." gets the page's text; "What is the <field>?" gets the rest of the line that starts with the
field's name ("title": the first line). Tesseract runs with ``OMP_THREAD_LIMIT=1``: its OpenMP threads spin, and
on a shared 2-core machine several of them made a batch 5x slower in wall time than one thread.

A batch that Tesseract cannot read is retried one image at a time; an image that still fails becomes an empty
prediction with a warning (counted wrong), as Olive treats a failed generation.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

READ = "Read the document."
_QUESTION = re.compile(r"what is the (.+?)\??", re.IGNORECASE)


def parse_settings(spec: str | None) -> dict[str, float]:
    settings = {"psm": 3.0, "scale": 1.0, "fast": 0.0}
    for part in filter(None, (spec or "").split(",")):
        key, _, value = part.partition("=")
        if key.strip() not in settings:
            raise ValueError(f"unknown reader setting '{key}' in {spec!r}; known: {', '.join(settings)}")
        settings[key.strip()] = float(value)
    return settings


class TesseractReader:
    def __init__(self, spec: str | None) -> None:
        self.settings = parse_settings(spec)
        self.binary = shutil.which("tesseract")
        if self.binary is None:
            raise RuntimeError("the tesseract binary is not on PATH (Debian: apt-get install tesseract-ocr)")
        self.options = ["--psm", str(int(self.settings["psm"]))]
        if self.settings["fast"]:
            self.options += ["-c", "tessedit_do_invert=0", "-c", "load_system_dawg=0", "-c", "load_freq_dawg=0"]
        self.env = {**os.environ, "OMP_THREAD_LIMIT": "1"}

    def __call__(self, batch: dict[str, Any]) -> list[str | None]:
        """One answer per example; None where Tesseract could not read the image (olive-eval scores it as an
        empty prediction and counts it)."""
        texts = self.read(batch["image"])
        return [None if t is None else answer(q, t) for q, t in zip(batch["question"], texts, strict=True)]

    def read(self, images: list[Any]) -> list[str | None]:
        scale = self.settings["scale"]
        with tempfile.TemporaryDirectory() as tmp:
            paths = []
            for i, image in enumerate(images):
                if scale != 1:
                    size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
                    image = image.resize(size, resample=3)  # bicubic
                paths.append(Path(tmp) / f"{i}.png")
                image.save(paths[-1])
            pages = self._run(paths, Path(tmp))
            if pages is None or len(pages) != len(paths):
                pages = [self._one(p, Path(tmp)) for p in paths]
        return pages

    def _run(self, paths: list[Path], tmp: Path) -> list[str] | None:
        listing = tmp / "pages.txt"
        listing.write_text("".join(f"{p}\n" for p in paths))
        done = subprocess.run(
            [self.binary, str(listing), "stdout", *self.options], capture_output=True, env=self.env, check=False
        )
        if done.returncode != 0:
            return None
        return done.stdout.decode("utf-8", "replace").split("\f")[: len(paths)]

    def _one(self, path: Path, tmp: Path) -> str | None:
        pages = self._run([path], tmp)
        return None if pages is None or len(pages) != 1 else pages[0]


def answer(question: str, text: str) -> str:
    lines = [" ".join(line.split()) for line in text.splitlines()]
    lines = [line for line in lines if line]
    if question.strip() == READ:
        return "\n".join(lines)
    match = _QUESTION.fullmatch(question.strip())
    if match is None or not lines:
        return ""
    field = match.group(1).strip().lower()
    if field == "title":
        return lines[0]
    for line in lines:
        if line.lower().startswith(field):
            return line[len(field) :].lstrip(" :.").strip()
    return ""


def load_reader(model_path: str | None) -> TesseractReader:
    return TesseractReader(model_path)
