"""Inputs declared in config.yaml (a target's `args:`), drawn without any course code.

Each argument is one mapping: a shape in size keys (`shape: [N, D]`), a distribution with its
parameters, a dtype, special values, or a value derived from the sizes (`size: L`,
`causal_mask: L`), optionally as a list (`list: N`: a Python list of N such draws). The
arguments are drawn in the order written, each from the same generator, so a declaration
makes exactly the draws a hand-written builder making them in that order would.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from grader.course.inputs import Rng
from grader.errors import ConfigError

Dim = str | int
DISTRIBUTIONS = ("normal", "uniform", "integers", "positive")
DTYPES = ("float64", "float32", "int64", "bool")
SPECIALS = ("overflow", "masked")
# Added to every entry by `special: overflow`: exp() of it overflows float64 (> 709), so a
# softmax that does not subtract the maximum first returns nan.
OVERFLOW_SHIFT = 1000.0


@dataclass(frozen=True)
class ArgSpec:
    """One declared argument of a target, as config.yaml states it (already validated)."""

    name: str
    shape: tuple[Dim, ...] | None = None  # None: a scalar (a Python number)
    distribution: str = "normal"
    mean: float = 0.0
    std: float = 1.0
    fan_in: Dim | None = None  # normal: divided by √fan_in, as weights are initialised
    low: float | Dim = 0.0
    high: float | Dim = 1.0
    dtype: str = "float64"
    special: str | None = None
    size: Dim | None = None  # derived: the size itself, as an int
    causal_mask: Dim | None = None  # derived: L×L, 0 on and below the diagonal, -inf above
    value: float | None = None  # a constant, such as eps
    list_of: Dim | None = None  # `list:`, a Python list of this many draws

    def needs(self) -> tuple[str, ...]:
        """The size keys this argument reads."""
        dims: list[Any] = [*(self.shape or ()), self.fan_in, self.size, self.causal_mask]
        dims += [self.list_of]
        if self.distribution == "integers":
            dims += [self.low, self.high]
        return tuple(dict.fromkeys(d for d in dims if isinstance(d, str)))


_FIELDS = {"list": "list_of"}  # config key → ArgSpec field, where they differ


def parse_args(raw: Sequence[Mapping[str, Any]], where: str) -> tuple[ArgSpec, ...]:
    """The schema-checked `args:` list as ArgSpecs; ConfigError for what the schema cannot
    say (a distribution's parameter given to another, two derived values at once)."""
    specs = []
    for position, item in enumerate(raw):
        here = f"{where}.args[{position}]"
        derived = [k for k in ("size", "causal_mask", "value") if k in item]
        if len(derived) > 1 or (derived and ({"shape", "distribution", "list"} & set(item))):
            raise ConfigError(f"{here}: `{derived[0]}` is a value of its own: give it alone")
        kind = item.get("distribution", "normal")
        if kind not in ("normal", "positive") and ({"mean", "std", "fan_in"} & set(item)):
            raise ConfigError(f"{here}: mean, std and fan_in are parameters of normal")
        if kind == "normal" and ({"low", "high"} & set(item)):
            raise ConfigError(f"{here}: low and high are parameters of uniform and integers")
        fields = {_FIELDS.get(k, k): v for k, v in item.items() if k != "shape"}
        shape = tuple(item["shape"]) if "shape" in item else None
        specs.append(ArgSpec(**{"name": f"arg{position}", **fields, "shape": shape}))
    return tuple(specs)


def declared_needs(args: Sequence[ArgSpec]) -> tuple[str, ...]:
    """Every size key the declared arguments read, in order of first use."""
    return tuple(dict.fromkeys(k for arg in args for k in arg.needs()))


def draw_args(args: Sequence[ArgSpec], rng: Rng, sizes: Mapping[str, int]) -> tuple[Any, ...]:
    """One call's arguments, drawn in order from `rng`."""
    return tuple(_draw(arg, rng, sizes) for arg in args)


def _dim(value: Dim | float, sizes: Mapping[str, int]) -> int:
    return sizes[value] if isinstance(value, str) else int(value)


def _draw(arg: ArgSpec, rng: Rng, sizes: Mapping[str, int]) -> Any:
    if arg.value is not None:
        return arg.value
    if arg.size is not None:
        return _dim(arg.size, sizes)
    if arg.causal_mask is not None:
        length = _dim(arg.causal_mask, sizes)
        mask = np.zeros((length, length))
        mask[np.triu_indices(length, k=1)] = -np.inf
        return mask
    if arg.list_of is not None:
        return [_one(arg, rng, sizes) for _ in range(_dim(arg.list_of, sizes))]
    return _one(arg, rng, sizes)


def _one(arg: ArgSpec, rng: Rng, sizes: Mapping[str, int]) -> Any:
    """One draw of the argument's distribution, with its special values and dtype."""
    shape = None if arg.shape is None else tuple(_dim(d, sizes) for d in arg.shape)
    values = _sample(arg, rng, sizes, shape)
    if arg.special == "overflow":
        values = values + OVERFLOW_SHIFT
    elif arg.special == "masked" and shape is not None and len(shape) == 2:
        # -inf above the first superdiagonal: every row keeps finite entries.
        values = np.array(values, dtype=float)
        values[np.triu_indices(shape[0], k=2, m=shape[1])] = -np.inf
    if shape is None:
        return _scalar(values, arg.dtype)
    return np.asarray(values).astype(arg.dtype, copy=False)


def _sample(arg: ArgSpec, rng: Rng, sizes: Mapping[str, int], shape: Any) -> Any:
    if arg.distribution == "uniform":
        return rng.uniform(float(arg.low), float(arg.high), size=shape)
    if arg.distribution == "integers":
        return rng.integers(_dim(arg.low, sizes), _dim(arg.high, sizes), size=shape)
    if arg.distribution == "positive":
        # |normal| × std, moved away from zero by `low` (default 0.1 when not given).
        floor = float(arg.low) if arg.low else 0.1
        return np.abs(rng.standard_normal(shape)) * arg.std + floor
    values = rng.standard_normal(shape)
    if arg.fan_in is not None:
        values = values / np.sqrt(_dim(arg.fan_in, sizes))
    if arg.std != 1.0:
        values = values * arg.std
    if arg.mean != 0.0:
        values = values + arg.mean
    return values


def _scalar(value: Any, dtype: str) -> Any:
    if dtype == "bool":
        return bool(value)
    if dtype == "int64":
        return int(value)
    return float(value)
