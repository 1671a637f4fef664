"""Fresh inputs and weights for every trial, drawn from the task's distributions.

The task's ``get_inputs(**shape)`` fixes shapes and dtypes; every floating tensor it returns is
redrawn here from a named distribution with a per-trial seed, so no two trials (and no two timed
iterations) share values (docs/threat-model.md #7, #12). Integer tensors keep the task's values, drawn
under the trial's seed. Floating parameters and buffers of the reference model are redrawn too, so
a candidate cannot specialise to default initialisations such as all-ones norm weights (#13).

A task may build its own trials instead (imported KernelBench tasks keep the structure their
``get_inputs`` builds and their layers' initialisation scale, ``kernelbench/trials.py``):
a task module's ``draw_inputs(shape, distribution, seed, device, draw_like)`` replaces
``make_inputs``'s draws, a model's ``hawkeye_prepare_trial(distribution, generator, draw_like)``
replaces ``randomize_parameters``' redraw, and an input list's ``refill_in_place(generator)``
replaces ``refill``. Each receives ``draw_like``, so the distributions stay defined here.

Value distributions beyond the three (``spec.VALUE_DISTRIBUTIONS``) probe edge values: ``zeros``,
``repeated``, ``large`` (the task's ``large_magnitude`` times a normal draw, inputs only: weights
stay unit-scale) and ``skewed_ids`` (integer inputs redrawn heavy on their low end). A trial's
``layout`` (``layouts.py``) then gives the inputs non-contiguous storage with the same values.

One more distribution, ``NATIVE``, redraws nothing: its trials (KernelBench's protocol,
``kernelbench_protocol.py``) take ``get_inputs(**shape)``'s own values, drawn under the trial's
seed, and the model's default initialisation, dropout layers in eval mode. Every builder of a
trial (worker, trusted replay, parent) goes through ``make_inputs`` and ``randomize_parameters``,
so they all build such a trial alike.
"""

from __future__ import annotations

import hashlib

import torch

from hawkeye_env.judge.shared import layouts

HEAVY_TAIL_DOF = 3.0  # Student-t: finite variance; 4e-4 of draws exceed 10x the RMS (measured, 1e6 draws)
NATIVE = "native"  # the task's own get_inputs values and default initialisation (module docstring)
# ``zeros``: the fraction of scattered exact zeros; besides, every ``ZERO_ROW_EVERY``-th row (last
# dim) is all zeros and the row after it starts with a zero (a padding test on the first element).
ZERO_FRACTION = 0.125
ZERO_ROW_EVERY = 4
# ``repeated``: normal draws rounded to a grid of this step within +-REPEATED_RANGE (9 values), so
# maxima tie and equal keys collide.
REPEATED_STEP = 0.5
REPEATED_RANGE = 2.0
# ``skewed_ids``: ids lo + floor((hi - lo + 1) * u^SKEW) for uniform u: the lowest id takes about
# 1/SKEW of the mass' first fraction, so ids repeat and the frequency is Zipf-like.
SKEW = 4.0
DROPOUT = (torch.nn.Dropout, torch.nn.Dropout1d, torch.nn.Dropout2d, torch.nn.Dropout3d, torch.nn.AlphaDropout,
           torch.nn.FeatureAlphaDropout)


def draw_like(t: torch.Tensor, distribution: str, generator: torch.Generator) -> torch.Tensor:
    """A tensor with ``t``'s shape and dtype whose values follow ``distribution``, drawn in float32
    on ``generator``'s device.

    ``normal``: N(0, 1). ``uniform``: U(-0.5, 1.5), so the mean is not zero.
    ``heavy_tailed``: Student-t with ``HEAVY_TAIL_DOF`` degrees of freedom, scaled to unit variance.
    ``zeros``: N(0, 1) with exact zeros (``ZERO_FRACTION`` scattered, every ``ZERO_ROW_EVERY``-th
    row of the last dim zero where there are several rows, the row after it starting with 0).
    ``repeated``: N(0, 1) rounded to nine values. ``large`` and ``skewed_ids``: N(0, 1) here
    (``make_inputs`` scales the inputs of ``large`` and redraws the integers of ``skewed_ids``).
    """
    kw = {"generator": generator, "dtype": torch.float32, "device": generator.device}
    shape = t.shape
    if distribution == "normal":
        x = torch.randn(shape, **kw)
    elif distribution == "uniform":
        x = torch.rand(shape, **kw) * 2 - 0.5
    elif distribution in ("large", "skewed_ids"):  # scaled or integer-only in make_inputs
        x = torch.randn(shape, **kw)
    elif distribution == "zeros":
        x = torch.randn(shape, **kw)
        x[torch.rand(shape, **kw) < ZERO_FRACTION] = 0.0
        if x.dim() >= 1 and x.numel():
            rows = x.view(-1, shape[-1])
            rows[1::ZERO_ROW_EVERY, 0] = 0.0
            if rows.shape[0] > 1:
                rows[::ZERO_ROW_EVERY] = 0.0
    elif distribution == "repeated":
        x = torch.randn(shape, **kw)
        x = (x / REPEATED_STEP).round().clamp(-REPEATED_RANGE / REPEATED_STEP, REPEATED_RANGE / REPEATED_STEP)
        x *= REPEATED_STEP
    elif distribution == "heavy_tailed":
        x = torch.zeros(shape, dtype=torch.float32, device=generator.device)
        for _ in range(int(HEAVY_TAIL_DOF)):
            x += torch.randn(shape, **kw) ** 2
        x = torch.randn(shape, **kw) / torch.sqrt(x / HEAVY_TAIL_DOF)
        x /= (HEAVY_TAIL_DOF / (HEAVY_TAIL_DOF - 2)) ** 0.5
    else:
        raise ValueError(f"unknown distribution {distribution!r}")
    return x.to(t.dtype)


