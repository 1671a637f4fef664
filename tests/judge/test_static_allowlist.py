"""The static rules as allowlists (docs/threat-model.md #18, #23): honest sources pass untouched, each
escape class of the denylist is a finding with its reason, and no input makes the checker raise.

The judge applies these rules to the modules it writes from a CPU plan's kernels
(``static/rules.check_kernel_module``, ``source_check.rules_problem``), never to a candidate's
host code (a fast filter is all a candidate's source meets, ``static_checks.fast_filter``). The
honest corpus here is every expert solution and every unit module a candidate imports or gets
inlined, whose kernels the replay rebuilds; the search policy's composed seeds are checked in
``tests/policies/test_search_seeds_static.py``.
"""

from __future__ import annotations

import ast
import importlib
import types
from pathlib import Path

import pytest
import triton

from hawkeye_env.judge.parent.static.allowlist import FORBIDDEN_ATTRIBUTES, MODULE_ATTRIBUTES, OBJECT_ATTRIBUTES
from hawkeye_env.judge.parent.static.rules import check_source, parse_source

REPO = Path(__file__).resolve().parents[2]
CANDIDATES = REPO / "tests" / "candidates"


def _unit_modules_candidates_use() -> list[Path]:
    """Each unit's kernel.py and every units module an expert solution imports (what
    ``policies/inline.py`` splices into a candidate)."""
    paths = set(REPO.glob("units/*/kernel.py"))
    for solution in (REPO / "hawkeye_env" / "tasks").glob("*/solution.py"):
        for node in ast.parse(solution.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("units."):
                paths.add(REPO.joinpath(*node.module.split(".")).with_suffix(".py"))
    return sorted(paths)


def _honest_corpus() -> list[Path]:
    solutions = sorted((REPO / "hawkeye_env" / "tasks").glob("*/solution.py"))
    return [*solutions, *_unit_modules_candidates_use()]


@pytest.mark.parametrize("path", _honest_corpus(), ids=lambda p: str(p.relative_to(REPO)))
def test_honest_source_has_no_finding(path: Path) -> None:
    findings = check_source(path.read_text(encoding="utf-8"))
    assert findings == [], "; ".join(f"line {f.line}: {f.code}: {f.message}" for f in findings)


def test_side_stream_gpu_candidate_is_rejected_statically() -> None:
    findings = check_source((CANDIDATES / "gpu" / "side_stream.py").read_text(encoding="utf-8"))
    assert any(f.code == "forbidden_call" and "stream or graph API" in f.message for f in findings), findings


# One candidate file per escape class of the denylist: (file, code, message fragment, line).
H18 = [
    ("h18_match_class_pattern", "forbidden_attribute", "syntax MatchClass is not allowed", 20),
    ("h18_module_hop_numpy", "forbidden_attribute", "F.np: np is not on the allowlist of torch.nn.functional", 19),
    ("h18_module_hop_typing_operator", "forbidden_attribute", "typing.operator: operator is not on the allowlist", 20),
    ("h18_alias_private_torch_c", "forbidden_attribute", "module torch used as a value", 18),
    ("h18_alias_private_torch_c", "forbidden_attribute", "private attribute t._C", 19),
    ("h18_format_field_access", "forbidden_attribute", "format reads attributes by name", 17),
    ("h18_getattr_default_arg", "forbidden_call", "use of getattr is not allowed", 18),
    ("h18_type_three_args", "forbidden_call", "use of type is not allowed", 18),
    ("h18_deep_expression", "forbidden_call", "nests more than 200 levels", 16),
    ("h18_coding_declaration", "forbidden_call", "a coding declaration of unicode_escape", 1),
    ("h18_interpreter_def_in_string", "forbidden_call", "line 23 begins with 'def '", 23),
    ("h18_interpreter_nested_def", "forbidden_call", "line 27 begins with 'def '", 27),
    ("h18_kernel_in_function", "forbidden_call", "jit is allowed only as the decorator", 19),
    ("h18_decorator_runs_early", "forbidden_call", "_LangPatchScope is not surely bound", 20),
    ("h18_decorator_below_jit", "forbidden_call", "jit is not its innermost decorator", 36),
    ("h18_backslash_ends_block", "forbidden_call", "inspect ends its block at line 22", 23),
    ("h18_class_alias_method", "forbidden_attribute", "class Setter used as a value", 24),
    ("h18_class_body_method_list", "forbidden_attribute", "method setx used as a value in its class body", 22),
    ("h18_class_decorator", "forbidden_call", "a class decorator other than dataclasses.dataclass", 22),
    ("h18_self_attribute_chain", "forbidden_attribute", "only self's own attributes may be assigned", 29),
]


@pytest.mark.parametrize("file, code, fragment, line", H18, ids=lambda x: str(x))
def test_escape_candidate_is_rejected(file: str, code: str, fragment: str, line: int) -> None:
    source = (CANDIDATES / "hacks" / f"{file}.py").read_text(encoding="utf-8")
    assert "Hack #" in source.split('"""')[1], "docstring must name the hack"
    findings = check_source(source)
    assert any(f.code == code and fragment in f.message and f.line == line for f in findings), findings


def test_every_h18_file_is_in_the_table() -> None:
    assert {p.stem for p in (CANDIDATES / "hacks").glob("h18_*.py")} == {row[0] for row in H18}


@pytest.mark.parametrize(
    "source, code, fragment",
    [
        # a class's methods reached as plain functions, so self is whatever they are called with
        ("class C:\n    def f(self, v):\n        self.x = v\nK = (C if 1 else C)\n", "forbidden_attribute",
         "class C used as a value"),
        ("class C:\n    def f(self, v):\n        self.x = v\ndef g(k=C):\n    return k\n",
         "forbidden_attribute", "class C used as a value"),
        ("class C:\n    def f(self, v):\n        self.x = v\n    g = staticmethod(f)\n", "forbidden_attribute",
         "method f used as a value in its class body"),
        ("class O:\n    class I:\n        def f(self, v):\n            self.x = v\nK = [O.I]\n",
         "forbidden_attribute", "class O.I used as a value"),
        ("class O:\n    class I:\n        def f(self, v):\n            self.x = v\nO.I.f(1, 2)\n",
         "forbidden_attribute", "O.I.f: a method read on its class"),
        ("class C:\n    def f(self, v):\n        self.x = v\n    @classmethod\n    def g(cls, v):\n"
         "        cls.f(1, v)\n", "forbidden_call", "use of classmethod is not allowed"),
        # the builtins the rules read by name may not be rebound, and annotations that call are not exempt
        ("def isinstance(a, b):\n    return a\n", "forbidden_call", "binds isinstance"),
        ("def property(f):\n    return f\n", "forbidden_call", "binds property"),
        ("cm = classmethod\n", "forbidden_call", "use of classmethod is not allowed"),
        ("import dataclasses\ndataclass = dataclasses.dataclass\n", "forbidden_call", "binds dataclass"),
        ("K = []\nclass C:\n    pass\ndef f(x: K.append(C)):\n    return x\n", "forbidden_attribute",
         "class C used as a value"),
        ("import dataclasses\nx = dataclasses.fields\n", "forbidden_attribute", "fields is not on the allowlist"),
        # aliasing a module, whatever the spelling: the module may not be a value
        ("import torch\nt = torch\nx = t._C", "forbidden_attribute", "module torch used as a value"),
        ("import torch\na, b = torch, 1", "forbidden_attribute", "module torch used as a value"),
        ("import torch\ndef f(t=torch):\n    return t", "forbidden_attribute", "module torch used as a value"),
        ("import torch\nf = lambda t=torch: t", "forbidden_attribute", "module torch used as a value"),
        ("import torch\nx = [torch.nn][0]", "forbidden_attribute", "module torch.nn used as a value"),
        ("import triton\nx = triton.language", "forbidden_attribute", "module triton.language used as a value"),
        ("import torch\nif (t := 1):\n    pass", "forbidden_call", "syntax NamedExpr"),
        # unknown spellings are rejected by default, on modules and on other objects
        ("import torch\nx = torch.some_future_api(1)", "forbidden_attribute",
         "torch.some_future_api: some_future_api is not on the allowlist of torch"),
        ("from torch import some_future_api", "forbidden_attribute", "not on the allowlist of torch"),
        ("import torch\nx = torch.ones(1).some_future_method()", "forbidden_attribute",
         "attribute some_future_method is not on the allowlist"),
        ("import torch\nx = torch.cuda.memory_allocated()", "forbidden_attribute",
         "not on the allowlist of torch.cuda"),
        # stdlib modules hanging off allowed ones
        ("import dataclasses\nb = dataclasses.builtins", "forbidden_call", "builtins: stdlib module"),
        ("import dataclasses\nc = dataclasses.copy.copy", "forbidden_attribute",
         "copy is not on the allowlist of dataclasses"),
        ("import torch\ng = torch.glob.glob('/')", "forbidden_attribute", "glob is not on the allowlist of torch"),
        ("import typing\nh = typing.get_type_hints", "forbidden_attribute", "get_type_hints is not on the allowlist"),
        ("import torch.nn.functional as F\nt = F.torch.load", "forbidden_attribute", "torch is not on the allowlist"),
        ("import units.lib.harness", "forbidden_import", "import units.lib.harness is not allowed"),
        ("from units.lib.index import list_units", "forbidden_import", "from units.lib.index import is not allowed"),
        ("from units.persistent_splitk.kernel import torch", "forbidden_attribute",
         "torch is not on the allowlist of units.persistent_splitk.kernel"),
        # string-named getters and reflection builtins
        ("g = getattr", "forbidden_call", "use of getattr is not allowed"),
        ("v = vars()", "forbidden_call", "use of vars is not allowed"),
        ("h = hasattr(1, 'real')", "forbidden_call", "use of hasattr is not allowed"),
        ("o = object.__getattribute__", "forbidden_call", "use of object is not allowed"),
        ("def f(x=input):\n    return x", "forbidden_call", "use of input is not allowed"),
        ("x = '{0.__class__}'.format(1)", "forbidden_attribute", "format reads attributes by name"),
        ("x = '{0[0]}'.format([1])", "forbidden_attribute", "format reads attributes by name"),
        ("x = '{0:{1.real}}'.format(1, 2)", "forbidden_attribute", "format reads attributes by name"),
        ("s = '{}'\nx = s.format(1)", "forbidden_attribute", "format reads attributes by name"),
        ("x = '{a}'.format_map({'a': 1})", "forbidden_attribute", "format_map reads attributes by name"),
        ("x = f'{(1).real!r}'", "forbidden_attribute", "attribute real is not on the allowlist"),
        # classes built or bent at run time
        ("C = type('C', (), {})", "forbidden_call", "use of type is not allowed"),
        ("class A(int, metaclass=int):\n    pass", "forbidden_call", "class keywords (metaclass=...)"),
        ("class A:\n    def f(self):\n        return super(A, self)", "forbidden_call", "super() with arguments"),
        ("class A:\n    __getattr__ = len", "forbidden_attribute", "name __getattr__ is not allowed"),
        # syntax outside the allowlist
        ("def g():\n    yield 1", "forbidden_call", "syntax Yield is not allowed"),
        ("async def g():\n    pass", "forbidden_call", "syntax AsyncFunctionDef is not allowed"),
        ("try:\n    pass\nexcept* ValueError:\n    pass", "forbidden_call", "syntax TryStar is not allowed"),
        ("match 1:\n    case {'a': x}:\n        pass", "forbidden_attribute", "syntax MatchMapping is not allowed"),
        # private names: only self._x the candidate assigns; assignment only under self
        ("class M:\n    def __init__(self):\n        self._c = 1\n    def f(self, x):\n        return x._c",
         "forbidden_attribute", "private attribute x._c"),
        ("class M:\n    def f(self):\n        return self._modules", "forbidden_attribute",
         "private attribute self._modules"),
        # a name assigned as self.x is allowed on self only, not on foreign objects
        ("class M:\n    def __init__(self):\n        self.grad_fn = 1\n    def f(self, t):\n        return t.grad_fn",
         "forbidden_attribute", "t.grad_fn: attribute grad_fn is not on the allowlist"),
        ("import torch\ny = torch.ones(1).apply_(len)", "forbidden_call", "apply_: runs a Python callback"),
        ("x = [1]\nx.foo = 1", "forbidden_attribute", "assigning to x.foo: only attributes of self"),
        ("import torch\ntorch.nn.functional.softmax = len", "forbidden_attribute", "patches a module"),
    ],
)
def test_escape_spelling_is_a_finding(source: str, code: str, fragment: str) -> None:
    findings = check_source(source)
    assert any(f.code == code and fragment in f.message for f in findings), findings


@pytest.mark.parametrize(
    "source",
    [
        "def f(input):\n    return input",  # a parameter shadows the builtin
        "class M:\n    def __init__(self):\n        self._c = 1\n    def f(self):\n        return self._c",
        "class C:\n    BLOCK = 64\n    def f(self, c):\n        return c.BLOCK",  # class-body names are defined
        "x = '{} {:>4} {name}'.format(1, 2, name=3)",
        "x = 1\ny = f'{x!r:>8}'",
        "import torch\ndef f(x):\n    with torch.no_grad():\n        return x.float().contiguous()",
        "from triton.language.extra import libdevice\nimport triton.language as tl\n"
        "def k(x):\n    return libdevice.fast_expf(x) + tl.extra.cuda.libdevice.exp(x)",
        "x = " + "[" * 150 + "]" * 150,  # deep, but below the bound
        # the units a candidate may import, beside the refused units.lib infrastructure
        "from units.persistent_splitk.kernel import matmul\nimport units.block_scaled_fp4 as bs\n"
        "from units.chunked_scan.kernel import chunk_simple_gla, log_decay",
        "import units.fp4_ptx as ptx\nimport units.gluon_compat",
    ],
)
def test_honest_spelling_passes(source: str) -> None:
    assert check_source(source) == []


@pytest.mark.parametrize(
    "source",
    [
        "x = " + " + ".join(["1"] * 700),
        "x = " + " + ".join(["1"] * 5000),
        "x = " + "-" * 900 + "1",
        "x = " + "not " * 900 + "1",
        "x = y" + ".a" * 5000,
        "x = " + "(" * 5000 + "1" + ")" * 5000,
        "x = " + "[" * 5000 + "]" * 5000,
        "x = '" + "{:" * 3000 + "}" * 3000 + "'.format(1)",
    ],
    ids=["sum700", "sum5000", "unary900", "not900", "attr5000", "parens5000", "lists5000", "format3000"],
)
def test_checker_never_raises_on_deep_input(source: str) -> None:
    """#23: a deep tree is a finding (or, past the parser's own limits, a SyntaxError the evaluator
    turns into a compile error), never a RecursionError that loses the batch."""
    try:
        findings = check_source(source)
    except SyntaxError:
        with pytest.raises(SyntaxError):
            parse_source(source)
        return
    assert "format" in source or any("nests more than" in f.message for f in findings), findings


def test_allowlisted_names_exist_and_reach_no_unlisted_module() -> None:
    """Every module attribute on a list exists in the installed torch / triton / stdlib (a typo
    would silently admit nothing), and a listed name that is itself a module is a list's key
    (otherwise it would be a hop to a module whose attributes nobody listed)."""
    for path, names in MODULE_ATTRIBUTES.items():
        module = importlib.import_module(path)
        for name in names:
            try:
                value = getattr(module, name) if hasattr(module, name) else importlib.import_module(f"{path}.{name}")
            except ImportError:
                pytest.fail(f"{path}.{name} does not exist")
            if isinstance(value, types.ModuleType):
                assert value.__name__ in MODULE_ATTRIBUTES or value.__name__.endswith("libdevice"), f"{path}.{name}"


def test_libdevice_modules_hold_only_functions() -> None:
    for path in ("triton.language.extra.libdevice", "triton.language.extra.cuda.libdevice"):
        module = importlib.import_module(path)
        for name in (n for n in dir(module) if not n.startswith("_") and n != "core"):
            assert isinstance(getattr(module, name), types.FunctionType), f"{path}.{name}"


def test_no_allowlisted_name_is_always_forbidden() -> None:
    listed = OBJECT_ATTRIBUTES.union(*MODULE_ATTRIBUTES.values())
    assert not listed & set(FORBIDDEN_ATTRIBUTES)
    assert not any(n.startswith("_") for n in listed)


def test_a_checker_failure_is_a_finding_not_an_exception(monkeypatch) -> None:
    """#23: whatever goes wrong inside the checker, the candidate gets a finding and the batch goes on."""
    from hawkeye_env.judge.parent.static import walker

    def broken(self):
        raise RuntimeError("bug")

    monkeypatch.setattr(walker.Checker, "run", broken)
    [finding] = check_source("x = 1")
    assert finding.code == "forbidden_call" and "static checker failed" in finding.message


GLUON_CANDIDATE = '''
import torch
import triton
from torch import nn
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import mbarrier, tma, warpgroup_mma
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor


@gluon.jit
def add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: gl.constexpr):
    layout: gl.constexpr = gl.BlockedLayout([4], [32], [4], [0])
    offs = gl.program_id(0) * BLOCK + gl.arange(0, BLOCK, layout=layout)
    mask = offs < n
    gl.store(out_ptr + offs, gl.load(a_ptr + offs, mask=mask) + gl.load(b_ptr + offs, mask=mask), mask=mask)


@gluon.jit
def tile_kernel(a_desc, bar_count: gl.constexpr):
    smem = gl.allocate_shared_memory(a_desc.dtype, a_desc.block_type.shape, a_desc.layout)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=bar_count)
    mbarrier.expect(bar, a_desc.block_type.nbytes)
    tma.async_copy_global_to_shared(a_desc, [0, 0], bar, smem)
    mbarrier.wait(bar, 0)
    mbarrier.invalidate(bar)


class ModelNew(nn.Module):
    def forward(self, a, b):
        out = torch.empty_like(a)
        n = out.numel()
        add_kernel[(triton.cdiv(n, 512),)](a, b, out, n, BLOCK=512)
        layout = gl.NVMMASharedLayout.get_default_for([64, 64], gl.bfloat16)
        desc = TensorDescriptor.from_tensor(a.view(-1, 64), [64, 64], layout)
        return out
'''


def test_gluon_kernels_pass_the_static_rules_as_triton_ones_do():
    """A candidate may write Gluon (layouts, shared memory, TMA, mbarriers, wgmma)."""
    assert check_source(GLUON_CANDIDATE) == []


def test_gluon_does_not_open_a_way_around_the_rules():
    for bad in ("from triton.experimental.gluon import _runtime",
                "from triton.experimental.gluon.language.amd import cdna3",
                "import triton.experimental.gluon._compiler"):
        assert check_source(f"{bad}\nclass ModelNew: pass\n"), bad


ESCAPE_HEAD = '''import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(a_ptr + offs, mask=offs < n) + tl.load(b_ptr + offs, mask=offs < n),
             mask=offs < n)


'''


@pytest.mark.parametrize("body,fragment", [
    # Triton's CPU interpreter copies its module globals (inspect, np, ast) into the kernel's module
    ("class ModelNew(nn.Module):\n    getmembers = None\n\n    def forward(self, a, b):\n"
     "        return dict(inspect.getmembers(add_kernel))['fn']\n", "module-level name inspect"),
    # a class-body name opened that attribute on every object, a kernel's included
    ("class ModelNew(nn.Module):\n    get_capture_scope = None\n\n    def forward(self, a, b):\n"
     "        return add_kernel.get_capture_scope()\n", "add_kernel.get_capture_scope"),
    # string subscripts read what the attribute rules refuse
    ("class ModelNew(nn.Module):\n    def forward(self, a, b):\n        g = {}\n"
     "        return g['__builtins__']\n", "dunder attribute __builtins__"),
    ("class ModelNew(nn.Module):\n    def forward(self, a, b):\n        g = {}\n"
     "        return g['exec']('1')\n", "the builtin exec is not allowed"),
])
def test_escapes_through_injected_names_class_body_names_and_string_subscripts(body, fragment):
    findings = check_source(ESCAPE_HEAD + body)
    assert any(fragment in f.message for f in findings), findings


def test_a_candidates_own_objects_keep_their_fields():
    source = ESCAPE_HEAD + '''class Tiles:
    block = 1024


class ModelNew(nn.Module):
    def forward(self, a, b):
        config = Tiles()
        out = torch.empty_like(a)
        add_kernel[(triton.cdiv(a.numel(), config.block),)](a, b, out, a.numel(), BLOCK=config.block)
        return out
'''
    assert check_source(source) == []


@pytest.mark.parametrize("body,fragment", [
    # a kernel reached through another name, a parameter or an attribute of an own object
    ("class ModelNew(nn.Module):\n    get_capture_scope = None\n\n    def forward(self, a, b):\n"
     "        k = add_kernel\n        return k.get_capture_scope()\n",
     "k.get_capture_scope: get_capture_scope is also"),
    ("class ModelNew(nn.Module):\n    fn = None\n\n    def forward(self, a, b):\n"
     "        return scope(add_kernel)\n\n\ndef scope(kernel):\n    return kernel.fn\n", "kernel.fn: fn is also"),
    ("class Holder:\n    kernel = add_kernel\n    cache = None\n\n\nclass ModelNew(nn.Module):\n"
     "    def forward(self, a, b):\n        h = Holder()\n        return h.kernel.cache\n",
     "h.kernel.cache: cache is also"),
    # a name bound to an own instance and to something else is no instance
    ("class Cfg:\n    src = ''\n\n\nclass ModelNew(nn.Module):\n    def forward(self, a, b):\n"
     "        c = Cfg()\n        c = add_kernel\n        return c.src\n", "c.src: src is also"),
    # a method read on its class takes any object as self
    ("class ModelNew(nn.Module):\n    def get_capture_scope(self):\n        return self.get_capture_scope()\n\n"
     "    def forward(self, a, b):\n        return ModelNew.get_capture_scope(add_kernel)\n",
     "a method read on its class binds self"),
    # inside a kernel on the CPU interpreter a tl.tensor's handle holds a numpy array
    ("class Box:\n    handle = 1\n\n\n@triton.jit\ndef peek(p, B: tl.constexpr):\n"
     "    x = tl.load(p + tl.arange(0, B))\n    y = x.handle\n\n\nclass ModelNew(nn.Module):\n"
     "    def forward(self, a, b):\n        return a\n",
     "defines handle"),
])
def test_class_body_names_that_kernels_and_tensors_carry_are_read_on_own_objects_only(body, fragment):
    findings = check_source(ESCAPE_HEAD + body)
    assert any(fragment in f.message for f in findings), findings


def test_own_instances_static_methods_and_class_constants_keep_their_names():
    source = ESCAPE_HEAD + '''class Tiles:
    in_features = 1
    out_features = 2
    BLOCK = 1024

    @staticmethod
    def grid(n):
        return (triton.cdiv(n, Tiles.BLOCK),)


class ModelNew(nn.Module):
    def forward(self, a, b):
        tiles = Tiles()
        out = torch.empty_like(a)
        n = a.numel() + tiles.in_features + tiles.out_features - 3
        add_kernel[Tiles.grid(a.numel())](a, b, out, n, BLOCK=Tiles.BLOCK)
        return out
'''
    assert check_source(source) == []


def _foreign_objects():
    """The objects a candidate holds but did not define: kernels, configs, tensors, modules, types and
    builtin values, and inside a kernel on the CPU interpreter its ``tl.tensor``s, their
    ``TensorHandle``s, the numpy arrays, dtypes and scalars behind those and Triton's types. Returns
    (objects for the foreign names, objects for the code names, the types whose values are data)."""
    import dataclasses
    import functools
    import typing

    import numpy as np
    import torch
    import triton
    import triton.language as tl
    from triton.experimental import gluon
    from triton.runtime.interpreter import InterpretedFunction, TensorHandle

    handle = TensorHandle(np.zeros(2, np.float32), tl.float32)
    objects = [_sample_kernel, _autotuned, _with_heuristics, gluon.jit(_sample_gluon), triton.Config({"B": 1}),
               tl.constexpr(1), torch.zeros(1), torch.nn.Linear(1, 1), torch.nn.Parameter(torch.zeros(1)),
               torch.float32, torch.device("cpu"), torch.Size([1]), torch.Generator(), torch.finfo(torch.float32),
               lambda: 0, len, torch.zeros(1).add, functools.partial(len), type, {}, [], (), "", b"", 0, 0.0, 0j,
               set(), frozenset(), slice(1), range(1), Exception(), dataclasses.field(), typing.List[int], None,  # noqa: UP006
               handle, tl.core.tensor(handle, tl.block_type(tl.float32, [2])), handle.data, handle.data.dtype,
               np.float32(1), np.float32, tl.float32, tl.pointer_type(tl.float32), tl.block_type(tl.float32, [2])]
    interpreted = InterpretedFunction(_sample)
    data = (int, float, bool, str, bytes, complex, type(None), torch.Tensor, torch.dtype, torch.device, torch.Size)
    return objects, [*objects, interpreted, interpreted.rewriter], data


def _code_names(objects, data) -> set[str]:
    """Names (private too, dunders not) whose value on one of ``objects`` is not plain ``data``."""
    code = set()
    for o in objects:
        for n in dir(o):
            if n.startswith("__") and n.endswith("__"):
                continue
            try:
                value = getattr(o, n)
            except Exception:  # noqa: BLE001 - a property that raises is counted as code
                code.add(n)
                continue
            plain = isinstance(value, data) or (isinstance(value, (tuple, list)) and all(isinstance(x, data)
                                                                                        for x in value))
            if not plain:
                code.add(n)
    return code


def test_the_foreign_attribute_list_covers_this_triton_and_torch():
    """``static_foreign.FOREIGN_ATTRIBUTES`` and ``CODE_ATTRIBUTES`` are data; recompute them from the
    installed packages."""
    from hawkeye_env.judge.parent.static.foreign import CODE_ATTRIBUTES, FOREIGN_ATTRIBUTES

    objects, code_objects, data = _foreign_objects()
    names = {n for o in objects for n in dir(o) if not n.startswith("_")}
    missing = sorted(names - FOREIGN_ATTRIBUTES - OBJECT_ATTRIBUTES)
    assert not missing, f"add to hawkeye_env/judge/parent/static/foreign.py: {missing}"
    assert {"fn", "cache", "get_capture_scope", "apply", "run", "handle", "tofile", "to_ir"} <= FOREIGN_ATTRIBUTES
    code = _code_names(code_objects, data)
    assert not code - CODE_ATTRIBUTES, f"add to CODE_ATTRIBUTES: {sorted(code - CODE_ATTRIBUTES)}"
    assert {"rewriter", "_compile_and_exec", "_transform_ast", "get_capture_scope", "fn", "handle",
            "tofile"} <= CODE_ATTRIBUTES


def _sample(x):
    pass


def _sample_gluon(x):
    pass


_sample_kernel = triton.jit(_sample)
_autotuned = triton.autotune(configs=[triton.Config({})], key=[])(triton.jit(_sample))
_with_heuristics = triton.heuristics({"B": lambda args: 1})(triton.jit(_sample))
