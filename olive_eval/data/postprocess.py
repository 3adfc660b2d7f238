"""Post-processing components (``post_process_data_config``): a batch's model outputs → its predictions.

They run per batch, and may use the model's tokenizer or processor (decoding generated ids). The raw
output they start from (``output_name``: a name or an index, default the first) is what metrics read as
``logits``; what they return is ``prediction``. A post-process requires the output it starts from, when named
(the plan checks it against the runtime's ``emits`` before any model loads), and declares the outputs a runtime adds
that it reads when given (``uses``).
"""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

import numpy as np
from pydantic import Field

from olive_eval.data.batch import Batch, Column, Outputs, dense, select_output
from olive_eval.data.components import Component, ComponentParams, register_component
from olive_eval.data.prepared import PrepareContext
from olive_eval.errors import EvaluationError
from olive_eval.tasks.runtime_outputs import OUTPUT_LENGTHS, PROMPT_LENGTH, SEQUENCES


class PostParams(ComponentParams):
    output_name: str | int = Field(0, description="Which model output to start from: its name or index.")


class PostProcess(Component):
    """Base: ``apply(outputs, batch, context)`` gives the batch's predictions (one per example).

    ``generates`` says that it decodes generated tokens, not a forward pass's outputs; how the model is called for
    it is its model's task's declaration (``ModelConfig.call_mode``, :mod:`olive_eval.tasks`), not this flag's.
    """

    Params = PostParams
    generates: bool = False
    #: Outputs a runtime may add (:mod:`olive_eval.tasks.runtime_outputs`) that it reads when given.
    uses: ClassVar[tuple[str, ...]] = ()

    def requires(self) -> tuple[str, ...]:
        """The outputs it cannot do without: the one it starts from, when named (an index fits any model). A
        post-process whose parameters name outputs otherwise says so itself."""
        name = getattr(self.params, "output_name", None)
        return (name,) if isinstance(name, str) else ()

    def raw(self, outputs: Outputs) -> Column:
        return select_output(outputs, self.params.output_name)  # type: ignore[attr-defined]

    def apply(self, outputs: Outputs, batch: Batch, context: PrepareContext) -> Column:
        return self.raw(outputs)

    def row_wise(self, ndim: int) -> bool:
        """Whether, on a dense output of ``ndim`` axes, each example's prediction depends on its own output row
        alone (nothing else of the batch): then consecutive batches may be post-processed joined
        (:mod:`olive_eval.engine.passes.held_batches`). False unless a post-process says so."""
        return False


@register_component("post-process", "identity")
class Identity(PostProcess):
    """The selected output as it is. A model that returns ``None`` for an example (a ``PythonModel`` whose
    generation failed there) gets an empty prediction for it, counted in the pass's notes, as Olive counts
    failed generations."""

    def apply(self, outputs: Outputs, batch: Batch, context: PrepareContext) -> Column:
        column = self.raw(outputs)
        if isinstance(column, list):
            failed = sum(value is None for value in column)
            if failed:
                context.note("generations that failed (None from the model; scored as empty predictions)", failed)
                return ["" if value is None else value for value in column]
        return column

    def row_wise(self, ndim: int) -> bool:
        return True


register_component("post-process", "post_process")(Identity)  # Olive's default
register_component("post-process", "skip_post_process")(Identity)
register_component("post-process", "text_generation_post_process")(Identity)  # Olive returns the logits


class AxisParams(PostParams):
    axis: int = -1


class AlongAxis(PostProcess):
    """A post-process along ``axis`` of each example's output: row-wise unless the axis is the examples' own."""

    Params = AxisParams

    def row_wise(self, ndim: int) -> bool:
        return ndim >= 2 and -ndim <= self.params.axis < ndim and self.params.axis % ndim != 0  # type: ignore[attr-defined]


@register_component("post-process", "argmax")
class Argmax(AlongAxis):
    def apply(self, outputs: Outputs, batch: Batch, context: PrepareContext) -> Column:
        return np.argmax(dense(self.raw(outputs), "the model output"), axis=self.params.axis)  # type: ignore[attr-defined]


register_component("post-process", "text_classification_post_process")(Argmax)
register_component("post-process", "ner_post_process")(Argmax)


@register_component("post-process", "softmax")
class Softmax(AlongAxis):
    def apply(self, outputs: Outputs, batch: Batch, context: PrepareContext) -> Column:
        x = dense(self.raw(outputs), "the model output").astype(np.float64)
        z = np.exp(x - x.max(axis=self.params.axis, keepdims=True))  # type: ignore[attr-defined]
        return z / z.sum(axis=self.params.axis, keepdims=True)  # type: ignore[attr-defined]


class SigmoidParams(PostParams):
    threshold: float | None = Field(None, description="Give 0/1 labels: 1 where the probability exceeds it.")


