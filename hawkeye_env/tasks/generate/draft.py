"""What one generated task is before it is written: ``TaskDraft``.

A family of the grammar (``families/``) draws a ``TaskDraft``; ``writer.render`` turns it into a
task module in the project's task format (``Model``, ``get_inputs``, ``get_init_inputs``,
``SPEC``). Shapes of tensors and the roofline counts are Python expressions over the task's shape
keys (``("M", "2 * N")``, ``"2.0 * M * N * K"``), so the written module reads like a hand-written
task and its counts hold at every shape the judge draws.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from hawkeye_env.tasks.spec import DISTRIBUTIONS

# Dtypes a generated task may take, by the short name its id ends with.
DTYPE_SHORT = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16", "float8_e4m3fn": "fp8"}


@dataclass(frozen=True)
class TensorArg:
    """One input of ``forward``, drawn by ``get_inputs``.

    ``kind``: ``float`` (``torch.randn``; the judge redraws it from every distribution),
    ``index`` (``torch.randint(0, high, shape)``, int64; kept by the judge, redrawn skewed under
    ``skewed_ids``) or ``mask`` (bool, True where a position is kept; ``keep`` the fraction kept,
    and column 0 of the last dim always kept so that no row is empty)."""

    name: str
    shape: tuple[str, ...]
    dtype: str = "float32"
    kind: str = "float"
    high: str = ""
    keep: float = 0.5

    @property
    def differentiable(self) -> bool:
        return self.kind == "float" and not self.dtype.startswith("float8")


@dataclass(frozen=True)
class Param:
    """A parameter of ``Model`` (``nn.Parameter(torch.randn(*shape))``); the judge redraws its values."""

    name: str
    shape: tuple[str, ...]
    dtype: str = "float32"


@dataclass(frozen=True)
class TaskDraft:
    """A generated task, family-level: what to compute and at which shapes.

    Attributes:
        stem: the op's name in the task id (``rmsnorm_affine_residual``).
        family: report grouping (``elementwise``, ``reduction``, ``normalization``, ``softmax``,
            ``gemm``, ``attention``, ``scan``, ``indexing``, ``quantization``).
        dtype: the task's main dtype (the id's suffix).
        summary: one sentence of what ``forward`` returns, the description's first.
        inputs, params: ``forward``'s inputs and ``Model``'s parameters.
        init_keys: shape keys ``Model(...)`` takes (``get_init_inputs`` returns their values).
        init_lines: lines of ``__init__`` after the parameters (``self.groups = G``).
        body: ``forward``'s lines, the last a ``return``.
        out_dtype, out_shape: the output's dtype and shape.
        gpu_shape, cpu_shapes: the timed shape, and two small odd CPU shapes.
        flops, bytes_moved: lower-bound counts, expressions over the shape keys; bytes_moved ""
            counts every input, parameter and the output once (``counts.default_bytes``).
        tags: unit tags (``units/``) whose strategies fit.
        hint: the description's last sentence: what a fast kernel does.
        tolerance: a ``spec`` tolerance name for the output dtype, "" for the default.
        constants: module-level constants the body names (``EPS = 1e-05``).
        helpers: module-level helper functions the body calls (``writer.HELPERS``).
        layouts, value_distributions, large_magnitude, distributions, answer_is_copy: as ``TaskSpec``.
        backward: the task returns gradients (``backward.variant``).
        graph: the grammar's own description of the op graph (choices made), for reports.
    """

    stem: str
    family: str
    dtype: str
    summary: str
    inputs: tuple[TensorArg, ...]
    body: tuple[str, ...]
    out_dtype: str
    out_shape: tuple[str, ...]
    gpu_shape: dict
    cpu_shapes: tuple[dict, ...]
    flops: str
    tags: tuple[str, ...]
    bytes_moved: str = ""
    hint: str = ""
    params: tuple[Param, ...] = ()
    init_keys: tuple[str, ...] = ()
    init_lines: tuple[str, ...] = ()
    tolerance: str = ""
    constants: dict = field(default_factory=dict)
    helpers: tuple[str, ...] = ()
    layouts: tuple[str, ...] = ()
    value_distributions: tuple[str, ...] = ("zeros", "repeated")
    large_magnitude: float = 0.0
    distributions: tuple[str, ...] = DISTRIBUTIONS
    answer_is_copy: bool = False
    backward: bool = False
    graph: tuple[str, ...] = ()

    @property
    def shape_keys(self) -> tuple[str, ...]:
        return tuple(self.gpu_shape)

    def task_id(self, seed: int, index: int) -> str:
        """``g<seed>_<index>_<stem>_<dtype>``: unique within a seed's distribution, a valid module name."""
        return f"g{seed}_{index:05d}_{self.stem}_{DTYPE_SHORT.get(self.dtype, self.dtype)}"

    def differentiable(self) -> tuple[str, ...]:
        """Names of the floating inputs and parameters gradients flow to (``self.`` for parameters)."""
        return (*(t.name for t in self.inputs if t.differentiable), *(f"self.{p.name}" for p in self.params))

    def with_(self, **changes) -> TaskDraft:
        return replace(self, **changes)
