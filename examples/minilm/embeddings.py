"""Sentence embeddings from token states, as all-MiniLM-L6-v2's sentence-transformers config makes them.

The model's pipeline is Transformer → Pooling (mean over real tokens) → Normalize (unit L2 norm).
These two functions redo the last two steps in numpy, so a PyTorch model, an ONNX export and an int8
copy are all scored the same way. Pure numpy: no torch, no I/O.
"""

from __future__ import annotations

import numpy as np

#: Floor on the token count, so a row with no real token pools to zeros instead of dividing by zero.
_MIN_TOKENS = 1e-9
#: Floor on a vector norm, so a zero vector normalizes to zeros (torch.nn.functional.normalize's eps).
_MIN_NORM = 1e-12


def _output_dtype(array: np.ndarray) -> np.dtype:
    """float32 for float16/float32 inputs, float64 for float64: the sums run in float64 either way."""
    return np.result_type(array.dtype, np.float32)


def mean_pool(last_hidden_state: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
    """Masked mean of the token states, L2-normalized: ``[N, T, D]`` states and ``[N, T]`` mask → ``[N, D]``.

    Padding positions (mask 0) are left out of the mean. A row whose mask is all zeros gives a zero
    vector, as sentence-transformers does.
    """
    states = np.asarray(last_hidden_state)
    mask = np.asarray(attention_mask)
    if states.ndim != 3:
        raise ValueError(f"last_hidden_state must be [batch, sequence, hidden], got shape {states.shape}")
    if mask.shape != states.shape[:2]:
        raise ValueError(
            f"attention_mask must be [batch, sequence] = {states.shape[:2]} to match last_hidden_state, got {mask.shape}"
        )
    weights = mask.astype(np.float64)[:, :, None]
    summed = (states.astype(np.float64) * weights).sum(axis=1)
    counts = np.maximum(weights.sum(axis=1), _MIN_TOKENS)
    pooled = summed / counts
    norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), _MIN_NORM)
    return (pooled / norms).astype(_output_dtype(states))


def cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine similarity of two ``[N, D]`` arrays → ``[N]`` (two ``[D]`` vectors → a 0-d array).

    A zero row has cosine 0 with anything (its norm is floored instead of dividing by zero).
    """
    left = np.asarray(a)
    right = np.asarray(b)
    if left.shape != right.shape:
        raise ValueError(f"cosine needs arrays of one shape, got {left.shape} and {right.shape}")
    if left.ndim not in (1, 2):
        raise ValueError(f"cosine takes [N, D] rows or [D] vectors, got shape {left.shape}")
    left64 = left.astype(np.float64)
    right64 = right.astype(np.float64)
    dots = (left64 * right64).sum(axis=-1)
    norms = np.maximum(np.linalg.norm(left64, axis=-1), _MIN_NORM) * np.maximum(
        np.linalg.norm(right64, axis=-1), _MIN_NORM
    )
    return (dots / norms).astype(np.result_type(_output_dtype(left), _output_dtype(right)))
