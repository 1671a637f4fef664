"""How the judge builds an imported KernelBench task's trials: inputs from the file's own
``get_inputs``, weights at their layers' own scale, a float64 reference that follows everything.

The judge calls three hooks that an imported task provides (``hawkeye_env/judge/shared/inputs.py`` and
``references.py`` look for them; shipped tasks define none and keep the judge's defaults):

- ``draw_inputs`` (module level): the file's ``get_inputs()`` run on the trial's device with every
  random call taken from the trial's generator, and ``torch.randn`` (the files' source of signed
  values) drawn from the trial's distribution (normal, uniform or heavy-tailed). Whatever the
  file builds from those draws is kept: ``triu`` stays triangular, ``A @ A.T`` symmetric,
  ``softmax`` normalised, ``randint(0, 2) * 2 - 1`` labels +-1, ``torch.rand`` positive. The list
  it returns refills itself the same way (``StructuredInputs.refill_in_place``), so the timed
  loop's fresh inputs keep the structure too.
- ``Model.hawkeye_prepare_trial``: the model was built under the trial's seed, so its weights are
  the layers' own initialisation (fan-in scaled) drawn afresh per trial; tensors initialised to a
  constant (norm weights of 1, zero biases, BatchNorm running statistics) get a small jitter
  (``CONSTANT_JITTER``) so a candidate cannot specialise to them (docs/threat-model.md #13) while a
  variance stays positive. Dropout layers go to eval mode.
- ``Model.hawkeye_reference64``: the forward in float64 under ``Float64Following``, a torch
  function mode that widens every lower-precision floating argument of every call, so modules
  created inside ``forward`` or held by closures (a lambda keeping a ``deepcopy``'s original
  layers), and tensors kept as plain attributes (an LSTM's ``h0``), compute in float64 too.

    >>> import torch
    >>> with Float64Following():
    ...     y = torch.nn.Linear(4, 2)(torch.randn(3, 4, dtype=torch.float64))
    >>> y.dtype
    torch.float64
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_map

from hawkeye_env.kernelbench.source import as_list, bind, dropout_to_eval

# Constant-initialised tensors c become c + 0.1 * s * clamp(z, -3, 3), s = |c| (1 for zeros): at
# most 30% off a non-zero value, so a running variance of 1 stays in [0.7, 1.3] and keeps its sign.
CONSTANT_JITTER = 0.1
JITTER_CLAMP = 3.0
_LOW_PRECISION = (torch.float32, torch.float16, torch.bfloat16)
# Calls whose tensor arguments stay as they are under ``Float64Following``: explicit casts (their
# target dtype is the program's intent), parameter construction and attribute access. In-place
# methods (``*_``) keep their target too: widening it would write into a copy.
_UNWIDENED = frozenset({"_make_subclass", "__get__", "__set__", "to", "type", "float", "half", "bfloat16",
                        "double", "detach", "requires_grad_"})
_GENERATOR_KWARG = frozenset({"rand", "randint", "randperm", "normal", "bernoulli", "multinomial",
                              "poisson", "normal_", "uniform_", "bernoulli_", "random_", "exponential_",
                              "geometric_", "cauchy_", "log_normal_"})

Draw = Callable[[torch.Tensor, str, torch.Generator], torch.Tensor]


class Float64Following(TorchFunctionMode):
    """Widens float32/float16/bfloat16 tensor arguments of every torch call to float64."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        if name not in _UNWIDENED and not name.endswith("_"):
            args, kwargs = tree_map(_widen, args), tree_map(_widen, kwargs)
        return func(*args, **kwargs)


def _widen(x):
    if isinstance(x, torch.Tensor) and x.dtype in _LOW_PRECISION:
        return x.double()
    return x


