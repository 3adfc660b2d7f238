"""lm-eval's ``onnxruntime-genai`` backend around a GenAI model olive-eval loaded (its providers, its session):
lm-eval's request logic as it is, on the run's model instead of a second copy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lm_eval.models.onnxruntime_genai import ONNXRuntimeGenAILM

from olive_eval.lm_eval.options import AdapterOptions
from olive_eval.lm_eval.python_lm import DEFAULT_MAX_GEN_TOKS


class LoadedGenAILM(ONNXRuntimeGenAILM):
    """Takes the loaded ``og.Model`` where lm-eval's backend would load one (``_load``)."""

    def __init__(self, og: Any, model: Any, folder: Path, options: AdapterOptions) -> None:
        self._loaded = (og, model)
        super().__init__(
            pretrained=str(folder),
            max_length=options.max_length,
            batch_size=1,  # lm-eval's GenAI backend scores one request at a time
            max_gen_toks=DEFAULT_MAX_GEN_TOKS,
        )

    def _load(self) -> None:
        self.og, self.model = self._loaded
