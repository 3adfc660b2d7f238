"""Olive's ``ner_huggingface_preprocess``: pre-split words tokenized, word labels aligned to the tokens.

With Olive's parameters (``model_name``, ``input_cols``, ``label_col``, ``max_samples``,
``trust_remote_code``; the tokenizer's ``padding``, ``truncation``, ``is_split_into_words`` (default true)
and ``add_special_tokens`` (default false)). The aligned labels are the ``label`` column, the references;
the word-level ``label_col`` stays as metadata when it has another name.

``label_alignment`` picks how a word's label spreads over its tokens:

* ``olive`` (default, Olive 0.13's): a word's first token keeps the word's label, its other tokens get the
  I- form of it (an odd label, B-X in the usual scheme, plus one), special and padding tokens 0;
* ``first_subtoken`` (transformers' ``run_ner`` without ``label_all_tokens``): only a word's first token
  keeps the label; other tokens, special and padding tokens get -100, which a metric skips with
  ``ignore_index: -100``.

Padding is per batch (Olive pads per 1000-row map batch), so under ``olive`` the padding tokens scored as
label 0 differ with the batch size; score with ``first_subtoken`` and ``ignore_index`` to count only words.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Literal

import numpy as np
from pydantic import Field

from olive_eval.data.arrow import table_columns
from olive_eval.data.batch import Columns
from olive_eval.data.components import ComponentParams, register_component
from olive_eval.data.prepared import PrepareContext, Prepared
from olive_eval.data.preprocess import PreProcess, check_columns
from olive_eval.data.sources import Source
from olive_eval.errors import EvaluationError

#: The references column (Olive names the aligned labels ``label``).
LABEL = "label"
#: The label of tokens that score nowhere under ``first_subtoken``.
IGNORED = -100


class NerParams(ComponentParams):
    """Olive's ``ner_huggingface_preprocess`` parameters, plus ``label_alignment`` and ``max_length``."""

    model_name: str | None = Field(None, description="Tokenizer folder or cached hub name; default: the model's own")
    input_cols: list[str] = Field(min_length=1, max_length=2, description="The words column (a pair: two)")
    label_col: str = "label"
    max_samples: int | None = Field(None, ge=1)
    trust_remote_code: bool | None = None
    padding: bool | Literal["longest", "max_length"] = True
    truncation: bool = True
    max_length: int | None = Field(None, ge=1)
    is_split_into_words: bool = True
    add_special_tokens: bool = False
    batched: bool = Field(True, description="Olive's map switch; accepted, no effect here")
    label_alignment: Literal["olive", "first_subtoken"] = "olive"
    task: str | None = None


def align_labels(labels: Sequence[int], word_ids: Sequence[int | None], mode: str) -> list[int]:
    """One label per token from one label per word (see the module's docstring for the two modes)."""
    out: list[int] = []
    previous: int | None = None
    for word in word_ids:
        if word is None:
            out.append(0 if mode == "olive" else IGNORED)
        elif word != previous:
            out.append(int(labels[word]))
        elif mode == "olive":
            label = int(labels[word])
            out.append(label + 1 if label % 2 == 1 else label)
        else:
            out.append(IGNORED)
        previous = word
    return out


@register_component("pre-process", "ner_huggingface_preprocess")
class NerPreProcess(PreProcess):
    Params = NerParams

    def processor_source(self, context: PrepareContext) -> str | None:
        p: NerParams = self.params  # type: ignore[assignment]
        return p.model_name or (str(context.processor_folder) if context.processor_folder is not None else None)

    def prepare(self, source: Source, context: PrepareContext) -> Prepared:
        from olive_eval.data.processor import tokenizer_of

        p: NerParams = self.params  # type: ignore[assignment]
        check_columns(source, list(p.input_cols), "input column")
        check_columns(source, [p.label_col], "label column")
        tokenizer = tokenizer_of(context.processor(p.model_name, trust_remote_code=bool(p.trust_remote_code)))
        if not getattr(tokenizer, "is_fast", False):
            raise EvaluationError(
                f"data config '{source.name}': ner_huggingface_preprocess needs a fast tokenizer (tokenizer.json) to "
                f"map tokens to words; {type(tokenizer).__name__} is not one"
            )
        keys = [
            k
            for k in tokenizer(["probe"], is_split_into_words=True)
            if k in ("input_ids", "attention_mask", "token_type_ids")
        ]
        pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        pad: dict[str, int | float] = {k: (pad_id if k == "input_ids" else 0) for k in keys}
        pad[LABEL] = 0 if p.label_alignment == "olive" else IGNORED
        metadata = [c for c in source.columns if c != LABEL]
        seen = 0

        def chunks() -> Iterator[Columns]:
            nonlocal seen
            seen = 0
            for table in source.chunks():
                if p.max_samples is not None:
                    if seen >= p.max_samples:
                        return
                    table = table.slice(0, p.max_samples - seen)
                raw = table_columns(table)
                yield self._encode(tokenizer, raw, keys, source.name, seen, metadata)
                seen += table.num_rows

        columns = [*keys, LABEL, *metadata]
        return Prepared(
            source.name,
            chunks,
            keys,
            LABEL,
            columns,
            pad,
            tokenizer.padding_side,
            source.num_rows,
            self.processor_source(context),
        )

    def _encode(
        self, tokenizer: Any, raw: Columns, keys: list[str], name: str, start: int, metadata: list[str]
    ) -> Columns:
        p: NerParams = self.params  # type: ignore[assignment]
        texts = [[_words(w) if p.is_split_into_words else w for w in raw[c]] for c in p.input_cols]
        encoded = tokenizer(
            *texts,
            padding=p.padding == "max_length" and "max_length",
            truncation=p.truncation,
            max_length=p.max_length,
            is_split_into_words=p.is_split_into_words,
            add_special_tokens=p.add_special_tokens,
        )
        labels = []
        for i, word_labels in enumerate(raw[p.label_col]):
            where = f"data config '{name}': example {start + i}"
            word_labels = list(word_labels) if word_labels is not None else []
            if any(not isinstance(x, (int, np.integer)) for x in word_labels):
                raise EvaluationError(
                    f"{where}: {p.label_col} holds {type(next(x for x in word_labels if not isinstance(x, (int, np.integer)))).__name__} "
                    "values; ner_huggingface_preprocess takes label ids (integers), as Olive's does"
                )
            word_ids = encoded.word_ids(i)
            if p.is_split_into_words and len(texts) == 1 and len(word_labels) != len(texts[0][i]):
                raise EvaluationError(
                    f"{where}: {len(texts[0][i])} words in '{p.input_cols[0]}' but {len(word_labels)} labels in '{p.label_col}'"
                )
            top = max((w for w in word_ids if w is not None), default=-1)
            if top >= len(word_labels):
                raise EvaluationError(f"{where}: token of word {top} but '{p.label_col}' has {len(word_labels)} labels")
            labels.append(np.asarray(align_labels(word_labels, word_ids, p.label_alignment), dtype=np.int64))
        out: Columns = {k: [np.asarray(v, dtype=np.int64) for v in encoded[k]] for k in keys}
        out[LABEL] = labels
        for c in metadata:
            out[c] = raw[c]
        return out


def _words(value: Any) -> list[str]:
    if isinstance(value, str):
        raise EvaluationError(
            "ner_huggingface_preprocess: an input column holds a string; with is_split_into_words (Olive's default) "
            "each example is a list of words"
        )
    return [str(w) for w in value]
