# Known mistakes of the `self_attention` assignment (instructor-side; never shipped).
#
# Executed by the grader in a copy of the solution notebook's namespace: `np`, the reference
# functions (`softmax`, `softmax_cols`, …) and the notebook's globals (`D`, `N`, `X`) are in
# scope. Each variant is written as a student would write the mistake, because `grader
# selftest` also pastes it (renamed to the target) into the solution notebook and checks the
# diagnosis end to end. Variant names are `<target>__<mistake id>` so none shadows the reference.

# ---------------------------------------------------------------- qkv_loop


@CATALOGUE.mistake(
    "qkv_loop", "missing_bias",
    "leaves out the biases: the queries, keys or values are Ω x without + β",
    hint="add the bias to each product: `omega_q @ x + beta_q`",
    locate=r"omega_\w+\s*@\s*\w+\s*\)?\s*(#.*)?$",
)
def qkv_loop__missing_bias(all_x, omega_q, omega_k, omega_v, beta_q, beta_k, beta_v):
    all_queries = [omega_q @ x for x in all_x]
    all_keys = [omega_k @ x for x in all_x]
    all_values = [omega_v @ x for x in all_x]
    return all_queries, all_keys, all_values


@CATALOGUE.mistake(
    "qkv_loop", "elementwise_product",
    "multiplies entry by entry (`*`) where a matrix product (`@`) is meant",
    hint="use `omega_q @ x`; `*` broadcasts the D×1 column across the D×D matrix",
    locate=r"omega_\w+\s*\*",
)
def qkv_loop__elementwise_product(all_x, omega_q, omega_k, omega_v, beta_q, beta_k, beta_v):
    all_queries = [omega_q * x + beta_q for x in all_x]
    all_keys = [omega_k * x + beta_k for x in all_x]
    all_values = [omega_v * x + beta_v for x in all_x]
    return all_queries, all_keys, all_values


# ---------------------------------------------------------------- softmax


@CATALOGUE.mistake(
    "softmax", "softmax_no_exp",
    "divides the raw scores by their sum, without exponentiating them first",
    hint="exponentiate first: `e = np.exp(scores)`, then `e / e.sum()`",
)
def softmax__softmax_no_exp(items_in):
    scores = np.asarray(items_in, dtype=float)
    return scores / np.sum(scores)


@CATALOGUE.mistake(
    "softmax", "sum_of_raw_scores",
    "divides the exponentials by the sum of the raw scores, not by the sum of the exponentials",
    hint="sum what you exponentiated: `e = np.exp(scores)`, then `e / np.sum(e)`",
    locate=r"sum\(",
)
def softmax__sum_of_raw_scores(items_in):
    scores = np.asarray(items_in, dtype=float)
    return np.exp(scores) / np.sum(scores)


# ---------------------------------------------------------------- softmax_cols


@CATALOGUE.mistake(
    "softmax_cols", "softmax_wrong_axis",
    "normalises each row instead of each column",
    hint="sum down the columns: `np.sum(e, axis=0, keepdims=True)`",
    locate=r"axis\s*=\s*(1|-1)",
)
def softmax_cols__softmax_wrong_axis(data_in):
    e = np.exp(data_in)
    return e / np.sum(e, axis=1, keepdims=True)


@CATALOGUE.mistake(
    "softmax_cols", "softmax_no_exp",
    "divides the raw scores by their column sums, without exponentiating them first",
    hint="exponentiate first: `e = np.exp(data_in)`, then divide by the column sums of `e`",
)
def softmax_cols__softmax_no_exp(data_in):
    return data_in / np.sum(data_in, axis=0, keepdims=True)


@CATALOGUE.mistake(
    "softmax_cols", "sum_of_raw_scores",
    "divides the exponentials by the column sums of the raw scores, not of the exponentials",
    hint="sum what you exponentiated: `e = np.exp(data_in)`, then "
    "`e / np.sum(e, axis=0, keepdims=True)`",
    locate=r"sum\(",
)
def softmax_cols__sum_of_raw_scores(data_in):
    return np.exp(data_in) / np.sum(data_in, axis=0, keepdims=True)


