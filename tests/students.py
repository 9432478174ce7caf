"""Student-style code for the self_attention assignment: a correct baseline and wrong versions.

Tests and the demo build notebooks from these snippets: one cell per function, plus the data
and the top-level loops a real student notebook has. Written the way students write, not
copied from the reference.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import write_fast_course, write_notebook

EXERCISE = Path(__file__).resolve().parent.parent / "exercises" / "self_attention.ipynb"

SETUP = """\
import numpy as np
np.random.seed(3)
N = 3
D = 4
all_x = []
for n in range(N):
    all_x.append(np.random.normal(size=(D, 1)))
np.random.seed(0)
omega_q = np.random.normal(size=(D, D))
omega_k = np.random.normal(size=(D, D))
omega_v = np.random.normal(size=(D, D))
beta_q = np.random.normal(size=(D, 1))
beta_k = np.random.normal(size=(D, 1))
beta_v = np.random.normal(size=(D, 1))
X = np.hstack(all_x)"""

QKV_LOOP = """\
def qkv_loop(all_x, omega_q, omega_k, omega_v, beta_q, beta_k, beta_v):
    all_queries = []
    all_keys = []
    all_values = []
    for x in all_x:
        query = omega_q @ x + beta_q
        key = omega_k @ x + beta_k
        value = omega_v @ x + beta_v
        all_queries.append(query)
        all_keys.append(key)
        all_values.append(value)
    return all_queries, all_keys, all_values"""

SOFTMAX = """\
def softmax(items_in):
    items_out = np.exp(items_in) / np.sum(np.exp(items_in))
    return items_out"""

ATTENTION_LOOP = """\
def attention_loop(all_queries, all_keys, all_values):
    all_x_prime = []
    for n in range(len(all_queries)):
        all_km_qn = []
        for key in all_keys:
            dot_product = np.transpose(all_queries[n]).dot(key)
            all_km_qn.append(dot_product)
        attention = softmax(all_km_qn)
        x_prime = np.zeros_like(all_values[0])
        for m in range(len(all_values)):
            x_prime = x_prime + all_values[m] * attention[m]
        all_x_prime.append(x_prime)
    return all_x_prime"""

SOFTMAX_COLS = """\
def softmax_cols(data_in):
    exp_values = np.exp(data_in)
    denom = np.sum(exp_values, axis=0)
    return exp_values / denom"""

SELF_ATTENTION = """\
def self_attention(X, omega_v, omega_q, omega_k, beta_v, beta_q, beta_k):
    queries = beta_q + omega_q @ X
    keys = beta_k + omega_k @ X
    values = beta_v + omega_v @ X
    all_km_qn = np.transpose(keys) @ queries
    attention = softmax_cols(all_km_qn)
    X_prime = values @ attention
    return X_prime"""

SCALED = """\
def scaled_dot_product_self_attention(X, omega_v, omega_q, omega_k, beta_v, beta_q, beta_k):
    queries = beta_q + omega_q @ X
    keys = beta_k + omega_k @ X
    values = beta_v + omega_v @ X
    all_km_qn = np.transpose(keys) @ queries
    all_km_qn = all_km_qn / np.sqrt(queries.shape[0])
    attention = softmax_cols(all_km_qn)
    X_prime = values @ attention
    return X_prime"""

USE = """\
all_queries, all_keys, all_values = qkv_loop(all_x, omega_q, omega_k, omega_v, beta_q, beta_k, beta_v)
all_x_prime = attention_loop(all_queries, all_keys, all_values)
X_prime = scaled_dot_product_self_attention(X, omega_v, omega_q, omega_k, beta_v, beta_q, beta_k)
print(X_prime)"""

CORRECT = {
    "qkv_loop": QKV_LOOP,
    "softmax": SOFTMAX,
    "attention_loop": ATTENTION_LOOP,
    "softmax_cols": SOFTMAX_COLS,
    "self_attention": SELF_ATTENTION,
    "scaled_dot_product_self_attention": SCALED,
}

# Seed 001's scaled function, in our names: the scaled scores are computed and thrown away,
# and the result is returned transposed.
SEED_001_SCALED = """\
def scaled_dot_product_self_attention(X, omega_v, omega_q, omega_k, beta_v, beta_q, beta_k):
    queries = beta_q + omega_q @ X
    keys = beta_k + omega_k @ X
    values = beta_v + omega_v @ X
    all_km_qn = np.transpose(keys) @ queries
    all_km_qn / 2
    attention = softmax_cols(all_km_qn)
    X_prime = values @ attention
    return np.transpose(X_prime)"""

SEED_001_SELF = SELF_ATTENTION.replace("return X_prime", "return np.transpose(X_prime)")

SCALE_HARDCODED = SCALED.replace("/ np.sqrt(queries.shape[0])", "/ 2")
SCALE_GLOBAL_D = SCALED.replace("/ np.sqrt(queries.shape[0])", "/ np.sqrt(D)")
SCALE_MISSING = SCALED.replace("    all_km_qn = all_km_qn / np.sqrt(queries.shape[0])\n", "")

# Equivalent correct form: scores as Qᵀ K with a row softmax, then V Aᵀ.
ROWS_FORM = """\
def self_attention(X, omega_v, omega_q, omega_k, beta_v, beta_q, beta_k):
    Q = omega_q @ X + beta_q
    K = omega_k @ X + beta_k
    V = omega_v @ X + beta_v
    scores = Q.T @ K
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights = weights / weights.sum(axis=1, keepdims=True)
    return V @ weights.T"""

SOFTMAX_COLS_WRONG_AXIS = SOFTMAX_COLS.replace("axis=0", "axis=1, keepdims=True")

ELEMENTWISE = QKV_LOOP.replace("omega_q @ x", "omega_q * x")

MISSING_BIAS = SELF_ATTENTION.replace("beta_v + omega_v @ X", "omega_v @ X")

FLOAT_LOOP = """\
def attention_loop(all_queries, all_keys, all_values):
    all_x_prime = []
    for query in all_queries:
        scores = []
        for key in all_keys:
            scores.append(float(query.T @ key))
        attention = softmax(scores)
        x_prime = 0
        for m, value in enumerate(all_values):
            x_prime = x_prime + attention[m] * value
        all_x_prime.append(x_prime)
    return all_x_prime"""

MUTATING_SOFTMAX_COLS = """\
def softmax_cols(data_in):
    data_in -= np.max(data_in, axis=0)
    data_in[:] = np.exp(data_in)
    return data_in / np.sum(data_in, axis=0)"""


def cells(**overrides: str | None) -> list[str]:
    """Setup, one cell per function (overridden, or left out when None), then the usage cell."""
    functions = {**CORRECT, **overrides}
    return [SETUP, *(src for src in functions.values() if src is not None), USE]


# A class of mixed quality: correct work, the seed's mistakes, equivalent forms, a cell that
# does not parse, and (every tenth student) the exercise handed in untouched.
VARIANTS: list[dict[str, str]] = [
    {},
    {"scaled_dot_product_self_attention": SEED_001_SCALED},
    {"scaled_dot_product_self_attention": SCALE_HARDCODED},
    {"softmax_cols": SOFTMAX_COLS_WRONG_AXIS},
    {"qkv_loop": ELEMENTWISE},
    {"self_attention": ROWS_FORM},
    {"attention_loop": FLOAT_LOOP},
    {"softmax": "def softmax(items_in):\n    return np.exp(items_in\n"},
    {"self_attention": MISSING_BIAS},
]


def write_class(folder: Path, count: int) -> list[Path]:
    """`count` honest notebooks of mixed quality, student00000.ipynb on, each file different
    (as real submissions are); returns their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for i in range(count):
        path = folder / f"student{i:05d}.ipynb"
        if i % 10 == 9:
            shutil.copy(EXERCISE, path)
        else:
            notebook = cells(**VARIANTS[i % len(VARIANTS)])
            notebook[0] += f"\n# student {i}"
            write_notebook(path, notebook)
        written.append(path)
    return written


def fast_class(root: Path, *names: str) -> tuple[Path, Path]:
    """Under `root`: course/ (write_fast_course) and class/ with a correct notebook per
    name; (the course folder, the class folder)."""
    course, folder = root / "course", root / "class"
    write_fast_course(course)
    folder.mkdir()
    for name in names:
        write_notebook(folder / f"{name}.ipynb", cells())
    return course, folder