def _empty_like(x: torch.Tensor, **kw) -> torch.Tensor:
    return torch.empty(x.shape, dtype=kw.get("dtype") or x.dtype, device=kw.get("device") or x.device,
                       requires_grad=bool(kw.get("requires_grad", False)))


class MetaDraws(torch.overrides.TorchFunctionMode):
    """Random draws as empty tensors, for the meta-device shape probe (``_task_inputs``): the
    probe reads only shapes and dtypes, and torch's meta path for ``randn`` runs its Python
    reference, whose ``torch._check`` imports sympy and torch's symbolic shapes (about 490 modules,
    a cost every judge process would pay at start-up). ``randn``/``rand`` become ``torch.empty`` with the same size,
    dtype, layout and device arguments (the generator dropped), their ``_like`` forms an empty
    tensor of the template's size (``torch.empty_like`` on meta runs a Python reference too)."""

    EMPTY = {torch.randn: torch.empty, torch.rand: torch.empty, torch.randn_like: _empty_like,
             torch.rand_like: _empty_like}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        empty = self.EMPTY.get(func)
        if empty is None:
            return func(*args, **kwargs)
        kwargs.pop("generator", None)
        return empty(*args, **kwargs)


def probe_inputs(module, shape: dict) -> list:
    """``module.get_inputs(**shape)`` on the meta device, random draws as empty tensors
    (``MetaDraws``): the shapes and dtypes of its tensors, no memory and no values."""
    with torch.device("meta"), MetaDraws():
        return module.get_inputs(**shape)


def _task_inputs(module, shape: dict, device: str = "cpu") -> list:
    """``get_inputs(**shape)`` built on the meta device (no memory) unless it returns integer
    tensors, whose values must be real: then it runs with ``device`` as the default device, so the
    floating tensors it also draws (discarded) cost a GPU kernel rather than a CPU loop (seconds per
    trial on the host for ``cross_entropy_fp32``'s [4096, 128256] logits). Integer values depend on
    ``device``'s generator, drawn identically by every process that builds the trial on that device
    type (worker, parent, baselines)."""
    probe = probe_inputs(module, shape)
    if all(not isinstance(x, torch.Tensor) or x.is_floating_point() for x in probe):
        return probe
    with torch.device(device):
        return module.get_inputs(**shape)


def native_inputs(module, shape: dict, seed: int, device: str) -> list:
    """``module.get_inputs(**shape)`` as the task draws it, under ``torch.manual_seed(seed)`` with
    ``device`` as the default device (KernelBench: ``set_seed(trial_seed); get_inputs()``); tensors
    on ``device``, contiguous.

    >>> import types
    >>> task = types.SimpleNamespace(get_inputs=lambda n: [torch.triu(torch.randn(n, n)), 2.0])
    >>> a, s = native_inputs(task, {"n": 3}, seed=0, device="cpu")
    >>> bool((a.tril(-1) == 0).all()), s
    (True, 2.0)
    """
    torch.manual_seed(seed)
    with torch.device(device):
        items = module.get_inputs(**shape)
    return [x.to(device).contiguous() if isinstance(x, torch.Tensor) else x for x in items]


def derived_seed(seed: int, label: str) -> int:
    """A seed in [0, 2**31) one-way from ``seed`` and ``label``: a trial's (``"trial3"``), its call
    on new inputs (``"fresh"``), the candidate's constructor (``"build"``). Code that reads one
    trial's inputs back to their generator's seed (mt19937 can be inverted from its output) learns
    nothing of another's, nor of the verdict's base seed."""
    digest = hashlib.blake2b(f"{label}:{seed}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") % 2**31