@register_component("post-process", "sigmoid")
class Sigmoid(PostProcess):
    Params = SigmoidParams

    def apply(self, outputs: Outputs, batch: Batch, context: PrepareContext) -> Column:
        x = dense(self.raw(outputs), "the model output").astype(np.float64)
        p = 0.5 * (1.0 + np.tanh(0.5 * x))  # overflow-free
        threshold = self.params.threshold  # type: ignore[attr-defined]
        return p if threshold is None else (p > threshold).astype(np.int64)

    def row_wise(self, ndim: int) -> bool:
        return True  # element by element


class PoolingParams(PostParams):
    mask: str = Field("attention_mask", description="The column masking padding tokens out of the mean.")
    normalize: bool = Field(True, description="Scale each embedding to unit length (sentence-transformers' default).")


@register_component("post-process", "mean_pooling")
class MeanPooling(PostProcess):
    """Sentence embeddings: token states averaged over the real tokens (a bi-encoder's pooling)."""

    Params = PoolingParams

    def apply(self, outputs: Outputs, batch: Batch, context: PrepareContext) -> Column:
        states = dense(self.raw(outputs), "the token states").astype(np.float64)
        mask = dense(batch.columns[self.params.mask], "the attention mask").astype(np.float64)[..., None]  # type: ignore[attr-defined]
        pooled = (states * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
        if self.params.normalize:  # type: ignore[attr-defined]
            pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return pooled


class DecodeParams(PostParams):
    output_name: str | int = SEQUENCES
    skip_special_tokens: bool = True
    strip: bool = True


@register_component("post-process", "decode")
class Decode(PostProcess):
    """Generated token ids → text through the tokenizer, the prompt stripped, special tokens skipped.

    A generation that decodes to nothing counts as an empty prediction (never a crash), with a note
    of how many in the results.
    """

    Params = DecodeParams
    generates = True
    uses = (PROMPT_LENGTH,)

    def apply(self, outputs: Outputs, batch: Batch, context: PrepareContext) -> Column:
        from olive_eval.data.processor import tokenizer_of

        p: DecodeParams = self.params  # type: ignore[assignment]
        sequences = self.raw(outputs)
        prompt = outputs.get(PROMPT_LENGTH)
        rows = [np.asarray(s) for s in sequences]
        if prompt is not None:
            rows = [row[int(n) :] for row, n in zip(rows, np.broadcast_to(prompt, len(rows)), strict=True)]
        tokenizer = tokenizer_of(context.processor())
        texts = tokenizer.batch_decode([r.tolist() for r in rows], skip_special_tokens=p.skip_special_tokens)
        texts = [t.strip() if p.strip else t for t in texts]
        empty = sum(1 for t in texts if not t)
        if empty:
            context.note("generations that decoded to empty text (scored as empty predictions)", empty)
        return texts


class CtcParams(PostParams):
    output_name: str | int = "logits"


@register_component("post-process", "ctc_decode")
class CtcDecode(PostProcess):
    """CTC logits → text: the best token per frame over the clip's own frames (a padded clip's extra frames are
    left out when the model gives ``output_lengths``), then repeats grouped and blanks dropped.

    A CTC tokenizer (one whose decoding groups tokens, as transformers' Wav2Vec2CTCTokenizer does) decodes the
    frame ids itself, exactly as transformers documents CTC decoding: grouping first, so a letter repeated across
    a blank stays doubled. Another tokenizer gets the ids already grouped, blanks removed.
    """

    Params = CtcParams
    uses = (OUTPUT_LENGTHS,)

    def apply(self, outputs: Outputs, batch: Batch, context: PrepareContext) -> Column:
        from olive_eval.data.processor import tokenizer_of

        ids = np.argmax(dense(self.raw(outputs), "the CTC logits"), axis=-1)
        lengths = outputs.get(OUTPUT_LENGTHS) if isinstance(outputs, dict) else None
        rows = [row if lengths is None else row[: int(lengths[i])] for i, row in enumerate(ids)]
        tokenizer = tokenizer_of(context.processor())
        if "group_tokens" in inspect.signature(tokenizer._decode).parameters:
            texts = [tokenizer.decode([int(t) for t in row], skip_special_tokens=False) for row in rows]
        else:
            blank = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
            collapsed = []
            for row in rows:
                keep = np.ones(len(row), dtype=bool)
                keep[1:] = row[1:] != row[:-1]
                collapsed.append([int(t) for t in row[keep] if t != blank])
            texts = tokenizer.batch_decode(collapsed, skip_special_tokens=True)
        empty = sum(1 for t in texts if not t.strip())
        if empty:
            context.note("transcriptions that decoded to empty text (scored as empty predictions)", empty)
        return [t.strip() for t in texts]


def user_post_process(func: Any, name: str) -> type[PostProcess]:
    """A user script's function ``f(outputs, batch=..., **params)`` as a post-process component."""

    class UserPostProcess(PostProcess):
        def apply(self, outputs: Outputs, batch: Batch, context: PrepareContext) -> Column:
            result = func(outputs, batch=batch.columns)
            if len(result) != batch.size:
                raise EvaluationError(
                    f"post-process '{name}' returned {len(result)} predictions for {batch.size} examples"
                )
            return result

    UserPostProcess.name = name
    return UserPostProcess