# ---------------------------------------------------------------- self_attention


@CATALOGUE.mistake(
    "self_attention", "missing_bias",
    "leaves out the biases: Q, K or V is Ω X without + β",
    hint="add the bias column to each product: `omega_q @ X + beta_q`",
    locate=r"omega_\w+\s*@\s*X\s*\)?\s*(#.*)?$",
)
def self_attention__missing_bias(X, omega_v, omega_q, omega_k, beta_v, beta_q, beta_k):
    queries = omega_q @ X
    keys = omega_k @ X
    values = omega_v @ X
    return values @ softmax_cols(keys.T @ queries)


@CATALOGUE.mistake(
    "self_attention", "attention_transposed",
    "computes the scores as Qᵀ K (queries × keys) and then takes the column softmax",
    hint="entry (m, n) must be key m against query n: `keys.T @ queries`",
    locate=r"(queries|Q)\.T\s*@|transpose\(\s*(queries|Q)\s*\)",
)
def self_attention__attention_transposed(X, omega_v, omega_q, omega_k, beta_v, beta_q, beta_k):
    queries = omega_q @ X + beta_q
    keys = omega_k @ X + beta_k
    values = omega_v @ X + beta_v
    return values @ softmax_cols(queries.T @ keys)


@CATALOGUE.mistake(
    "self_attention", "softmax_over_queries",
    "with Qᵀ K, the column softmax makes each key's weights sum to one instead of each query's",
    hint="with Qᵀ K normalise the rows (or use Kᵀ Q with softmax_cols), then V Aᵀ",
    locate=r"(queries|Q)\.T\s*@|transpose\(\s*(queries|Q)\s*\)",
)
def self_attention__softmax_over_queries(X, omega_v, omega_q, omega_k, beta_v, beta_q, beta_k):
    queries = omega_q @ X + beta_q
    keys = omega_k @ X + beta_k
    values = omega_v @ X + beta_v
    return values @ softmax_cols(queries.T @ keys).T


@CATALOGUE.mistake(
    "self_attention", "scale_in_unscaled",
    "scales the scores, but this function is the unscaled one",
    hint="leave the scores as Kᵀ Q here; scaling belongs in scaled_dot_product_self_attention",
    locate=r"sqrt|/",
)
def self_attention__scale_in_unscaled(X, omega_v, omega_q, omega_k, beta_v, beta_q, beta_k):
    queries = omega_q @ X + beta_q
    keys = omega_k @ X + beta_k
    values = omega_v @ X + beta_v
    return values @ softmax_cols(keys.T @ queries / np.sqrt(queries.shape[0]))


@CATALOGUE.mistake(
    "self_attention", "output_transposed",
    "returns the N×D transpose of the D×N result",
    hint="return `values @ attention` as it is, one column per input",
    locate=r"return",
)
def self_attention__output_transposed(X, omega_v, omega_q, omega_k, beta_v, beta_q, beta_k):
    queries = omega_q @ X + beta_q
    keys = omega_k @ X + beta_k
    values = omega_v @ X + beta_v
    return (values @ softmax_cols(keys.T @ queries)).T


@CATALOGUE.mistake(
    "self_attention", "returns_tuple",
    "returns a tuple (the output and the attention) where only the D×N output is expected",
    hint="return the output alone",
    locate=r"return",
)
def self_attention__returns_tuple(X, omega_v, omega_q, omega_k, beta_v, beta_q, beta_k):
    queries = omega_q @ X + beta_q
    keys = omega_k @ X + beta_k
    values = omega_v @ X + beta_v
    attention = softmax_cols(keys.T @ queries)
    return values @ attention, attention


# ---------------------------------------------------------------- scaled_dot_product_self_attention


@CATALOGUE.mistake(
    "scaled_dot_product_self_attention", "scale_discarded",
    "computes the scaled scores and throws them away: the softmax gets the unscaled ones",
    hint="assign the result, e.g. `scores = scores / np.sqrt(d_q)`, and pass that on",
    requires="discarded",
    static="`{code}` computes the scaled scores and throws them away, so the softmax gets "
    "the unscaled ones",
    replaces="scale_missing",  # discarding the scaling is why it is missing
)
def scaled_dot_product_self_attention__scale_discarded(X, omega_v, omega_q, omega_k, beta_v, beta_q, beta_k):
    queries = omega_q @ X + beta_q
    keys = omega_k @ X + beta_k
    values = omega_v @ X + beta_v
    scores = keys.T @ queries
    scores / np.sqrt(queries.shape[0])
    return values @ softmax_cols(scores)