def fresh_seed(seed: int) -> int:
    """The seed of a trial's call on new inputs (trial seed ``seed``), the same in the worker, the
    replay and the parent's references."""
    return derived_seed(seed, "fresh")


# Seconds a repeat trial's carried run of calls may take before the checked call comes: a slow but
# honest kernel at a GPU shape (a second a call) is not pushed past the worker's time limit by a
# long drawn run; a kernel that is slow on purpose to shorten the run gives up its speedup.
CARRIED_BUDGET_S = 20.0


def carried_seed(seed: int, i: int) -> int:
    """The seed of a repeat trial's ``i``-th unchecked call between its first call and its call on
    new inputs (trial seed ``seed``), the same in the worker and the replay."""
    return derived_seed(seed, f"carried{i}")


def skewed_ids(x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """``x``'s shape and dtype, ids in ``[min(0, x.min()), x.max()]`` heavy on the low end
    (``SKEW``), the largest id present: repeated ids, a skewed frequency (gathers, cross-entropy
    targets)."""
    if x.numel() == 0:
        return x
    lo, hi = min(0, int(x.min())), int(x.max())
    u = torch.rand(x.shape, generator=generator, device=generator.device)
    ids = (lo + ((hi - lo + 1) * u**SKEW).floor().clamp(max=hi - lo)).to(x.dtype)
    ids.view(-1)[-1] = hi
    return ids.to(x.device)


def make_inputs(module, shape: dict, distribution: str, seed: int, device: str, layout: dict | None = None) -> list:
    """``module.get_inputs(**shape)`` with floating tensors redrawn on ``device`` (or the task's
    own ``draw_inputs``; ``NATIVE``: its own values, ``native_inputs``; module docstring), then
    laid out as ``layout`` says (``layouts.apply``; None: contiguous)."""
    if distribution == NATIVE:
        return layouts.apply(native_inputs(module, shape, seed, device), layout)
    if callable(getattr(module, "draw_inputs", None)):
        return layouts.apply(module.draw_inputs(dict(shape), distribution, seed, device, draw_like), layout)
    torch.manual_seed(seed)
    generator = torch.Generator(device=device).manual_seed(seed)
    scale = float(getattr(getattr(module, "SPEC", None), "large_magnitude", 0.0) or 1.0)
    out = []
    for x in _task_inputs(module, shape, device):
        if isinstance(x, torch.Tensor) and x.is_floating_point():
            x = draw_like(x, distribution, generator)
            if distribution == "large":
                x = (x.float() * scale).to(x.dtype)
        elif isinstance(x, torch.Tensor):
            x = skewed_ids(x, generator) if distribution == "skewed_ids" else x.to(device)
        if isinstance(x, torch.Tensor):
            x = x.contiguous()
        out.append(x)
    return layouts.apply(out, layout)


def randomize_parameters(model: torch.nn.Module, distribution: str, seed: int, device: str = "cpu") -> None:
    """Redraw every floating parameter and buffer of ``model`` in place (wherever they live), the
    values drawn on ``device``'s generator: on a GPU the draws are kernels, not a host loop (seconds
    per trial on the host for ``linear_prefill_bf16``'s 117M weights, heavy-tailed draws being four
    passes). Every builder of a trial passes the same device,
    so worker, parent and baselines hold the same values. ``NATIVE`` keeps the default
    initialisation and puts dropout layers in eval mode (module docstring)."""
    if distribution == NATIVE:
        for m in model.modules():
            if isinstance(m, DROPOUT):
                m.eval()
        return
    generator = torch.Generator(device=device).manual_seed(seed ^ 0x5EED)
    if callable(getattr(model, "hawkeye_prepare_trial", None)):
        model.hawkeye_prepare_trial(distribution, generator, draw_like)
        return
    with torch.no_grad():
        for t in list(model.parameters()) + list(model.buffers()):
            if t.is_floating_point():
                t.copy_(draw_like(t, distribution, generator))


FP8_DTYPES = {getattr(torch, n) for n in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz")
              if hasattr(torch, n)}


def refill(inputs: list, generator: torch.Generator) -> None:
    """Fresh standard-normal values in every floating input; fp8 tensors, which have no random
    kernels, get float32 draws rounded to their format (every such draw is a finite code); inputs
    that refill themselves (``refill_in_place``, module docstring) do."""
    if callable(getattr(inputs, "refill_in_place", None)):
        inputs.refill_in_place(generator)
        return
    for x in inputs:
        if not isinstance(x, torch.Tensor) or not x.is_floating_point():
            continue
        if x.dtype in FP8_DTYPES:
            x.copy_(torch.randn(x.shape, generator=generator, device=x.device))
        else:
            x.normal_(generator=generator)
