"""The speech example's recognizer: pocketsphinx as an olive-eval ``PythonModel``.

``load_transcriber(model_path)`` reads decoder settings from a JSON file (``decoders/<name>.json``: pocketsphinx
``Config`` keys such as ``beam``, ``wbeam``, ``pbeam``, ``maxhmmpf``, ``fwdflat``) and returns a
:class:`Transcriber`. Acoustic model and pronunciation dictionary are the US English ones inside the
pocketsphinx wheel (the dictionary cut down to the words used). The language model is a uniform unigram over the example's vocabulary (the words of
``make_clips.SENTENCES``), written to a temporary file at load time: a closed-vocabulary task, as in
command-and-control recognition. It knows which words may occur, not in which order.
"""

from __future__ import annotations

import importlib.util
import json
import math
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
SAMPLE_RATE = 16000  # the rate of pocketsphinx's en-us acoustic model


def vocabulary() -> list[str]:
    spec = importlib.util.spec_from_file_location("speech_make_clips", HERE / "make_clips.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return sorted({word for sentence in module.SENTENCES for word in sentence.split()})


def write_unigram_lm(words: list[str], path: Path) -> Path:
    """An ARPA file giving every word (and the sentence end) the same probability."""
    log_p = -math.log10(len(words) + 1)
    lines = ["\\data\\", f"ngram 1={len(words) + 2}", "", "\\1-grams:", f"{log_p:.4f} </s>", "-99 <s>"]
    lines += [f"{log_p:.4f} {word}" for word in words]
    path.write_text("\n".join([*lines, "", "\\end\\", ""]))
    return path


def write_dictionary(words: list[str], full: Path, path: Path) -> Path:
    """The entries of the wheel's CMU dictionary for ``words`` (alternates ``word(2)`` included): loading
    135,000 entries would cost each model a few seconds."""
    wanted = set(words)
    with full.open(encoding="utf-8") as source:
        entries = [line for line in source if line.split(" ", 1)[0].split("(", 1)[0] in wanted]
    missing = wanted - {line.split(" ", 1)[0].split("(", 1)[0] for line in entries}
    if missing:
        raise ValueError(f"words missing from the CMU dictionary: {', '.join(sorted(missing))}")
    path.write_text("".join(entries), encoding="utf-8")
    return path


class Transcriber:
    """Decodes each waveform of a batch with one pocketsphinx ``Decoder``."""

    def __init__(self, settings: dict[str, Any]) -> None:
        from pocketsphinx import Decoder, get_model_path

        self._folder = tempfile.TemporaryDirectory(prefix="olive_eval_speech_")
        words, folder = vocabulary(), Path(self._folder.name)
        model = Path(get_model_path()) / "en-us"
        self.decoder = Decoder(
            hmm=str(model / "en-us"),
            dict=str(write_dictionary(words, model / "cmudict-en-us.dict", folder / "vocabulary.dict")),
            lm=str(write_unigram_lm(words, folder / "vocabulary.lm")),
            loglevel="FATAL",
            **settings,
        )

    def predict(self, batch: dict[str, Any]) -> list[str]:
        out = []
        for clip, rate in zip(batch["audio"], batch["sampling_rate"], strict=True):
            if int(rate) != SAMPLE_RATE:
                raise ValueError(
                    f"pocketsphinx's en-us model takes {SAMPLE_RATE} Hz audio, got {int(rate)} Hz: set "
                    f"pre_process_data_config.sample_rate to {SAMPLE_RATE}"
                )
            pcm = (np.clip(clip, -1.0, 1.0) * 32767).astype(np.int16).tobytes()
            self.decoder.start_utt()
            self.decoder.process_raw(pcm, full_utt=True)
            self.decoder.end_utt()
            hypothesis = self.decoder.hyp()
            out.append(hypothesis.hypstr if hypothesis is not None else "")
        return out


def load_transcriber(model_path: str | None) -> Transcriber:
    """``model_path``: a settings file, or the name of one in ``decoders/`` ("default", "narrow_beams", ...)."""
    name = model_path or "default"
    path = Path(name) if Path(name).is_file() else HERE / "decoders" / f"{name}.json"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in (HERE / "decoders").glob("*.json")))
        raise ValueError(f"no decoder settings '{name}': give a JSON file or one of {known}")
    return Transcriber(json.loads(path.read_text()))