@CATALOGUE.mistake(
    "scaled_dot_product_self_attention", "scale_missing",
    "does not scale the scores at all",
    hint="divide Kᵀ Q by √D_q, the square root of the number of rows of Q, before the softmax",
)
def scaled_dot_product_self_attention__scale_missing(X, omega_v, omega_q, omega_k, beta_v, beta_q, beta_k):
    queries = omega_q @ X + beta_q
    keys = omega_k @ X + beta_k
    values = omega_v @ X + beta_v
    return values @ softmax_cols(keys.T @ queries)


@CATALOGUE.mistake(
    "scaled_dot_product_self_attention", "scale_hardcoded",
    "divides by a fixed number (2 = √4): right when D_q = 4 and wrong for every other size",
    hint="compute the divisor from the data: `np.sqrt(queries.shape[0])`",
    requires="literal_divisor",
    static="divides by the literal `{code}`, which is right only when D_q = 4",
)
def scaled_dot_product_self_attention__scale_hardcoded(X, omega_v, omega_q, omega_k, beta_v, beta_q, beta_k):
    queries = omega_q @ X + beta_q
    keys = omega_k @ X + beta_k
    values = omega_v @ X + beta_v
    return values @ softmax_cols(keys.T @ queries / 2)


@CATALOGUE.mistake(
    "scaled_dot_product_self_attention", "scale_by_d",
    "divides the scores by D_q instead of by its square root",
    hint="use `np.sqrt(queries.shape[0])`, not `queries.shape[0]`",
    locate=r"/",
)
def scaled_dot_product_self_attention__scale_by_d(X, omega_v, omega_q, omega_k, beta_v, beta_q, beta_k):
    queries = omega_q @ X + beta_q
    keys = omega_k @ X + beta_k
    values = omega_v @ X + beta_v
    return values @ softmax_cols(keys.T @ queries / queries.shape[0])


@CATALOGUE.mistake(
    "scaled_dot_product_self_attention", "scale_wrong_dim",
    "scales by the square root of the number of inputs N instead of the query dimension D_q",
    hint="D_q is the number of rows of Q: `np.sqrt(queries.shape[0])`",
    locate=r"sqrt",
)
def scaled_dot_product_self_attention__scale_wrong_dim(X, omega_v, omega_q, omega_k, beta_v, beta_q, beta_k):
    queries = omega_q @ X + beta_q
    keys = omega_k @ X + beta_k
    values = omega_v @ X + beta_v
    return values @ softmax_cols(keys.T @ queries / np.sqrt(X.shape[1]))


@CATALOGUE.mistake(
    "scaled_dot_product_self_attention", "uses_global",
    "reads the notebook's global variable instead of the shape of its own inputs",
    hint="take sizes from the arguments (`queries.shape[0]`), never from notebook globals",
    requires="global",
)
def scaled_dot_product_self_attention__uses_global(X, omega_v, omega_q, omega_k, beta_v, beta_q, beta_k):
    queries = omega_q @ X + beta_q
    keys = omega_k @ X + beta_k
    values = omega_v @ X + beta_v
    return values @ softmax_cols(keys.T @ queries / np.sqrt(D))


@CATALOGUE.mistake(
    "scaled_dot_product_self_attention", "output_transposed",
    "returns the N×D transpose of the D×N result",
    hint="return `values @ attention` as it is, one column per input",
    locate=r"return",
)
def scaled_dot_product_self_attention__output_transposed(X, omega_v, omega_q, omega_k, beta_v, beta_q, beta_k):
    queries = omega_q @ X + beta_q
    keys = omega_k @ X + beta_k
    values = omega_v @ X + beta_v
    return (values @ softmax_cols(keys.T @ queries / np.sqrt(queries.shape[0]))).T