class _TrialDraws(TorchFunctionMode):
    """Inside it, random calls draw from ``generator``; ``randn`` follows ``distribution``."""

    def __init__(self, distribution: str, generator: torch.Generator, draw: Draw):
        super().__init__()
        self.distribution, self.generator, self.draw = distribution, generator, draw

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        name = getattr(func, "__name__", "")
        if name in ("randn", "randn_like"):
            like = args[0] if name == "randn_like" else None
            size = like.shape if like is not None else _size(args, kwargs)
            dtype = kwargs.get("dtype") or (like.dtype if like is not None else torch.get_default_dtype())
            template = torch.empty(size, dtype=dtype, device="meta")
            return self.draw(template, self.distribution, self.generator)
        if name == "rand_like":
            return torch.rand(args[0].shape, dtype=kwargs.get("dtype") or args[0].dtype,
                              generator=self.generator, device=self.generator.device)
        if name in _GENERATOR_KWARG and kwargs.get("generator") is None:
            kwargs["generator"] = self.generator
            if name in ("rand", "randint", "randperm"):
                kwargs.setdefault("device", self.generator.device)
        return func(*args, **kwargs)


def _size(args, kwargs) -> tuple:
    if "size" in kwargs:
        return tuple(kwargs["size"])
    if len(args) == 1 and isinstance(args[0], (tuple, list, torch.Size)):
        return tuple(args[0])
    return tuple(args)


class StructuredInputs(list):
    """A trial's inputs that refill themselves from the file's ``get_inputs`` (module docstring)."""

    def __init__(self, items, redraw: Callable[[torch.Generator], list]):
        super().__init__(items)
        self._redraw = redraw

    def refill_in_place(self, generator: torch.Generator) -> None:
        """Fresh values from ``generator`` with the same structure (normal ``randn`` draws)."""
        for x, y in zip(self, self._redraw(generator)):
            if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
                x.copy_(y)


def _draws(module, get_inputs: Callable[[], list], shape: dict, distribution: str,
           generator: torch.Generator, draw: Draw) -> list:
    device = generator.device
    bind(module, shape)
    with torch.device(device), _TrialDraws(distribution, generator, draw):
        inputs = get_inputs()
    return [x.to(device).contiguous() if isinstance(x, torch.Tensor) else x for x in inputs]


def draw_inputs(module, get_inputs: Callable[[], list], shape: dict, distribution: str, seed: int,
                device: str, draw: Draw) -> StructuredInputs:
    """The trial's inputs: ``get_inputs()`` (the file's own) at ``shape`` on ``device``, its random
    calls drawn from a generator seeded with ``seed`` (module docstring). ``draw(template,
    distribution, generator)`` is the judge's ``inputs.draw_like``."""
    generator = torch.Generator(device=device).manual_seed(seed)
    items = _draws(module, get_inputs, shape, distribution, generator, draw)
    return StructuredInputs(items, lambda g: _draws(module, get_inputs, shape, "normal", g, draw))


def prepare_trial(model: torch.nn.Module, distribution: str, generator: torch.Generator, draw: Draw) -> None:
    """Jitter ``model``'s constant-initialised floating tensors in place and put its dropout layers in
    eval mode (module docstring); other tensors keep the initialisation drawn under the trial's seed."""
    dropout_to_eval(model)
    with torch.no_grad():
        for t in list(model.parameters()) + list(model.buffers()):
            if not t.is_floating_point() or t.numel() == 0:
                continue
            first = t.reshape(-1)[:1]
            if not bool((t == first).all()):
                continue
            z = draw(t, distribution, generator).to(t.device).clamp(-JITTER_CLAMP, JITTER_CLAMP)
            c = abs(float(first))
            t.add_(CONSTANT_JITTER * (c if c > 0 else 1.0) * z)


def reference64(model: torch.nn.Module, *args) -> list:
    """``model``'s outputs in float64 on ``args`` (floating ones widened), under ``Float64Following``."""
    wide = copy.deepcopy(model).double()
    with Float64Following():
        return as_list(wide(*[_widen(a) for a in args]))


__all__ = ["CONSTANT_JITTER", "Float64Following", "StructuredInputs", "draw_inputs", "prepare_trial",
           "reference64"]
