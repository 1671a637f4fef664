"""The pointwise vocabulary of the grammar: activations, unary maps and binary combinations.

Each entry is a code template over ``{x}`` (``{a}``, ``{b}`` for binary ones) and a FLOP count per
element (the arithmetic of the function itself: GELU's erf polynomial, a sigmoid's exp and
division). Every map is finite for every finite input: no ``exp`` or ``log`` of an unbounded
argument, so a chain cannot overflow on heavy-tailed inputs.

    >>> apply_unary("gelu_tanh", "h")
    'F.gelu(h, approximate="tanh")'
"""

from __future__ import annotations

import random

# Activations in use: GELU (BERT, GPT-2: erf and tanh forms), SiLU (Llama), softplus (Mamba's dt),
# Mish, ELU, leaky ReLU, hard-swish (MobileNet), squared ReLU (Primer), sigmoid and tanh.
ACTIVATIONS: dict[str, tuple[str, int]] = {
    "relu": ("torch.relu({x})", 1),
    "gelu": ("F.gelu({x})", 8),
    "gelu_tanh": ('F.gelu({x}, approximate="tanh")', 9),
    "silu": ("F.silu({x})", 4),
    "sigmoid": ("torch.sigmoid({x})", 4),
    "tanh": ("torch.tanh({x})", 4),
    "softplus": ("F.softplus({x})", 4),
    "mish": ("F.mish({x})", 8),
    "elu": ("F.elu({x})", 3),
    "leaky_relu": ("F.leaky_relu({x}, 0.01)", 2),
    "hardswish": ("F.hardswish({x})", 4),
    "relu_squared": ("torch.relu({x}) ** 2", 2),
}
# Other unary maps an elementwise chain may use; ``{c}`` is a constant drawn from ``CONSTANTS``.
UNARY: dict[str, tuple[str, int]] = {
    **ACTIVATIONS,
    "square": ("{x} * {x}", 1),
    "abs": ("{x}.abs()", 1),
    "scale": ("{x} * {c}", 1),
    "shift": ("{x} + {c}", 1),
    "clamp": ("{x}.clamp(-{c}, {c})", 2),
    "cos": ("torch.cos({x})", 4),
    "erf": ("torch.erf({x})", 4),
    "log1p_abs": ("torch.log1p({x}.abs())", 3),
    "rsqrt_1p_sq": ("torch.rsqrt(1 + {x} * {x})", 3),
}
BINARY: dict[str, tuple[str, int]] = {
    "add": ("{a} + {b}", 1),
    "sub": ("{a} - {b}", 1),
    "mul": ("{a} * {b}", 1),
    "maximum": ("torch.maximum({a}, {b})", 1),
    "sigmoid_gate": ("{a} * torch.sigmoid({b})", 5),
    "silu_gate": ("F.silu({b}) * {a}", 5),
    "soft_div": ("{a} / (1 + {b}.abs())", 2),
}
CONSTANTS = (0.5, 0.7071, 1.5, 2.0, 3.0)


def apply_unary(name: str, x: str, c: float | None = None) -> str:
    """The expression of unary op ``name`` on the expression ``x``."""
    return UNARY[name][0].format(x=x, c=c)


def apply_binary(name: str, a: str, b: str) -> str:
    return BINARY[name][0].format(a=a, b=b)


def draw_unary(rng: random.Random, x: str, pool: dict[str, tuple[str, int]] = UNARY) -> tuple[str, str, int]:
    """``(name, expression, flops per element)`` of a unary op drawn from ``pool``, applied to ``x``."""
    name = rng.choice(sorted(pool))
    return name, pool[name][0].format(x=x, c=rng.choice(CONSTANTS)), pool[name][1]
