# Known mistakes of the `multihead_attention` assignment (instructor-side; never shipped).
# Executed in a copy of the solution notebook's namespace (see self_attention_mistakes.py).
# Each variant must stand on its own (no private helpers): selftest pastes it alone.



@CATALOGUE.mistake(
    "multihead_scaled_self_attention", "scale_missing",
    "does not scale the scores of the heads",
    hint="each head divides Kᵀ Q by √H_D, the number of rows of its queries",
)
def multihead_scaled_self_attention__scale_missing(X, omega_v1, omega_q1, omega_k1, beta_v1, beta_q1, beta_k1, omega_v2, omega_q2, omega_k2, beta_v2, beta_q2, beta_k2, omega_c):
    heads = []
    for w_v, w_q, w_k, b_v, b_q, b_k in [
        (omega_v1, omega_q1, omega_k1, beta_v1, beta_q1, beta_k1),
        (omega_v2, omega_q2, omega_k2, beta_v2, beta_q2, beta_k2),
    ]:
        queries = w_q @ X + b_q
        keys = w_k @ X + b_k
        values = w_v @ X + b_v
        heads.append(values @ softmax_cols(keys.T @ queries))
    return omega_c @ np.vstack(heads)


@CATALOGUE.mistake(
    "multihead_scaled_self_attention", "scale_wrong_dim",
    "scales each head by √D, the model width, instead of √H_D, the head's width",
    hint="the scores of a head are sums over its H_D query rows: divide by np.sqrt(H_D)",
    locate=r"sqrt",
)
def multihead_scaled_self_attention__scale_wrong_dim(X, omega_v1, omega_q1, omega_k1, beta_v1, beta_q1, beta_k1, omega_v2, omega_q2, omega_k2, beta_v2, beta_q2, beta_k2, omega_c):
    heads = []
    for w_v, w_q, w_k, b_v, b_q, b_k in [
        (omega_v1, omega_q1, omega_k1, beta_v1, beta_q1, beta_k1),
        (omega_v2, omega_q2, omega_k2, beta_v2, beta_q2, beta_k2),
    ]:
        queries = w_q @ X + b_q
        keys = w_k @ X + b_k
        values = w_v @ X + b_v
        heads.append(values @ softmax_cols(keys.T @ queries / np.sqrt(X.shape[0])))
    return omega_c @ np.vstack(heads)


@CATALOGUE.mistake(
    "multihead_scaled_self_attention", "output_transposed",
    "returns the N×D transpose of the D×N result",
    hint="return `omega_c @ stacked` as it is",
    locate=r"return",
)
def multihead_scaled_self_attention__output_transposed(X, omega_v1, omega_q1, omega_k1, beta_v1, beta_q1, beta_k1, omega_v2, omega_q2, omega_k2, beta_v2, beta_q2, beta_k2, omega_c):
    head1 = one_head(X, omega_v1, omega_q1, omega_k1, beta_v1, beta_q1, beta_k1)
    head2 = one_head(X, omega_v2, omega_q2, omega_k2, beta_v2, beta_q2, beta_k2)
    return (omega_c @ np.vstack([head1, head2])).T


@CATALOGUE.mistake(
    "multihead_scaled_self_attention", "missing_bias",
    "leaves out the biases of the heads",
    hint="add each head's β to its products: `omega_q1 @ X + beta_q1`",
    locate=r"omega_\w+\s*@\s*X\s*\)?\s*(#.*)?$",
)
def multihead_scaled_self_attention__missing_bias(X, omega_v1, omega_q1, omega_k1, beta_v1, beta_q1, beta_k1, omega_v2, omega_q2, omega_k2, beta_v2, beta_q2, beta_k2, omega_c):
    zero = np.zeros_like(beta_v1)
    head1 = one_head(X, omega_v1, omega_q1, omega_k1, zero, zero, zero)
    head2 = one_head(X, omega_v2, omega_q2, omega_k2, zero, zero, zero)
    return omega_c @ np.vstack([head1, head2])
