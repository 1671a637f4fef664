"""The allowlists the static rules check candidate source against (``static_checks.py``): the
modules a candidate may import, the attribute names allowed per module and on other objects, the
builtins, the syntax node types, and the denylisted attribute names whose findings name the hack
they block. Data only."""

from __future__ import annotations

import ast
import builtins
import re

# Modules a candidate may import. Unit kernel modules are added from ``units/`` (``static_modules.unit_modules``).
IMPORTABLE: frozenset[str] = frozenset(
    {
        "torch", "torch.nn", "torch.nn.functional", "triton", "triton.language",
        "triton.language.extra", "triton.language.extra.libdevice", "triton.language.extra.cuda",
        "triton.language.extra.cuda.libdevice", "triton.tools", "triton.tools.tensor_descriptor",
        "math", "typing", "__future__", "dataclasses",
        # Gluon (Hopper's TMA, mbarriers, wgmma and warp specialization written by hand)
        "triton.experimental", "triton.experimental.gluon", "triton.experimental.gluon.language",
        "triton.experimental.gluon.language.nvidia", "triton.experimental.gluon.language.nvidia.hopper",
        "triton.experimental.gluon.language.nvidia.hopper.tma",
        "triton.experimental.gluon.language.nvidia.hopper.mbarrier",
        "triton.experimental.gluon.nvidia", "triton.experimental.gluon.nvidia.hopper",
    }
)


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


_DTYPES = _names("""
    float16 float32 float64 bfloat16 half float double int8 int16 int32 int64 uint8 uint16 uint32
    uint64 bool long int float8_e4m3fn float8_e5m2 float8_e4m3fnuz float8_e5m2fnuz float8_e8m0fnu
    float4_e2m1fn_x2 complex64""")
# triton.language: its public names in triton 3.9 (kernels are compiled, or run by the CPU
# interpreter), less the submodules ``core``, ``standard``, ``random``, ``target_info``.
_TL = _names("""
    PropagateNan TRITON_MAX_TENSOR_NUMEL abs add aggregate_replace arange argmax argmin
    associative_scan assume atomic_add atomic_and atomic_cas atomic_load atomic_max atomic_min
    atomic_or atomic_poll atomic_store atomic_xchg atomic_xor bfloat16 bitonic_merge block_type
    broadcast broadcast_to cast cat cdiv ceil clamp condition const constexpr constexpr_type cos
    cumprod cumsum debug_barrier device_assert device_print div_rn dot dot_scaled dtype erf exp
    exp2 expand_dims expect_zero fdiv flip float16 float32 float64 float8e4b15 float8e4b8
    float8e4nv float8e5 float8e5b16 floor fma full gather histogram inline_asm_elementwise int1
    int16 int32 int64 int8 interleave join load load_tensor_descriptor log log2 make_block_ptr
    make_tensor_descriptor map_elementwise max max_constancy max_contiguous maximum min minimum
    mul multiple_of num_programs pair_uniform_to_normal permute philox philox_impl pi32_t
    pointer_type program_id rand rand4x randint randint4x randn randn4x range ravel reduce
    reduce_or reshape rsqrt sigmoid sin slice softmax sort split sqrt sqrt_rn squeeze
    static_assert static_print static_range store store_tensor_descriptor sub sum
    swizzle2d tensor tensor_descriptor tensor_descriptor_type to_tensor topk trans tuple tuple_type
    uint16 uint32 uint64 uint8 uint_to_uniform_float umulhi unsqueeze view void where xor_sum
    zeros zeros_like extra math""")
