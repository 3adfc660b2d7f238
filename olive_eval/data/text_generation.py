"""Prompts for a causal LM (``text_generation_huggingface_pre_process``): tokenized through the chat template,
padded for generation, or the prompt's own tokens as references for perplexity.

Its own concept, as each task's pre-process is (speech, vqa, token classification): generation pads and
labels differently from the column and text components of ``data/preprocess.py``, which it shares only the
``PreProcess`` base and the row limit with.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from pydantic import Field

from olive_eval.data.arrow import table_columns
from olive_eval.data.batch import Columns
from olive_eval.data.components import ComponentParams, register_component
from olive_eval.data.prepared import PrepareContext, Prepared
from olive_eval.data.preprocess import PreProcess, check_columns, limited_tables
from olive_eval.data.sources import Source
from olive_eval.errors import EvaluationError


class TextGenerationParams(ComponentParams):
    """Prompts for a causal LM: the prompt column, the reference column, the chat template if there is one."""

    input_cols: list[str] = Field(default_factory=lambda: ["text"], description="The prompt column (one)")
    label_col: str | None = Field(
        None, description="Reference texts; without one, the prompt's tokens are (perplexity)"
    )
    model_name: str | None = None
    chat_template: bool = True
    system_prompt: str | None = None
    max_length: int | None = Field(None, ge=1)
    max_samples: int | None = Field(None, ge=1)
    trust_remote_code: bool = False
    task: str | None = None


@register_component("pre-process", "text_generation_huggingface_pre_process")
class TextGenerationPreProcess(PreProcess):
    """Prompts tokenized (through the chat template when the tokenizer has one), left-padded for generation;
    ``generated`` text is then compared with ``label_col``. Without a label column the token ids are the
    references, for perplexity, and batches are padded on the right: a real token then never sits after a pad,
    so its position and every token it is scored from are what the unpadded prompt gives (left padding would
    shift GPT-2's positions and score the first token from a pad, making perplexity depend on batch size)."""

    Params = TextGenerationParams

    def processor_source(self, context: PrepareContext) -> str | None:
        p: TextGenerationParams = self.params  # type: ignore[assignment]
        return p.model_name or (str(context.processor_folder) if context.processor_folder else None)

    def prepare(self, source: Source, context: PrepareContext) -> Prepared:
        from olive_eval.data.processor import tokenizer_of

        p: TextGenerationParams = self.params  # type: ignore[assignment]
        if len(p.input_cols) != 1:
            raise EvaluationError("text_generation_huggingface_pre_process takes one prompt column in input_cols")
        prompt_col = p.input_cols[0]
        check_columns(source, [prompt_col, *([p.label_col] if p.label_col else [])], "column")
        tokenizer = tokenizer_of(context.processor(p.model_name, trust_remote_code=p.trust_remote_code))
        templated = p.chat_template and getattr(tokenizer, "chat_template", None)
        pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (tokenizer.eos_token_id or 0)
        references = p.label_col or "target_ids"

        def encode(text: str) -> np.ndarray:
            if templated:
                messages = [
                    *([{"role": "system", "content": p.system_prompt}] if p.system_prompt else []),
                    {"role": "user", "content": text},
                ]
                ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
                ids = ids["input_ids"] if isinstance(ids, dict) else ids
            else:
                ids = tokenizer(text, truncation=p.max_length is not None, max_length=p.max_length)["input_ids"]
            return np.asarray(ids, dtype=np.int64)

        def chunks() -> Iterator[Columns]:
            for table in limited_tables(source, p.max_samples):
                raw = table_columns(table)
                ids = [encode(t) for t in raw[prompt_col]]
                out: Columns = {
                    "input_ids": ids,
                    "attention_mask": [np.ones_like(i) for i in ids],
                    prompt_col: raw[prompt_col],
                }
                out[references] = raw[p.label_col] if p.label_col else ids
                for c in source.columns:
                    out.setdefault(c, raw[c])
                yield out

        pad = {"input_ids": pad_id, "attention_mask": 0}
        if not p.label_col:
            pad[references] = -100
        columns = ["input_ids", "attention_mask", references, *source.columns]
        key = self.processor_source(context)
        return Prepared(
            source.name,
            chunks,
            ["input_ids", "attention_mask"],
            references,
            columns,
            pad,
            "left" if p.label_col else "right",
            source.num_rows,
            key,
        )
