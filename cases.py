"""Case builders of the bundled attention course: the inputs its config.yaml cannot declare
(containers that change from case to case, scores near 1000 on some cases only, arguments
derived from one another). Each makes the positional arguments of one call from a seeded
random generator, the case's sizes (only the keys listed in `needs`) and the case's index.

The grader runs this file in its own process, never in a student's sandbox; see
docs/course-author.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from grader.course.inputs import builder

if TYPE_CHECKING:  # numpy.random is imported only when the cases are drawn
    from numpy.random import Generator as Rng
Sizes = Mapping[str, int]


def _column(rng: Rng, d: int) -> np.ndarray:
    return rng.standard_normal((d, 1))


def _causal(length: int) -> np.ndarray:
    mask = np.zeros((length, length))
    mask[np.triu_indices(length, k=1)] = -np.inf
    return mask


@builder(needs=["N"])
def score_list(rng: Rng, s: Sizes, index: int) -> tuple[Any, ...]:
    """N scores as a list of floats, a list of 1×1 arrays or an array, by turns."""
    scores = rng.standard_normal(s["N"]) * 2.0
    kind = index % 3
    if kind == 0:
        return ([float(v) for v in scores],)
    if kind == 1:
        return ([np.full((1, 1), v) for v in scores],)
    return (scores,)


@builder(needs=["L"])
def score_rows(rng: Rng, s: Sizes, index: int) -> tuple[Any, ...]:
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


@builder(needs=["L", "d_k", "d_v"])
def qkv_rows(rng: Rng, s: Sizes, index: int) -> tuple[Any, ...]:
    """q, k (L×d_k) and v (L×d_v); every other case adds the causal mask."""
    length = s["L"]
    q = rng.standard_normal((length, s["d_k"]))
    k = rng.standard_normal((length, s["d_k"]))
    v = rng.standard_normal((length, s["d_v"]))
    return (q, k, v) if index % 2 == 0 else (q, k, v, _causal(length))


@builder(needs=["L"])
def stable_scores(rng: Rng, s: Sizes, index: int) -> tuple[Any, ...]:
    """L×(L+2) scores, near 1000 on odd cases; the axis is passed on two cases of three."""
    scores = rng.standard_normal((s["L"], s["L"] + 2)) * 3.0 + (1000.0 if index % 2 else 0.0)
    return (scores,) if index % 3 == 0 else (scores, index % 2)


@builder(needs=["L", "d_k", "d_v"])
def qkv_word(rng: Rng, s: Sizes, index: int) -> tuple[Any, ...]:
    """A word's index and q, k, v; the mask flag on two cases of three."""
    q, k, v = qkv_rows(rng, s, 0)
    word = int(rng.integers(s["L"]))
    return (word, q, k, v) if index % 3 == 0 else (word, q, k, v, index % 3 == 1)


@builder(needs=["L", "d_k", "d_v"])
def qkv_sentence(rng: Rng, s: Sizes, index: int) -> tuple[Any, ...]:
    """q, k, v; the mask flag on two cases of three."""
    q, k, v = qkv_rows(rng, s, 0)
    return (q, k, v) if index % 3 == 0 else (q, k, v, index % 3 == 1)


@builder(needs=["d"])
def vector_pair(rng: Rng, s: Sizes, _: int) -> tuple[Any, ...]:
    """Two correlated vectors, so their cosine is neither 0 nor 1."""
    a = rng.standard_normal(s["d"])
    return (a, a * 0.5 + rng.standard_normal(s["d"]))


@builder(needs=["d"])
def probabilities(rng: Rng, s: Sizes, index: int) -> tuple[Any, ...]:
    """p(x), p(y), p(x, y): numbers on odd cases, arrays of d on even ones."""
    p_x, p_y = rng.uniform(0.1, 0.9, size=2 if index % 2 else (2, s["d"]))
    p_xy = p_x * p_y * rng.uniform(0.3, 1.8, size=np.shape(p_x))
    if index % 2:
        return (float(p_x), float(p_y), float(p_xy))
    return (p_x, p_y, p_xy)


@builder(needs=["D", "N"])
def two_heads(rng: Rng, s: Sizes, _: int) -> tuple[Any, ...]:
    """X, then each head's Ω_v, Ω_q, Ω_k ((D/2)×D) and β_v, β_q, β_k, then Ω_c (D×D)."""
    d, n = s["D"], s["N"]
    head = d // 2
    x = rng.standard_normal((d, n))
    heads = []
    for _ in range(2):
        omegas = [rng.standard_normal((head, d)) / np.sqrt(d) for _ in range(3)]
        betas = [_column(rng, head) for _ in range(3)]
        heads.extend([*omegas, *betas])
    return (x, *heads, rng.standard_normal((d, d)) / np.sqrt(d))
