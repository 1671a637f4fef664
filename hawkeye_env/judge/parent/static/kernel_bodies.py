"""What a kernel's body may do: compute on its arguments and write tensors, nothing the host sees.

Under Triton's CPU interpreter a kernel is plain Python run in the candidate's process and its
values are numpy data: the text of a loaded block (``str(x)``), an exception's message, an append
to a list or a call of a plain Python function hands what the kernel read to host code, which then
computes the answer where no op recorder sees it (docs/threat-model.md #8; CPU verdicts). None of that
compiles for a GPU. So in the body of a module-level ``jit`` def (``static_kernels``):

* no ``raise``, ``try``, ``with``, f-string, ``lambda``, ``del``, ``yield``, ``await``, and no
  store to a subscript or an attribute;
* a call is of a function of Triton's, Gluon's, ``math``'s or a unit's module (``tl.``, ``gl.``,
  ``math.``: the allowlist checks the name), a kernel of the source, a name imported from one of
  those modules, a parameter (a kernel passed as an argument: the worker refuses any other
  callable at launch, ``launch_values.launch_value``) or one of ``KERNEL_BUILTINS``; not torch's
  (``torch.zeros(size, out=t)`` on a tensor passed in would resize its storage to a size the
  kernel read, which the host sees);
* a method call names a method of Triton's or Gluon's values (``KERNEL_METHODS``), and any other
  attribute it reads on a value (not a module) is one that Triton's values or types carry
  (``KERNEL_ATTRIBUTES``): not what its kernel objects carry (a heuristics kernel's ``values``, an
  interpreted kernel's ``kwargs``, the functions behind them), which a nested kernel call would
  hand to a parameter that calls it;
* a module-level name of the source that it reads is an import, a kernel or a constant (literals,
  ``tl.constexpr`` of literals, arithmetic of them); not a list, a dict or an object; and so is
  each parameter's default, which the interpreter passes to the kernel unseen by the worker's
  launch check.

The worker keeps the same line at run time: launch arguments (``launch_values.launch_value``) and a
launch that fails under the interpreter while forward goes on (``worker._refused_launches``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from hawkeye_env.judge.parent.static.classes import imported_names
from hawkeye_env.judge.parent.static.syntax import Finding
from hawkeye_env.judge.shared.source_kernels import KERNEL_BUILTINS

FORBIDDEN_IN_KERNELS = {
    ast.Raise: "raise", ast.Try: "try", ast.With: "with", ast.JoinedStr: "an f-string", ast.Lambda: "lambda",
    ast.Delete: "del", ast.Yield: "yield", ast.YieldFrom: "yield", ast.Await: "await",
}
if hasattr(ast, "TryStar"):
    FORBIDDEN_IN_KERNELS[ast.TryStar] = "try"


def _kernel_methods() -> frozenset[str]:
    """Public methods and attributes of Triton's and Gluon's kernel values (tensors, constexprs,
    tensor descriptors, shared memory), less the compiler's own (``to_ir``, ``mangle``)."""
    import triton.language.core as core

    kinds: list[type] = [core.tensor, core.constexpr]
    kinds += [getattr(core, n) for n in ("tensor_descriptor", "tensor_descriptor_base", "tuple") if hasattr(core, n)]
    try:
        import triton.experimental.gluon.language._core as gluon_core

        kinds += [v for n, v in vars(gluon_core).items()
                  if isinstance(v, type) and ("descriptor" in n.lower() or n == "tensor")]
    except ImportError:
        pass
    names = {n for kind in kinds for n in dir(kind) if not n.startswith("_")}
    return frozenset((names | {"bit_length"}) - {"to_ir", "mangle", "item"})


KERNEL_METHODS = _kernel_methods()
NOT_KERNEL_FUNCTION = "not a function of Triton's, Gluon's, math's or a unit's"

# Attributes that Triton's values and types carry per instance, not in their classes' ``dir``.
_INSTANCE_ATTRIBUTES = frozenset({
    "value", "type", "element_ty", "primitive_bitwidth", "int_bitwidth", "int_signedness",
    "fp_mantissa_width", "exponent_bias", "itemsize", "address_space", "name", "shape", "strides",
    "block_shape", "numel", "layout", "dtype",
})


def _kernel_attributes() -> frozenset[str]:
    """``KERNEL_METHODS`` and the public names of Triton's and Gluon's types (dtypes, pointer,
    block and tuple types, layouts) and their instances' own attributes, less the compiler's own."""
    import triton.language.core as core

    kinds: list[type] = [getattr(core, n) for n in ("base_type", "dtype", "pointer_type", "block_type",
                                                     "tuple_type", "constexpr_type") if hasattr(core, n)]
    try:
        import triton.experimental.gluon.language._layouts as layouts

        kinds += [v for v in vars(layouts).values() if isinstance(v, type)]
    except ImportError:
        pass
    names = {n for kind in kinds for n in dir(kind) if not n.startswith("_")}
    return frozenset((names | KERNEL_METHODS | _INSTANCE_ATTRIBUTES) - {"to_ir", "mangle"})


KERNEL_ATTRIBUTES = _kernel_attributes()


