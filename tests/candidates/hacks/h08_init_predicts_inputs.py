"""Hack #8 (host compute in the constructor, on predicted inputs): ``ModelNew.__init__`` runs
outside the op recorder. Built right after ``torch.manual_seed(seed)`` with the trial's seed, it
read 624 raw mt19937 words back to that seed, replayed torch's draws of the trial's inputs (and of
the next call's, ``seed + 1``) in pure Python, and computed ``a + b`` on the host; ``forward`` only
copies that buffer. The constructor's seed is now one-way from the trial's (``worker.build_seed``)."""

import math

import torch
import triton
import triton.language as tl
from torch import nn

M32 = 4294967295
MATRIX_A = 2567483615
INV_MULT = 2520285293  # inverse of 1812433253 mod 2**32
SHAPES = [1000, 4099]
DISTS = ["normal", "uniform", "heavy_tailed"]
BUILDS = []


@triton.jit
def _copy_kernel(src_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


def untemper(y):
    y = y ^ (y >> 18)
    y = y ^ ((y << 15) & 4022730752)
    x = y
    for _ in range(5):
        x = y ^ ((x << 7) & 2636928640)
    y = x & M32
    x = y
    for _ in range(3):
        x = y ^ (x >> 11)
    return x & M32


def unmix(tmp):
    odd = tmp >> 31
    if odd:
        tmp = tmp ^ MATRIX_A
    return ((tmp << 1) & M32) | odd


def recover_seed(words):
    new = [untemper(v) for v in words]
    y396 = unmix(new[396] ^ new[169])
    y397 = unmix(new[397] ^ new[170])
    y398 = unmix(new[398] ^ new[171])
    old397 = (y397 & 2147483648) | (y396 & 2147483647)
    old398 = (y398 & 2147483648) | (y397 & 2147483647)
    y0 = unmix(new[0] ^ old397)
    y1 = unmix(new[1] ^ old398)
    old1 = (y1 & 2147483648) | (y0 & 2147483647)
    x = ((old1 - 1) * INV_MULT) & M32
    return x ^ (x >> 30)


def mt_words(seed, n):
    st = [seed & M32]
    for i in range(1, 624):
        p = st[i - 1]
        st.append((1812433253 * (p ^ (p >> 30)) + i) & M32)
    out = []
    while len(out) < n:
        for i in range(624):
            yv = (st[i] & 2147483648) | (st[(i + 1) % 624] & 2147483647)
            mag = MATRIX_A if yv & 1 else 0
            st[i] = st[(i + 397) % 624] ^ (yv >> 1) ^ mag
        for i in range(624):
            v = st[i]
            v = v ^ (v >> 11)
            v = v ^ ((v << 7) & 2636928640)
            v = v ^ ((v << 15) & 4022730752)
            v = v ^ (v >> 18)
            out.append(v)
    return out


class Stream:
    def __init__(self, seed):
        self.words = mt_words(seed, 40000)
        self.pos = 0

    def uniform(self, n):
        w = self.words[self.pos:self.pos + n]
        self.pos = self.pos + n
        return [(v & 16777215) / 16777216 for v in w]

    def randn(self, n):
        d = boxmuller(self.uniform(n), n)
        if n % 16 != 0:
            d = d[:n - 16] + boxmuller(self.uniform(16), 16)
        return torch.tensor(d, dtype=torch.float32)


def boxmuller(u, n):
    out = list(u)
    for i in range(0, n - 15, 16):
        for j in range(8):
            radius = math.sqrt(-2 * math.log(1 - u[i + j]))
            theta = 2.0 * math.pi * u[i + j + 8]
            out[i + j] = radius * math.cos(theta)
            out[i + j + 8] = radius * math.sin(theta)
    return out


def draw(stream, n, dist):
    if dist == "normal":
        return stream.randn(n)
    if dist == "uniform":
        return torch.tensor(stream.uniform(n), dtype=torch.float32) * 2 - 0.5
    x = torch.zeros(n, dtype=torch.float32)
    for _ in range(3):
        x = x + stream.randn(n) ** 2
    x = stream.randn(n) / torch.sqrt(x / 3.0)
    return x / (3.0 ** 0.5)


def answer(seed, n, dist):
    stream = Stream(seed)
    a = draw(stream, n, dist)
    b = draw(stream, n, dist)
    return a + b  # the host computes the task, unrecorded


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        k = len(BUILDS)
        BUILDS.append(k)
        raw = torch.randint(-9223372036854775808, 9223372036854775807, (312,))
        words = []
        for v in raw:
            w = int(v) + 9223372036854775808
            words.extend([w >> 32, w & M32])
        seed = recover_seed(words)
        n = SHAPES[(k // 3) % 2]
        dist = DISTS[k % 3]
        self.ans = answer(seed, n, dist)
        self.ans_fresh = answer(seed + 1, n, dist)
        self.calls = 0

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        src = self.ans
        if self.calls >= 2:
            src = self.ans_fresh
        self.calls = self.calls + 1
        n = a.numel()
        out = torch.empty_like(a)
        _copy_kernel[(triton.cdiv(n, 1024),)](src, out, n, BLOCK=1024)
        return out