# Allowed attribute names per module path. A name that is itself a key is a submodule.
MODULE_ATTRIBUTES: dict[str, frozenset[str]] = {
    "torch": _DTYPES | _names("""
        nn cuda Tensor Size device dtype finfo iinfo no_grad inference_mode is_tensor
        promote_types result_type get_default_dtype empty empty_like empty_strided zeros zeros_like
        ones ones_like full full_like arange linspace tensor as_tensor as_strided randn rand
        randint cat stack split chunk where clamp maximum minimum max min sum mean amax amin abs
        exp exp2 log sqrt rsqrt tanh sigmoid softmax matmul mm bmm addmm add sub mul div neg
        transpose permute reshape flatten broadcast_to broadcast_tensors"""),
    "torch.nn": _names("""
        Module Parameter Buffer ModuleList ModuleDict ParameterList ParameterDict Sequential
        Identity Linear Embedding LayerNorm RMSNorm Conv1d Conv2d Conv3d Dropout ReLU GELU SiLU
        Softmax functional"""),
    "torch.nn.functional": _names("""
        softmax log_softmax gelu silu relu sigmoid tanh layer_norm rms_norm linear cross_entropy
        scaled_dot_product_attention pad dropout normalize"""),
    "torch.cuda": _names("""
        is_available device_count current_device get_device_name get_device_capability
        get_device_properties"""),
    "triton": _names("""
        jit autotune heuristics Config cdiv next_power_of_2 set_allocator language tools
        reinterpret CompilationError OutOfResources"""),
    "triton.tools": _names("tensor_descriptor"),
    "triton.tools.tensor_descriptor": _names("TensorDescriptor"),
    "triton.language": _TL,
    "triton.language.math": _names("""
        abs ceil cos div_rn erf exp exp2 fdiv floor fma log log2 rsqrt sin sqrt sqrt_rn umulhi"""),
    "triton.language.extra": _names("libdevice cuda"),
    "triton.language.extra.cuda": _names("libdevice"),
    "math": _names("""
        acos acosh asin asinh atan atan2 atanh cbrt ceil comb copysign cos cosh degrees dist e erf
        erfc exp exp2 expm1 fabs factorial floor fmod frexp fsum gamma gcd hypot inf isclose
        isfinite isinf isnan isqrt lcm ldexp lgamma log log10 log1p log2 modf nan nextafter perm pi
        pow prod radians remainder sin sinh sqrt tan tanh tau trunc ulp"""),
    # Not get_type_hints or ForwardRef: both evaluate annotation strings.
    "typing": _names("Any Callable ClassVar Dict Final Iterable List Literal Optional Sequence Tuple Union"),
    "dataclasses": _names("dataclass field replace asdict astuple"),
    "__future__": _names("annotations"),
    # Gluon: the public names of these modules in triton 3.6 (the H200's) and 3.9, less typing
    # helpers, IR internals, the AMD and Blackwell-only submodules and 3.6's ``thread_barrier``
    # (gone in 3.9, where the tests check every listed name exists).
    "triton.experimental": _names("gluon"),
    "triton.experimental.gluon": _names("constexpr_function jit language must_use_result nvidia"),
    "triton.experimental.gluon.language": _names("""
        AutoLayout BlockedLayout CachePolicy CoalescedLayout DistributedLinearLayout DotOperandLayout
        NVMMADistributedLayout NVMMASharedLayout PaddedSharedLayout SharedLinearLayout SliceLayout
        SwizzledSharedLayout abs add aggregate_replace allocate_shared_memory arange associative_scan
        assume atomic_add atomic_and atomic_cas atomic_load atomic_max atomic_min atomic_or atomic_poll
        atomic_store atomic_xchg atomic_xor barrier base_type bfloat16 block_type broadcast cast cdiv
        ceil clamp constexpr convert_layout cos cumprod cumsum device_assert device_print
        distributed_type div_rn dot_fma dtype erf exp exp2 expand_dims expect_zero fdiv float16
        float32 float64 float8e4b15 float8e4b8 float8e4nv float8e5 float8e5b16 floor fma fp4_to_fp full
        full_like gather histogram inline_asm_elementwise int1 int16 int32 int64 int8 join load log log2
        map_elementwise max max_constancy max_contiguous maximum min minimum mul multiple_of num_ctas
        num_programs num_warps nvidia permute pointer_type program_id ravel reduce reduce_or reshape
        rsqrt set_auto_layout shared_memory_descriptor shared_memory_descriptor_type sin split sqrt
        sqrt_rn static_assert static_print static_range store sub sum tensor
        to_linear_layout to_tensor tuple tuple_type uint16 uint32 uint64 uint8 umulhi void
        warp_specialize where xor_sum zeros zeros_like"""),
    "triton.experimental.gluon.language.nvidia": _names("hopper"),
    "triton.experimental.gluon.language.nvidia.hopper": _names("""
        CachePolicy fence_async_shared mbarrier mma_v2 tma warpgroup_mma
        warpgroup_mma_accumulator warpgroup_mma_accumulator_type warpgroup_mma_init warpgroup_mma_wait"""),
    "triton.experimental.gluon.language.nvidia.hopper.tma": _names("""
        NVMMASharedLayout async_atomic_add async_atomic_and async_atomic_max async_atomic_min
        async_atomic_or async_atomic_xor async_copy_global_to_shared async_copy_shared_to_global async_load
        async_store make_tensor_descriptor store_wait tensor_descriptor tensor_descriptor_type"""),
    "triton.experimental.gluon.language.nvidia.hopper.mbarrier": _names(
        "MBarrierLayout allocate_mbarrier arrive expect init invalidate wait"),
    "triton.experimental.gluon.nvidia": _names("hopper"),
    "triton.experimental.gluon.nvidia.hopper": _names("NVMMASharedLayout TensorDescriptor"),
}
# libdevice modules hold only extern math functions (a test checks it): any lowercase name.
LIBDEVICE_MODULES = frozenset({"triton.language.extra.libdevice", "triton.language.extra.cuda.libdevice"})
LIBDEVICE_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")