def _constant(node: ast.AST, module_of: Callable[[ast.AST], str | None]) -> bool:
    """A literal, arithmetic of literals, a tuple of them, or ``constexpr(...)`` of them."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp):
        return _constant(node.operand, module_of)
    if isinstance(node, ast.BinOp):
        return _constant(node.left, module_of) and _constant(node.right, module_of)
    if isinstance(node, ast.Tuple):
        return all(_constant(e, module_of) for e in node.elts)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "constexpr":
        return module_of(node.func.value) is not None and all(_constant(a, module_of) for a in node.args)
    return False


def module_bindings(tree: ast.Module, kernels: set[str], module_of: Callable[[ast.AST], str | None]) -> dict[str, str]:
    """Each module-level name: ``import``, ``kernel``, ``constant`` or ``other`` (bound otherwise,
    or more than once)."""
    kinds: dict[str, list[str]] = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for a in stmt.names:
                kinds.setdefault(a.asname or a.name.split(".")[0], []).append("import")
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            kinds.setdefault(stmt.name, []).append("kernel" if stmt.name in kernels else "other")
        else:
            constant = isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None and _constant(
                stmt.value, module_of)
            for node in ast.walk(stmt):
                if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                    kinds.setdefault(node.id, []).append("constant" if constant else "other")
    return {name: k[0] if len(k) == 1 else "other" for name, k in kinds.items()}


def kernel_module(path: str) -> bool:
    """Whether a kernel may call the functions of module ``path`` (or a name imported from it):
    Triton's and Gluon's, ``math``'s and the units'."""
    return path == "math" or path.split(".")[0] in ("triton", "units")


def _params(fn: ast.FunctionDef) -> set[str]:
    a = fn.args
    return {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if x is not None}


def kernel_body_findings(tree: ast.Module, kernels: list[ast.FunctionDef], where: dict[int, str],
                         module_of: Callable[[ast.AST], str | None]) -> list[Finding]:
    """Findings for what the bodies of ``kernels`` (the source's module-level ``jit`` defs) may not
    do (module docstring); ``where`` is ``static_scopes.resolve``'s, ``module_of`` the checker's."""
    names = {k.name for k in kernels}
    bound = module_bindings(tree, names, module_of)
    imported = imported_names(tree)
    findings: list[Finding] = []

    def add(node: ast.AST, fn: ast.FunctionDef, what: str) -> None:
        findings.append(Finding("forbidden_call", getattr(node, "lineno", fn.lineno), f"kernel {fn.name}: {what}: "
                                "under the CPU interpreter a kernel is Python, and this would hand what it reads "
                                "to the host; a kernel computes on its arguments and writes tensors (#8)"))

    for fn in kernels:
        params = _params(fn)
        for default in (*fn.args.defaults, *(d for d in fn.args.kw_defaults if d is not None)):
            if not (_constant(default, module_of) or isinstance(default, ast.Name)
                    and bound.get(default.id) == "constant"):
                add(default, fn, "a parameter's default is not a constant")
        body = [n for stmt in fn.body for n in ast.walk(stmt)]
        called = {id(n.func) for n in body if isinstance(n, ast.Call)}
        for node in body:
            if type(node) in FORBIDDEN_IN_KERNELS:
                add(node, fn, FORBIDDEN_IN_KERNELS[type(node)])
            elif isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)):
                add(node, fn, "a store to a subscript or an attribute")
            elif (isinstance(node, ast.Attribute) and id(node) not in called and module_of(node.value) is None
                  and node.attr not in KERNEL_ATTRIBUTES):
                add(node, fn, f"reads .{node.attr}, not an attribute of Triton's values or types")
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                scope = where.get(id(node))
                if scope == "module" and bound.get(node.id, "other") == "other":
                    add(node, fn, f"reads the module-level {node.id}, which is not an import, a kernel or a constant")
                elif scope == "fallthrough" and node.id not in KERNEL_BUILTINS:
                    add(node, fn, f"reads the builtin {node.id}")
            elif isinstance(node, ast.Call):
                func = node.func
                module = module_of(func.value) if isinstance(func, ast.Attribute) else None
                origin = imported.get(func.id, "") if isinstance(func, ast.Name) and where.get(id(func)) == "module" \
                    else ""
                if isinstance(func, ast.Attribute) and module is None and func.attr not in KERNEL_METHODS:
                    add(node, fn, f"calls .{func.attr}(), not a method of Triton's or Gluon's values")
                elif module is not None and not kernel_module(module):
                    add(node, fn, f"calls {module}.{func.attr}, {NOT_KERNEL_FUNCTION}")
                elif origin and not kernel_module(origin):
                    add(node, fn, f"calls {origin}, {NOT_KERNEL_FUNCTION}")
                elif isinstance(func, ast.Name) and where.get(id(func)) == "local" and func.id not in params:
                    add(node, fn, f"calls the local {func.id}")
                elif not isinstance(func, (ast.Name, ast.Attribute)):
                    add(node, fn, "calls what an expression returns")
    return findings


__all__ = ["FORBIDDEN_IN_KERNELS", "KERNEL_ATTRIBUTES", "KERNEL_BUILTINS", "KERNEL_METHODS", "kernel_body_findings",
           "kernel_module", "module_bindings"]
