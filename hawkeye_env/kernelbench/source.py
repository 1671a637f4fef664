"""One KernelBench problem file as the importer reads it: refusal before running it, loading,
size constants, and a forward at a shape.

A file's sizes are its module-level constants: integers (``batch_size = 16``) and tuples or lists
of integers (``input_shape = (32768,)``, ``layer_sizes = [16384, 16384]``). They become a task's
shape keys, a tuple's items named ``<constant>.<index>`` (``input_shape.0``), so a shape stays a
flat mapping of names to integers and ``bind(module, shape)`` rebuilds each tuple or list before
the file's own ``get_inputs()`` and ``get_init_inputs()`` read it.

    >>> flatten_constants({"n": 4, "dims": (8, 16), "eps": 1e-5})
    {'n': 4, 'dims.0': 8, 'dims.1': 16}
"""

from __future__ import annotations

import importlib.util
import re
import sys
from types import ModuleType

import torch
from torch.overrides import TorchFunctionMode

# Files that build their Model from pretrained Hugging Face weights (KernelBench level 4) need the
# network and gigabytes at import; they are refused before anything runs. Matched in the text.
PRETRAINED_PATTERN = re.compile(r"\bfrom_pretrained\s*\(|^\s*(from|import)\s+transformers\b", re.MULTILINE)

# Torch functions that draw random numbers. Any of them called by ``Model.forward`` makes the
# output a draw, not a function of the inputs: no candidate can match it.
RANDOM_FUNCTIONS = frozenset({
    "rand", "rand_like", "randn", "randn_like", "randint", "randint_like", "randperm", "normal",
    "bernoulli", "multinomial", "poisson", "normal_", "uniform_", "bernoulli_", "random_",
    "exponential_", "geometric_", "cauchy_", "log_normal_",
})
DROPOUT_FUNCTIONS = frozenset({"dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
                               "feature_alpha_dropout"})


def refusal_reason(text: str) -> str | None:
    """Why a file is refused without being run, or None. ``text`` is its source."""
    if PRETRAINED_PATTERN.search(text):
        return ("loads pretrained Hugging Face weights (from_pretrained/transformers): needs the network "
                "and the model's weights, refused without running it")
    return None


def load_source(path, name: str) -> ModuleType:
    """Execute the file at ``path`` as module ``name`` (kept in ``sys.modules``)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _int_items(value) -> bool:
    return isinstance(value, (tuple, list)) and bool(value) and all(
        type(v) is int or _int_items(v) for v in value)


def flatten_constants(names: dict) -> dict[str, int]:
    """The size constants among ``names`` (public ints, and tuples/lists of them, nested ones
    too), flattened to ``name`` / ``name.i`` / ``name.i.j`` keys. Bools and floats are not sizes."""
    flat: dict[str, int] = {}

    def walk(key: str, value) -> None:
        if type(value) is int:
            flat[key] = value
        else:
            for i, v in enumerate(value):
                walk(f"{key}.{i}", v)

    for k, v in names.items():
        if not k.startswith("_") and (type(v) is int or _int_items(v)):
            walk(k, v)
    return flat


def size_constants(module: ModuleType) -> dict[str, int]:
    """The module's size constants (``flatten_constants``): the shape keys of its task."""
    return flatten_constants(vars(module))


def _replaced(container, steps: list[str], value: int):
    """``container`` (a tuple or list, nested ones too) with the item at ``steps`` set to ``value``."""
    items = list(container)
    head, rest = int(steps[0]), steps[1:]
    items[head] = _replaced(items[head], rest, value) if rest else value
    return type(container)(items)


def bind(module: ModuleType, shape: dict) -> ModuleType:
    """Set the module's constants to ``shape`` (flat keys), rebuilding tuples and lists."""
    for key, value in shape.items():
        name, *path = key.split(".")
        setattr(module, name, _replaced(getattr(module, name), path, int(value)) if path else int(value))
    return module


class _RandomCalls(TorchFunctionMode):
    """Records the random functions called inside it (dropout counts when it is active)."""

    def __init__(self):
        super().__init__()
        self.seen: set[str] = set()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        if name in RANDOM_FUNCTIONS:
            self.seen.add(name)
        elif name in DROPOUT_FUNCTIONS:
            p = kwargs.get("p", args[1] if len(args) > 1 else 0.5)
            training = kwargs.get("training", args[2] if len(args) > 2 else True)
            if training and p:
                self.seen.add(name)
        return func(*args, **kwargs)


def dropout_to_eval(model: torch.nn.Module) -> torch.nn.Module:
    """Put every dropout layer of ``model`` in eval mode (identity); other layers keep the training
    mode KernelBench's harness runs them in (BatchNorm normalises by batch statistics)."""
    for m in model.modules():
        if isinstance(m, torch.nn.modules.dropout._DropoutNd):
            m.eval()
    return model


def tensors(xs) -> list[torch.Tensor]:
    return [x for x in xs if isinstance(x, torch.Tensor)]


def as_list(out) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def forward(module: ModuleType, shape: dict, device: str = "meta", functions: tuple | None = None) -> dict:
    """One forward of the file's ``Model`` at ``shape`` on ``device`` (``meta``: no memory), with
    dropout layers in eval mode; ``functions`` are the file's own ``(get_inputs, get_init_inputs)``
    when the module's names now point elsewhere (a generated task module). Returns ``inputs``,
    ``outputs``, ``parameters`` (parameters and buffers) and ``random``: the random functions the
    forward called (sorted names)."""
    get_inputs, get_init_inputs = functions or (module.get_inputs, module.get_init_inputs)
    bind(module, shape)
    with torch.device(device):
        init = get_init_inputs()
        inputs = get_inputs()
        model = dropout_to_eval(module.Model(*init))
        calls = _RandomCalls()
        with torch.no_grad(), calls:
            out = model(*inputs)
    return {"inputs": inputs, "outputs": as_list(out),
            "parameters": list(model.parameters()) + list(model.buffers()), "random": sorted(calls.seen)}


__all__ = ["as_list", "bind", "dropout_to_eval", "flatten_constants", "forward", "load_source",
           "refusal_reason", "size_constants", "tensors"]