# Attribute names allowed on values that are not modules: tensors, dtypes, devices, TMA
# descriptors, Triton configs and kernels, Gluon layouts and shared-memory descriptors, containers
# and strings, nn.Module helpers.
OBJECT_ATTRIBUTES: frozenset[str] = _DTYPES | _names("""
    shape stride dtype device is_contiguous contiguous view reshape numel size dim ndim t T mT to
    flatten permute transpose unsqueeze squeeze expand expand_as view_as reshape_as element_size
    storage_offset is_cuda is_floating_point new_empty new_zeros new_ones new_full zero_ fill_
    copy_ clone detach requires_grad data chunk split narrow select unbind sum mean max min amax
    amin abs exp log sqrt rsqrt sigmoid add add_ sub mul mul_ div matmul softmax
    type index itemsize element_ty primitive_bitwidth name multi_processor_count major minor
    value kwargs num_warps num_stages num_ctas block_shape base strides from_tensor load store
    trans broadcast_to expand_dims cast
    weight bias eps training register_buffer register_parameter parameters forward
    append extend insert pop items keys values get update setdefault count join split strip
    startswith endswith replace lower upper args
    nbytes block_type slice layout get_default_for bit_length""")

ALLOWED_BUILTINS: frozenset[str] = _names("""
    range len min max abs sum round divmod pow isinstance issubclass int float bool str tuple list
    dict set frozenset slice bytes bytearray zip enumerate reversed sorted all any map filter super property
    staticmethod print repr NotImplemented Ellipsis Exception ValueError TypeError
    KeyError IndexError RuntimeError NotImplementedError AssertionError ArithmeticError
    ZeroDivisionError OverflowError AttributeError SystemExit""")
BUILTIN_NAMES: frozenset[str] = frozenset(dir(builtins)) | {"__builtins__"}
# Names Triton's CPU interpreter (``triton.runtime.interpreter``) copies into a kernel's module on
# its first launch, wherever the module lacks them (numpy, inspect and the interpreter's own
# classes), less the typing names and those a candidate may import itself. A read of a name the
# candidate never surely bound falls through to them (``static_scopes.py``); these are refused
# wherever they appear, so no order of module-level calls can reach them either.
INTERPRETER_NAMES: frozenset[str] = _names("""
    ASTTransformer ExtraFunctions FunctionRewriter GridExecutor InterpretedFunction
    InterpreterBuilder InterpreterError InterpreterOptions KernelInterface ReduceOps
    ReduceScanOpInterface ScanOps TensorDescHandle TensorHandle TritonSemantic ast inspect
    interpreter_builder interpreter_semantic np np_erf_fp32 np_erf_fp64 np_umulhi_u64 partial
    textwrap time""")
# Every global of Triton's CPU interpreter module (``triton.runtime.interpreter``), copied into a
# kernel's module on its first launch wherever the module lacks the name: a function's read of one
# of these finds the candidate's binding only if the module made it before its first statement that
# can run code (``static_scopes.resolve``'s ``early``); ``test_static_scopes`` recomputes the list.
INTERPRETER_GLOBALS: frozenset[str] = _names("""
    ASTTransformer Callable Dict ExtraFunctions FunctionRewriter GridExecutor
    InterpretedFunction InterpreterBuilder InterpreterError InterpreterOptions KernelInterface
    List Optional ReduceOps ReduceScanOpInterface ScanOps T TensorDescHandle TensorDescriptor
    TensorHandle TritonSemantic Tuple TypeVar _InterpreterComparison _LangPatchScope _MISSING
    _convert_float _dot_scaled_scale_to_f32 _e2m1_to_f32 _erf _get_np_dtype _get_signed_np_dtype
    _implicit_cvt _interpreter _ir _mxfp_value_handle_to_float32 _patch_attr _patch_builtin
    _patch_lang _patch_lang_core _patch_lang_tensor _patch_reduce_scan
    _prepare_dot_scaled_operand _rewrap_tensor _round_f32_to_tf32 _tuple_create _umulhi_64
    _unpack_e2m1 _unwrap_tensor _validate_np_data_size annotations ast dataclass dataclasses
    inspect interpreter_builder interpreter_semantic math np np_erf_fp32 np_erf_fp64
    np_umulhi_u64 partial textwrap time tl triton""")
