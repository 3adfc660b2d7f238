"""``vision_vqa_pre_process`` (Olive's, with its parameters and semantics): an image, a question, answers.

* A list of answers becomes several references (a metric matches any of them); Olive joins them with
  ``|``, which the answer metrics also accept.
* Multiple-choice options (``options_col``) are appended to the question as ``"1. opt"`` lines, and a
  0-based numeric answer is made 1-based to match.
* ``limit`` >= 1 takes the first N examples, 0 < ``limit`` < 1 a fraction chosen with ``seed`` (Olive's).

A ``PythonModel`` receives the decoded ``image`` (a PIL image), the ``question``, the ``system_prompt`` and
the other columns. An ``HfModel`` (image-text-to-text) gets its processor's inputs for the image and the
question (through the chat template when the processor has one), and its generated text is decoded.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

import numpy as np
import pyarrow as pa
from pydantic import Field

from olive_eval.data.arrow import table_columns
from olive_eval.data.batch import Columns
from olive_eval.data.components import ComponentParams, register_component
from olive_eval.data.prepared import PrepareContext, Prepared
from olive_eval.data.preprocess import PreProcess, check_columns
from olive_eval.data.sources import Source
from olive_eval.data.subsets import olive_limit_indices
from olive_eval.errors import EvaluationError

#: Images decoded at a time.
IMAGES_PER_CHUNK = 64


class VqaParams(ComponentParams):
    image_col: str = "image"
    question_col: str = "question"
    answer_col: str = "answer"
    options_col: str = ""
    system_prompt: str = ""
    max_length: int = Field(4096, ge=1)
    max_samples: int | None = Field(None, ge=1)
    limit: float | None = Field(None, ge=0)
    seed: int = 42
    on_error: Literal["raise", "skip"] = "raise"
    model_name: str | None = None
    task: str | None = None


def answers_of(value: Any, options: Any, where: str) -> list[str]:
    """The references of one example, Olive's way (list → several; 0-based choice → 1-based)."""
    if isinstance(value, (list, tuple)):
        if not all(isinstance(v, (str, int, float)) for v in value):
            raise EvaluationError(
                f"{where}: the answer list holds {sorted({type(v).__name__ for v in value})}; answers are strings"
            )
        answers = [str(v) for v in value]
    elif isinstance(value, (str, int, float)) and not isinstance(value, bool):
        answers = [str(value)]
    else:
        raise EvaluationError(
            f"{where}: the answer is a {type(value).__name__}; answers are strings or lists of strings"
        )
    if isinstance(options, (list, tuple)) and options:
        converted = []
        for a in answers:
            try:
                converted.append(str(int(a) + 1))
            except ValueError:
                converted.append(a)
        answers = converted
    return answers


def question_of(question: str, options: Any) -> str:
    if isinstance(options, (list, tuple)) and options:
        return question + "\n" + "\n".join(f"{i + 1}. {opt}" for i, opt in enumerate(options))
    return question


@register_component("pre-process", "vision_vqa_pre_process")
class VisionVqa(PreProcess):
    Params = VqaParams

    def processor_source(self, context: PrepareContext) -> str | None:
        p: VqaParams = self.params  # type: ignore[assignment]
        return p.model_name or (str(context.processor_folder) if context.processor_folder else None)

    def prepare(self, source: Source, context: PrepareContext) -> Prepared:
        from olive_eval.data.images import decode_image_column

        p: VqaParams = self.params  # type: ignore[assignment]
        check_columns(
            source, [p.image_col, p.question_col, p.answer_col, *([p.options_col] if p.options_col else [])], "column"
        )
        processor = context.processor(p.model_name) if self.processor_source(context) else None
        metadata = [c for c in source.columns if c not in (p.image_col, p.question_col, p.answer_col)]

        def chunks() -> Iterator[Columns]:
            whole = pa.concat_tables(list(source.chunks()))
            keep = olive_limit_indices(whole.num_rows, p.limit if p.limit is not None else p.max_samples, p.seed)
            indices = list(range(whole.num_rows)) if keep is None else keep
            for start in range(0, len(indices), IMAGES_PER_CHUNK):
                rows = indices[start : start + IMAGES_PER_CHUNK]
                table = whole.take(pa.array(rows, type=pa.int64()))
                raw = table_columns(table)
                names = [f"example {i}" for i in rows]
                images, kept, skipped = decode_image_column(
                    table.column(p.image_col).to_pylist(), mode="RGB", on_error=p.on_error, names=names
                )
                for message in skipped:
                    context.note(f"skipped an image that cannot be decoded: {message}")
                options = raw[p.options_col] if p.options_col else [None] * len(rows)
                out: Columns = {
                    "image": images,
                    "question": [question_of(raw[p.question_col][i], options[i]) for i in kept],
                    "system_prompt": [p.system_prompt] * len(kept),
                    "num_choices": np.array([len(options[i]) if isinstance(options[i], list) else 0 for i in kept]),
                    "answers": [answers_of(raw[p.answer_col][i], options[i], names[i]) for i in kept],
                }
                for c in metadata:
                    column = raw[c]
                    out[c] = column[kept] if isinstance(column, np.ndarray) else [column[i] for i in kept]
                if processor is not None:
                    out.update(_processor_inputs(processor, out["image"], out["question"], p.system_prompt))
                yield out

        inputs, pad = ["image", "question"], {}
        if processor is not None:
            tokenizer = getattr(processor, "tokenizer", processor)
            inputs = ["input_ids", "attention_mask", "pixel_values"]
            pad = {"input_ids": int(tokenizer.pad_token_id or 0), "attention_mask": 0}
        columns = [*inputs, "image", "question", "system_prompt", "num_choices", "answers", *metadata]
        return Prepared(
            source.name,
            chunks,
            inputs,
            "answers",
            list(dict.fromkeys(columns)),
            pad,
            "left",
            None,
            self.processor_source(context),
        )


def _processor_inputs(processor: Any, images: list[Any], questions: list[str], system_prompt: str) -> Columns:
    """The processor's inputs per example (token ids stay ragged until the dataloader pads them)."""
    out: dict[str, list[np.ndarray]] = {}
    for image, question in zip(images, questions, strict=True):
        text = question
        if getattr(processor, "chat_template", None):
            messages = [
                *([{"role": "system", "content": system_prompt}] if system_prompt else []),
                {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": question}]},
            ]
            text = processor.apply_chat_template(messages, add_generation_prompt=True)
        features = processor(images=image, text=text, return_tensors="np")
        for key in ("input_ids", "attention_mask", "pixel_values"):
            if key in features:
                out.setdefault(key, []).append(np.asarray(features[key])[0])
    return {k: (np.stack(v) if len({x.shape for x in v}) == 1 and k == "pixel_values" else v) for k, v in out.items()}
