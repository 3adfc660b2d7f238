"""Generation latency in the timing phase: a run of the generation sub-types (``ttft``, ``tpot``, ``e2e``,
``tokens_per_second``, ``prefill_tokens_per_second``) times the model token by token, and so does
``peak_memory_mb`` when its config sets the lengths (its memory is read as for any call:
:mod:`olive_eval.engine.timing.peak_memory`).

The phase's rounds, warm-up and pairing are the ordinary ones (:mod:`olive_eval.engine.timing.timing_phase`): only the
call differs. :func:`bind_timed` binds prompts of one fixed length to a streaming call that decodes exactly
``max_new_tokens`` tokens per row (:mod:`olive_eval.runtimes.streaming`); after each round, :func:`record_tokens`
turns the round's token traces into per-run seconds of each quantity, kept in the sample beside the call seconds
and in the same rounds, so a candidate's ratio to the baseline is paired round by round as latency's is.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from olive_eval.data.batch import Batch
from olive_eval.errors import EvaluationError
from olive_eval.metrics.performance import GenerationTimingConfig, TimingConfig, TimingSample
from olive_eval.runtimes.base import BoundCall, Runtime
from olive_eval.runtimes.streaming import StreamingCall, StreamsTokens, TokenTrace


def fixed_prompts(batch: Batch, prompt_tokens: int | None) -> Batch:
    """The batch's prompts, each without its padding, repeated or cut to ``prompt_tokens`` tokens (default: the
    shortest prompt's length), so every row and every model has prompts of one length."""
    if "input_ids" not in batch.columns:
        raise EvaluationError(
            "generation latency needs text prompts (input_ids): give the metric a data_config whose pre-process "
            "tokenizes prompts (text_generation_huggingface_pre_process)"
        )
    rows = [np.asarray(row, dtype=np.int64).ravel() for row in batch.columns["input_ids"]]
    masks = batch.columns.get("attention_mask")
    if masks is not None:
        rows = [row[np.asarray(mask).ravel().astype(bool)] for row, mask in zip(rows, masks, strict=True)]
    if any(len(row) == 0 for row in rows):
        raise EvaluationError("generation latency: a prompt of the timing batch has no tokens")
    length = prompt_tokens or min(len(row) for row in rows)
    ids = np.stack([np.resize(row, length) for row in rows])  # np.resize repeats a row to fill the length
    columns = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
    return Batch(columns, list(columns), batch.start, batch.call_mode)


def bind_timed(timing: TimingConfig, runtime: Runtime, batch: Batch) -> BoundCall:
    """The call a timing run times: the runtime's own binding, or a generation run's streaming call."""
    if not isinstance(timing, GenerationTimingConfig):
        return runtime.bind(batch)
    if not isinstance(runtime, StreamsTokens):
        raise EvaluationError(
            f"a {runtime.model_type} cannot be timed token by token (the generation latency sub-types); "
            "HfModel and GenAIModel can"
        )
    return runtime.bind_generation(fixed_prompts(batch, timing.prompt_tokens), timing.max_new_tokens)


def quantities(traces: list[TokenTrace]) -> dict[str, np.ndarray]:
    """Seconds per run of each generation quantity: time to first token, time per output token after the first
    ((e2e - ttft) / (n - 1)), the whole call, the decode time after the first token (``tokens_per_second``'s),
    and the time to first token again (``prefill_tokens_per_second``'s)."""
    ttft = np.array([t.token_seconds[0] for t in traces], dtype=np.float64)
    e2e = np.array([t.seconds for t in traces], dtype=np.float64)
    decode = e2e - ttft
    n = np.array([len(t.token_seconds) for t in traces], dtype=np.float64)
    return {
        "ttft": ttft,
        "tpot": decode / (n - 1),
        "e2e": e2e,
        "tokens_per_second": decode,
        "prefill_tokens_per_second": ttft,
    }


def record_tokens(call: BoundCall, sample: TimingSample, runs: int, description: dict[str, Any]) -> None:
    """Add the last ``runs`` calls' token traces to ``sample`` as one more round (generation runs take a fixed
    count, never appended chunks), the round the phase adds for the calls' seconds; ``description`` gets the
    lengths."""
    if not isinstance(call, StreamingCall):
        return
    traces = call.take(runs)
    counts = {len(t.token_seconds) for t in traces}
    if len(traces) != runs or len(counts) != 1 or min(counts) < 2:
        raise EvaluationError(
            f"generation latency: the runs decoded {sorted(counts)} tokens, not one fixed count of at least 2"
        )
    first = traces[0]
    new_tokens = len(first.token_seconds)
    sample.counts = {
        "tokens_per_second": first.rows * (new_tokens - 1),
        "prefill_tokens_per_second": first.prompt_tokens,
    }
    sample.lengths = {"prompt_tokens": first.prompt_tokens // first.rows, "new_tokens": new_tokens, "rows": first.rows}
    for name, values in quantities(traces).items():
        sample.quantities.setdefault(name, []).append(values)
    description.setdefault("generation", dict(sample.lengths))
