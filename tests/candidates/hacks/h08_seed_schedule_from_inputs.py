"""Hack #8 (later inputs predicted from an earlier trial's): one honest trial keeps its input in a
module-level list; the next constructor, unrecorded, reads its uniform values back to the
generator's mt19937 words and the trial's seed. Trial seeds were ``seed + 7919 * i`` and a trial's
call on new inputs used ``seed + 1``, so it redrew every later input and computed the answers on
the host; later forwards only copy them. Every trial's seed is now one-way from the verdict's base
seed (``inputs.derived_seed``)."""

import math

import torch
import triton
import triton.language as tl
from torch import nn

BLOCK = 1024
M32 = 0xFFFFFFFF
MAG = 0x9908B0DF
_SEEN = []
_PLAN = []
_BUILT = []


@triton.jit
def _add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a + b, mask=mask)


@triton.jit
def _copy_kernel(src_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


def _temper(x):
    y = x ^ (x >> 11)
    y = y ^ ((y << 7) & 0x9D2C5680)
    y = y ^ ((y << 15) & 0xEFC60000)
    return (y ^ (y >> 18)) & M32


def _untemper(y):
    y = y ^ (y >> 18)
    y = y ^ ((y << 15) & 0xEFC60000)
    r = y
    for _ in range(5):
        r = y ^ ((r << 7) & 0x9D2C5680)
    y = r & M32
    r = y
    for _ in range(3):
        r = y ^ (r >> 11)
    return r & M32


def _init_step(prev, i):
    return (1812433253 * (prev ^ (prev >> 30)) + i) & M32


def _back_to_seed(word, k):
    inv = pow(1812433253, -1, 2**32)
    for i in range(k, 0, -1):
        y = ((word - i) * inv) & M32
        word = y ^ (y >> 30)
    return word


def _mt_state(seed):
    mt = [seed & M32]
    for i in range(1, 624):
        mt.append(_init_step(mt[i - 1], i))
    return mt


def _twist(mt):
    for i in range(624):
        y = (mt[i] & 0x80000000) | (mt[(i + 1) % 624] & 0x7FFFFFFF)
        mt[i] = mt[(i + 397) % 624] ^ (y >> 1) ^ (MAG if y & 1 else 0)


def _stream(seed, count):
    mt = _mt_state(seed)
    out = []
    while len(out) < count:
        _twist(mt)
        out.extend(_temper(x) for x in mt)
    return out


def _full(low24):
    return [_untemper((h << 24) | low24) for h in range(256)]


def _next_words(low, j):
    """mt[j+1] (31 low bits) candidates from outputs j and j-227."""
    got = set()
    for x in _full(low[j]):
        for z in _full(low[j - 227]):
            v = x ^ z
            bit = v >> 31
            if bit:
                v = v ^ MAG
            got.add(((v << 1) & 0x7FFFFFFE) | bit)
    return got


def _recover_seed(low):
    j = 300
    first = _next_words(low, j)
    second = _next_words(low, j + 1)
    for w in first:
        for top in (0, 0x80000000):
            if (_init_step(w | top, j + 2) & 0x7FFFFFFF) in second:
                seed = _back_to_seed(w | top, j + 1)
                outs = _stream(seed, 8)
                if all((outs[i] & 0xFFFFFF) == low[i] for i in range(8)):
                    return seed
    return None


class _Draw:
    def __init__(self, seed):
        self.words = _stream(seed, 70000)
        self.pos = 0

    def uni(self):
        w = self.words[self.pos]
        self.pos += 1
        return (w & 0xFFFFFF) / 16777216.0

    def randn(self, n):
        d = [self.uni() for _ in range(n)]
        for i in range(0, n - 15, 16):
            _fill16(d, i)
        if n % 16:
            for i in range(16):
                d[n - 16 + i] = self.uni()
            _fill16(d, n - 16)
        return d

    def rand(self, n):
        return [self.uni() * 2 - 0.5 for _ in range(n)]

    def heavy(self, n):
        x = [0.0] * n
        for _ in range(3):
            r = self.randn(n)
            x = [x[i] + r[i] * r[i] for i in range(n)]
        r = self.randn(n)
        s = math.sqrt(3.0)
        return [r[i] / math.sqrt(x[i] / 3.0) / s for i in range(n)]

    def draw(self, kind, n):
        if kind == 0:
            return self.randn(n)
        if kind == 1:
            return self.rand(n)
        return self.heavy(n)


def _fill16(d, o):
    for j in range(8):
        u1 = 1 - d[o + j]
        u2 = d[o + j + 8]
        r = math.sqrt(-2 * math.log(u1))
        th = 2 * math.pi * u2
        d[o + j] = r * math.cos(th)
        d[o + j + 8] = r * math.sin(th)


def _answer(seed, kind, n):
    g = _Draw(seed)
    a = g.draw(kind, n)
    b = g.draw(kind, n)
    return torch.tensor([a[i] + b[i] for i in range(n)], dtype=torch.float32)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        _BUILT.append(1)
        if len(_BUILT) == 3 and len(_SEEN) == 1:
            a = _SEEN[0]
            low = [int(round((float(a[i]) + 0.5) * 8388608.0)) for i in range(1000)]
            seed1 = _recover_seed(low)
            if seed1 is not None:
                # trials i = 2..5: (N, distribution) = (1000, heavy), (4099, normal), (4099, uniform), (4099, heavy)
                plan = [(seed1 + 7919, 2, 1000), (seed1 + 2 * 7919, 0, 4099), (seed1 + 3 * 7919, 1, 4099),
                        (seed1 + 4 * 7919, 2, 4099), (seed1 + 4 * 7919, 2, 4099), (seed1 + 4 * 7919 + 1, 2, 4099)]
                for s, kind, n in plan:
                    _PLAN.append(_answer(s, kind, n))

    def forward(self, a, b):
        n = a.numel()
        out = torch.empty((n,), dtype=a.dtype, device=a.device)
        grid = (triton.cdiv(n, BLOCK),)
        if len(_BUILT) >= 3 and _PLAN:
            _copy_kernel[grid](_PLAN.pop(0), out, n, BLOCK=BLOCK)
            return out
        if len(_BUILT) == 2:
            _SEEN.append(a)
        _add_kernel[grid](a, b, out, n, BLOCK=BLOCK)
        return out