# Dunder names reported as forbidden calls (the others as forbidden attributes).
FORBIDDEN_DUNDER_NAMES: frozenset[str] = frozenset({"__builtins__", "__import__", "__loader__", "__spec__"})
ALLOWED_DUNDERS: frozenset[str] = frozenset({"__init__", "__name__"})

# Attribute names that reach timers, streams, graphs, compilers, precision flags, host copies or
# raw pointers, whatever object they are read from or define: checked before the allowlists so
# that the finding names the hack.
FORBIDDEN_ATTRIBUTES: dict[str, str] = {
    **{a: "timer or synchronisation API (#3, #6)" for a in (
        "Event", "elapsed_time", "synchronize", "perf_counter", "cudart")},
    **{a: "stream or graph API: work could escape the timed stream (#3)" for a in (
        "Stream", "stream", "set_stream", "current_stream", "default_stream", "ExternalStream",
        "CUDAGraph", "graph", "graphs", "make_graphed_callables")},
    **{a: "compiler or library fallback (#8)" for a in (
        "compile", "jit_script", "script", "trace", "library", "ops", "cpp_extension",
        "load_inline", "hub", "utils", "backends", "inductor", "export")},
    **{a: "changes numeric precision flags (#10)" for a in (
        "set_float32_matmul_precision", "allow_tf32", "allow_bf16_reduced_precision_reduction",
        "allow_fp16_reduced_precision_reduction", "set_default_dtype", "use_deterministic_algorithms",
        "autocast")},
    **{a: "host copy or raw pointer of a tensor (#7, #8)" for a in (
        "numpy", "tolist", "from_numpy", "frombuffer", "data_ptr", "untyped_storage",
        "storage", "set_allocator_settings", "memory", "caching_allocator_alloc")},
    **{a: "runs a Python callback per element on the host (#8)" for a in ("apply_", "map_", "map2_")},
    **{a: "patches or inspects the judge (#6)" for a in (
        "runtime", "compiler", "testing", "knobs", "set_per_process_memory_fraction",
        "manual_seed", "seed", "get_rng_state", "set_rng_state", "modules")},
    **{a: "stdlib module reached through an attribute (#4, #6)" for a in (
        "sys", "os", "threading", "ctypes", "inspect", "importlib", "builtins", "subprocess",
        "multiprocessing", "gc", "signal", "socket", "shutil", "pickle", "io", "pathlib", "types",
        "weakref", "atexit", "functools", "concurrent", "asyncio", "platform", "tempfile",
        "distributed", "package", "serialization", "save", "from_file")},
}
# Frame, code, generator and traceback attributes reach the globals of any function (#6).
FORBIDDEN_ATTRIBUTE_PREFIXES: tuple[str, ...] = ("f_", "gi_", "cr_", "ag_", "tb_", "co_")

_n = ast  # node types below, spelled short
ALLOWED_NODES: frozenset[type] = frozenset({
    _n.Module, _n.FunctionDef, _n.ClassDef, _n.Return, _n.Delete, _n.Assign, _n.AugAssign,
    _n.AnnAssign, _n.For, _n.While, _n.If, _n.With, _n.withitem, _n.Raise, _n.Try,
    _n.ExceptHandler, _n.Assert, _n.Import, _n.ImportFrom, _n.alias, _n.Expr, _n.Pass, _n.Break,
    _n.Continue, _n.BoolOp, _n.BinOp, _n.UnaryOp, _n.Lambda, _n.IfExp, _n.Dict, _n.Set,
    _n.ListComp, _n.SetComp, _n.DictComp, _n.GeneratorExp, _n.comprehension, _n.Compare, _n.Call,
    _n.keyword, _n.FormattedValue, _n.JoinedStr, _n.Constant, _n.Attribute, _n.Subscript,
    _n.Starred, _n.Name, _n.List, _n.Tuple, _n.Slice, _n.arguments, _n.arg, _n.Load, _n.Store,
    _n.Del, *(getattr(_n, c) for c in (
        "And Or Add Sub Mult MatMult Div Mod Pow LShift RShift BitOr BitXor BitAnd FloorDiv Invert "
        "Not UAdd USub Eq NotEq Lt LtE Gt GtE Is IsNot In NotIn").split()),
})
# Deeper than any honest kernel (the corpus of expert solutions and unit seeds peaks at 15) and
# than CPython's own limit of 200 nested brackets; a 700-term sum is 700 deep.
MAX_AST_DEPTH = 200
