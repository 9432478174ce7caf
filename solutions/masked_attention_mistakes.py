# Known mistakes of the `masked_attention` assignment (instructor-side; never shipped).
# Executed in a copy of the solution notebook's namespace (see self_attention_mistakes.py).
# Variant names are `<target>__<mistake id>`; `grader selftest` pastes each, renamed, into
# the solution notebook and checks that it is diagnosed as exactly its id.

# ---------------------------------------------------------------- causal_mask


@CATALOGUE.mistake(
    "causal_mask", "mask_not_neg_inf",
    "builds a 0/1 mask: adding 0 or 1 to a score hides nothing",
    hint="put -np.inf above the diagonal and 0 elsewhere, so masked weights become exactly 0",
    locate=r"tril|triu|ones",
)
def causal_mask__mask_not_neg_inf(L):
    return np.tril(np.ones((L, L)))


@CATALOGUE.mistake(
    "causal_mask", "mask_wrong_triangle",
    "masks the past (below the diagonal) instead of the future (above it)",
    hint="position i may look at j ≤ i: the -inf entries belong above the diagonal",
    locate=r"tril|triu",
)
def causal_mask__mask_wrong_triangle(L):
    mask = np.zeros((L, L))
    mask[np.tril_indices(L, k=-1)] = -np.inf
    return mask


# ---------------------------------------------------------------- softmax


@CATALOGUE.mistake(
    "softmax", "softmax_overflow",
    "exponentiates the raw scores: for scores near 1000, np.exp overflows to inf and gives nan",
    hint="subtract each row's maximum first: `x - np.max(x, axis=-1, keepdims=True)`",
    locate=r"exp",
)
def softmax__softmax_overflow(x):
    e = np.exp(x)
    return e / np.sum(e, axis=-1, keepdims=True)


@CATALOGUE.mistake(
    "softmax", "softmax_wrong_axis",
    "normalises down the columns (axis 0) instead of along each row (the last axis)",
    hint="use `axis=-1, keepdims=True` for both the maximum and the sum",
    locate=r"axis\s*=\s*0",
)
def softmax__softmax_wrong_axis(x):
    e = np.exp(x - np.max(x, axis=0, keepdims=True))
    return e / np.sum(e, axis=0, keepdims=True)


@CATALOGUE.mistake(
    "softmax", "mutates_input",
    "subtracts the maximum in place, which changes the caller's array",
    hint="write `shifted = x - np.max(...)` instead of `x -= np.max(...)`",
)
def softmax__mutates_input(x):
    x -= np.max(x, axis=-1, keepdims=True)
    e = np.exp(x)
    return e / np.sum(e, axis=-1, keepdims=True)


# ---------------------------------------------------------------- scaled_dot_product_attention


@CATALOGUE.mistake(
    "scaled_dot_product_attention", "scale_missing",
    "does not scale the scores at all",
    hint="divide q kᵀ by np.sqrt(d_k), with d_k = q.shape[-1]",
)
def scaled_dot_product_attention__scale_missing(q, k, v, mask=None):
    scores = q @ k.T
    if mask is not None:
        scores = scores + mask
    attention = softmax(scores)
    return attention @ v, attention


@CATALOGUE.mistake(
    "scaled_dot_product_attention", "scale_wrong_dim",
    "scales by the square root of d_v (the values' width) instead of d_k",
    hint="d_k is the width of the queries and keys: `q.shape[-1]`",
    locate=r"sqrt",
)
def scaled_dot_product_attention__scale_wrong_dim(q, k, v, mask=None):
    scores = q @ k.T / np.sqrt(v.shape[-1])
    if mask is not None:
        scores = scores + mask
    attention = softmax(scores)
    return attention @ v, attention


@CATALOGUE.mistake(
    "scaled_dot_product_attention", "mask_after_softmax",
    "adds the mask after the softmax, so the weights no longer sum to one and -inf leaks out",
    hint="add the mask to the scaled scores, then take the softmax",
    locate=r"\+\s*mask\b|\bmask\s*\+",
)
def scaled_dot_product_attention__mask_after_softmax(q, k, v, mask=None):
    attention = softmax(q @ k.T / np.sqrt(q.shape[-1]))
    if mask is not None:
        attention = attention + mask
    return attention @ v, attention


@CATALOGUE.mistake(
    "scaled_dot_product_attention", "mask_truthiness",
    "tests `if mask:`, which raises for an array: use `if mask is not None:`",
    hint="an array has no single truth value; compare with None instead",
    requires="truthiness",
)
def scaled_dot_product_attention__mask_truthiness(q, k, v, mask=None):
    scores = q @ k.T / np.sqrt(q.shape[-1])
    if mask:
        scores = scores + mask
    attention = softmax(scores)
    return attention @ v, attention


@CATALOGUE.mistake(
    "scaled_dot_product_attention", "returns_tuple",
    "returns the pair in the wrong order: (attention, out) instead of (out, attention)",
    hint="return `out, attention`",
    locate=r"return",
)
def scaled_dot_product_attention__returns_tuple(q, k, v, mask=None):
    scores = q @ k.T / np.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores + mask
    attention = softmax(scores)
    return attention, attention @ v
