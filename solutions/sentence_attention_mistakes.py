# Known mistakes of the `sentence_attention` assignment (instructor-side; never shipped).
# Executed in a copy of the solution notebook's namespace (see self_attention_mistakes.py).
# Each variant stands on its own: selftest pastes it alone into the solution notebook.

# ---------------------------------------------------------------- stable_softmax


@CATALOGUE.mistake(
    "stable_softmax", "mutates_input",
    "subtracts the maximum in place (`x -= …`), which changes the caller's scores",
    hint="write `shifted = x - np.max(x, axis=axis, keepdims=True)`",
)
def stable_softmax__mutates_input(x, axis=-1):
    x -= np.max(x, axis=axis, keepdims=True)
    e = np.exp(x)
    return e / np.sum(e, axis=axis, keepdims=True)


@CATALOGUE.mistake(
    "stable_softmax", "softmax_overflow",
    "exponentiates the raw scores: large scores overflow to inf and give nan",
    hint="subtract the maximum along `axis` before np.exp",
    locate=r"exp",
)
def stable_softmax__softmax_overflow(x, axis=-1):
    e = np.exp(x)
    return e / np.sum(e, axis=axis, keepdims=True)


@CATALOGUE.mistake(
    "stable_softmax", "softmax_wrong_axis",
    "always normalises the last axis and ignores the `axis` argument",
    hint="pass `axis=axis` to np.max and np.sum",
    locate=r"axis\s*=\s*(-1|1)\b",
)
def stable_softmax__softmax_wrong_axis(x, axis=-1):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


# ---------------------------------------------------------------- word_attention


@CATALOGUE.mistake(
    "word_attention", "scale_discarded",
    "divides the scores by √d_k and throws the result away: the softmax gets the unscaled ones",
    hint="assign it: `scores = scores / np.sqrt(K.shape[1])`",
    requires="discarded",
    static="`{code}` computes the scaled scores and throws them away, so the softmax gets "
    "the unscaled ones",
    replaces="scale_missing",  # discarding the scaling is why it is missing
)
def word_attention__scale_discarded(i, Q, K, V, scaled=True):
    scores = np.array([Q[i] @ K[j] for j in range(K.shape[0])])
    if scaled:
        scores / np.sqrt(K.shape[1])
    weights = stable_softmax(scores)
    return weights @ V


@CATALOGUE.mistake(
    "word_attention", "scale_missing",
    "never divides the scores by √d_k, even when `scaled` is true",
    hint="when `scaled`, divide the scores by np.sqrt(K.shape[1])",
)
def word_attention__scale_missing(i, Q, K, V, scaled=True):
    scores = np.array([Q[i] @ K[j] for j in range(K.shape[0])])
    weights = stable_softmax(scores)
    return weights @ V


@CATALOGUE.mistake(
    "word_attention", "scale_in_unscaled",
    "scales the scores even when `scaled` is false",
    hint="divide by √d_k only inside `if scaled:`",
    locate=r"sqrt",
)
def word_attention__scale_in_unscaled(i, Q, K, V, scaled=True):
    scores = np.array([Q[i] @ K[j] for j in range(K.shape[0])]) / np.sqrt(K.shape[1])
    weights = stable_softmax(scores)
    return weights @ V


@CATALOGUE.mistake(
    "word_attention", "scale_wrong_dim",
    "scales by √d_v (the width of the values) instead of √d_k",
    hint="d_k is the width of the queries and keys: `K.shape[1]`",
    locate=r"sqrt",
)
def word_attention__scale_wrong_dim(i, Q, K, V, scaled=True):
    scores = np.array([Q[i] @ K[j] for j in range(K.shape[0])])
    if scaled:
        scores = scores / np.sqrt(V.shape[1])
    weights = stable_softmax(scores)
    return weights @ V


# ---------------------------------------------------------------- sentence_attention


@CATALOGUE.mistake(
    "sentence_attention", "scale_discarded",
    "divides the scores by √d_k and throws the result away: the softmax gets the unscaled ones",
    hint="assign it: `scores = scores / np.sqrt(K.shape[1])`",
    requires="discarded",
    static="`{code}` computes the scaled scores and throws them away, so the softmax gets "
    "the unscaled ones",
    replaces="scale_missing",  # discarding the scaling is why it is missing
)
def sentence_attention__scale_discarded(Q, K, V, scaled=True):
    scores = Q @ K.T
    if scaled:
        scores / np.sqrt(K.shape[1])
    return stable_softmax(scores, axis=1) @ V


@CATALOGUE.mistake(
    "sentence_attention", "scale_missing",
    "never divides the scores by √d_k, even when `scaled` is true",
    hint="when `scaled`, divide Q Kᵀ by np.sqrt(K.shape[1])",
)
def sentence_attention__scale_missing(Q, K, V, scaled=True):
    return stable_softmax(Q @ K.T, axis=1) @ V


@CATALOGUE.mistake(
    "sentence_attention", "scale_in_unscaled",
    "scales the scores even when `scaled` is false",
    hint="divide by √d_k only inside `if scaled:`",
    locate=r"sqrt",
)
def sentence_attention__scale_in_unscaled(Q, K, V, scaled=True):
    return stable_softmax(Q @ K.T / np.sqrt(K.shape[1]), axis=1) @ V


@CATALOGUE.mistake(
    "sentence_attention", "softmax_wrong_axis",
    "normalises each column of the scores instead of each row (each word's weights)",
    hint="take the softmax along axis 1, so that each row sums to one",
    locate=r"axis\s*=\s*0",
)
def sentence_attention__softmax_wrong_axis(Q, K, V, scaled=True):
    scores = Q @ K.T
    if scaled:
        scores = scores / np.sqrt(K.shape[1])
    return stable_softmax(scores, axis=0) @ V


@CATALOGUE.mistake(
    "sentence_attention", "attention_transposed",
    "computes the scores as K Qᵀ: row i then holds the scores of key i, not of word i's query",
    hint="the scores of word i are row i of Q @ K.T",
    locate=r"K\s*@\s*Q\.T|K\s*@\s*np\.transpose\(\s*Q",
)
def sentence_attention__attention_transposed(Q, K, V, scaled=True):
    scores = K @ Q.T
    if scaled:
        scores = scores / np.sqrt(K.shape[1])
    return stable_softmax(scores, axis=1) @ V


# ---------------------------------------------------------------- pointwise_mutual_information


@CATALOGUE.mistake(
    "pointwise_mutual_information", "wrong_log_base",
    "uses the natural logarithm; PMI is measured in bits, with log base 2",
    hint="use np.log2 (or math.log(x, 2))",
    locate=r"log",
)
def pointwise_mutual_information__wrong_log_base(p_x, p_y, p_xy):
    return np.log(p_xy / (p_x * p_y))
