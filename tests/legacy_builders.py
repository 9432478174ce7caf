"""The case builders as grader/course/inputs.py held them before the bundled course's inputs
moved to config.yaml (`args:`) and the course's cases.py: kept, unchanged, as the oracle
tests/test_declared_inputs.py compares the moved ones with, draw for draw.

Input builders: each turns (random generator, sizes, case index) into the positional
arguments of one call. Sizes come from config.yaml so that an instructor can add shapes
without code; the case index lets a builder vary the container (list of floats, list of 1×1
arrays, array). Kept apart from cases.py so that the config can name them without importing
the cases (which import the config).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

Rng = np.random.Generator
Builder = Callable[[Rng, Mapping[str, int], int], tuple[Any, ...]]


def _column(rng: Rng, d: int) -> np.ndarray:
    return rng.standard_normal((d, 1))


def _weights(rng: Rng, rows: int, cols: int) -> np.ndarray:
    # Scaled so that unscaled scores are large but not saturated: scaling must matter.
    weights: np.ndarray = rng.standard_normal((rows, cols)) / np.sqrt(cols)
    return weights


def _qkv_loop(rng: Rng, s: Mapping[str, int], _: int) -> tuple[Any, ...]:
    d, n = s["D"], s["N"]
    all_x = [_column(rng, d) for _ in range(n)]
    omegas = [_weights(rng, d, d) for _ in range(3)]
    betas = [_column(rng, d) for _ in range(3)]
    return (all_x, *omegas, *betas)


def _score_list(rng: Rng, s: Mapping[str, int], index: int) -> tuple[Any, ...]:
    scores = rng.standard_normal(s["N"]) * 2.0
    kind = index % 3
    if kind == 0:
        return ([float(v) for v in scores],)
    if kind == 1:
        return ([np.full((1, 1), v) for v in scores],)
    return (scores,)


def _qkv_lists(rng: Rng, s: Mapping[str, int], _: int) -> tuple[Any, ...]:
    d, n = s["D"], s["N"]
    return tuple([_column(rng, d) for _ in range(n)] for _ in range(3))


def _score_matrix(rng: Rng, s: Mapping[str, int], _: int) -> tuple[Any, ...]:
    # Rows ≠ columns in most cases, so summing over the wrong axis cannot hide.
    return (rng.standard_normal((s["N"], s["D"])) * 2.0,)


def _attention_columns(rng: Rng, s: Mapping[str, int], _: int) -> tuple[Any, ...]:
    d, n = s["D"], s["N"]
    x = rng.standard_normal((d, n))
    omega_v, omega_q, omega_k = (_weights(rng, d, d) for _ in range(3))
    beta_v, beta_q, beta_k = (_column(rng, d) for _ in range(3))
    return (x, omega_v, omega_q, omega_k, beta_v, beta_q, beta_k)


def _causal_size(rng: Rng, s: Mapping[str, int], _: int) -> tuple[Any, ...]:
    return (s["L"],)


def _score_rows(rng: Rng, s: Mapping[str, int], index: int) -> tuple[Any, ...]:
    """Scores for a last-axis softmax: a vector, a matrix, scores near 1000, masked rows."""
    length = s["L"]
    kind = index % 4
    if kind == 0:
        return (rng.standard_normal(length) * 3.0,)
    scores = rng.standard_normal((length, length + 1)) * 3.0
    if kind == 2:
        scores += 1000.0  # a softmax without the max subtraction overflows here
    if kind == 3:
        scores[np.triu_indices(length, k=2)] = -np.inf
    return (scores,)


def _causal(length: int) -> np.ndarray:
    mask = np.zeros((length, length))
    mask[np.triu_indices(length, k=1)] = -np.inf
    return mask


def _qkv_rows(rng: Rng, s: Mapping[str, int], index: int) -> tuple[Any, ...]:
    """q, k (L×d_k) and v (L×d_v); every other case adds the causal mask."""
    length = s["L"]
    q = rng.standard_normal((length, s["d_k"]))
    k = rng.standard_normal((length, s["d_k"]))
    v = rng.standard_normal((length, s["d_v"]))
    return (q, k, v) if index % 2 == 0 else (q, k, v, _causal(length))


def _projection(rng: Rng, s: Mapping[str, int], _: int) -> tuple[Any, ...]:
    x = rng.standard_normal((s["L"], s["d"]))
    w_q, w_k = (rng.standard_normal((s["d"], s["d_k"])) for _ in range(2))
    return (x, w_q, w_k, rng.standard_normal((s["d"], s["d_v"])))


def _stable_scores(rng: Rng, s: Mapping[str, int], index: int) -> tuple[Any, ...]:
    scores = rng.standard_normal((s["L"], s["L"] + 2)) * 3.0 + (1000.0 if index % 2 else 0.0)
    return (scores,) if index % 3 == 0 else (scores, index % 2)


def _qkv_word(rng: Rng, s: Mapping[str, int], index: int) -> tuple[Any, ...]:
    q, k, v = _qkv_rows(rng, s, 0)
    word = int(rng.integers(s["L"]))
    return (word, q, k, v) if index % 3 == 0 else (word, q, k, v, index % 3 == 1)


def _qkv_sentence(rng: Rng, s: Mapping[str, int], index: int) -> tuple[Any, ...]:
    q, k, v = _qkv_rows(rng, s, 0)
    return (q, k, v) if index % 3 == 0 else (q, k, v, index % 3 == 1)


def _vector_pair(rng: Rng, s: Mapping[str, int], _: int) -> tuple[Any, ...]:
    a = rng.standard_normal(s["d"])
    return (a, a * 0.5 + rng.standard_normal(s["d"]))


def _low_rank(rng: Rng, s: Mapping[str, int], _: int) -> tuple[Any, ...]:
    return (rng.standard_normal((s["L"], s["d"])), s["k"])


def _probabilities(rng: Rng, s: Mapping[str, int], index: int) -> tuple[Any, ...]:
    p_x, p_y = rng.uniform(0.1, 0.9, size=2 if index % 2 else (2, s["d"]))
    p_xy = p_x * p_y * rng.uniform(0.3, 1.8, size=np.shape(p_x))
    if index % 2:
        return (float(p_x), float(p_y), float(p_xy))
    return (p_x, p_y, p_xy)


def _two_heads(rng: Rng, s: Mapping[str, int], _: int) -> tuple[Any, ...]:
    d, n = s["D"], s["N"]
    head = d // 2
    x = rng.standard_normal((d, n))
    heads = []
    for _ in range(2):
        omegas = [rng.standard_normal((head, d)) / np.sqrt(d) for _ in range(3)]
        betas = [_column(rng, head) for _ in range(3)]
        heads.extend([*omegas, *betas])
    return (x, *heads, rng.standard_normal((d, d)) / np.sqrt(d))


BUILDERS: dict[str, Builder] = {
    "qkv_loop": _qkv_loop,
    "score_list": _score_list,
    "qkv_lists": _qkv_lists,
    "score_matrix": _score_matrix,
    "attention_columns": _attention_columns,
    "causal_size": _causal_size,
    "score_rows": _score_rows,
    "qkv_rows": _qkv_rows,
    "projection": _projection,
    "stable_scores": _stable_scores,
    "qkv_word": _qkv_word,
    "qkv_sentence": _qkv_sentence,
    "vector_pair": _vector_pair,
    "low_rank": _low_rank,
    "probabilities": _probabilities,
    "two_heads": _two_heads,
}
