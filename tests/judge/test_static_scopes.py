"""``static_scopes.resolve``: Python's scoping rules over the syntax tree, and the static rules that
read them (threat model #18). A read that may find no binding of the candidate's falls through to
the module's globals and the builtins, where Triton's CPU interpreter puts names of its own."""

from __future__ import annotations

import ast

import pytest

from hawkeye_env.judge.parent.static.rules import check_source
from hawkeye_env.judge.parent.static.scopes import resolve
from tests.judge.test_static_allowlist import ESCAPE_HEAD as HEAD


def _reads(source: str) -> list[tuple[int, str, str]]:
    tree = ast.parse(source)
    where = resolve(tree).where
    return sorted((n.lineno, n.id, where[id(n)]) for n in ast.walk(tree)
                  if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))


SCOPES = '''x = 1
def f(a, b=x):
    y = a
    return y + x + z
def g():
    def h():
        return y
    y = 2
    return h
class C:
    K = 2
    L = K * 2
    M = later
    def m(self):
        return K
def outer(e):
    class S:
        e = e
        f2 = e2
    e2 = 1
    return S
v = [i + x for i in range(3)]
w = lambda q, r=x: q + r + u
later = 3
if x:
    maybe = 1
def reads_maybe():
    return maybe
gone = 1
del gone
def reads_gone():
    return gone
'''


def test_each_read_resolves_where_python_finds_it():
    got = {(line, name): where for line, name, where in _reads(SCOPES)}
    assert got[(2, "x")] == "module"  # a default is read in the enclosing scope
    assert got[(4, "y")] == "local" and got[(4, "x")] == "module" and got[(4, "z")] == "fallthrough"
    assert got[(7, "y")] == "enclosing"  # bound later in the enclosing function: a closure
    assert got[(12, "K")] == "class"  # bound by an earlier statement of the class body
    assert got[(13, "later")] == "fallthrough"  # the module binds it after the class body runs
    assert got[(15, "K")] == "fallthrough"  # class bodies are not enclosing scopes
    assert got[(18, "e")] == "fallthrough"  # LOAD_NAME: the class binds e, so the parameter is skipped
    assert got[(19, "e2")] == "enclosing"  # not bound by the class: the enclosing function's
    assert got[(22, "i")] == "local" and got[(22, "x")] == "module" and got[(22, "range")] == "fallthrough"
    assert got[(23, "q")] == "local" and got[(23, "u")] == "fallthrough"
    assert got[(28, "maybe")] == "fallthrough"  # bound only under an if
    assert got[(32, "gone")] == "fallthrough"  # deleted at module level


FORWARD = '''class ModelNew(nn.Module):
    def forward(self, a, b):
        out = torch.empty_like(a)
        add_kernel[(triton.cdiv(a.numel(), 1024),)](a, b, out, a.numel(), BLOCK=1024)
        return out
'''


@pytest.mark.parametrize("body,fragment", [
    # a parameter of an unrelated function binds nothing at module level (names the interpreter injects)
    ("def _declares(np, inspect):\n    pass\n\n\ndef host(a):\n    return np.asarray(a)\n\n\n",
     "module-level name np"),
    ("def _declares(textwrap2):\n    pass\n\n\ndef host(a):\n    return textwrap2\n\n\n",
     "name textwrap2 is not surely bound"),
    # a class body that binds a name reads the builtin of that name, not the enclosing parameter
    ("def _escape(exec, globals):\n    class _Scope:\n        exec = exec\n        exec('1', globals())\n\n\n",
     "use of exec is not allowed"),
    ("def _escape(getattr):\n    class _Scope:\n        g = getattr\n        getattr = g\n    return _Scope\n\n\n",
     "use of getattr is not allowed"),
    # a module-level binding made only under a condition may never be made
    ("if False:\n    helper = None\n\n\ndef host(a):\n    return helper(a)\n\n\n", "name helper is not surely bound"),
    # a module-level read before the binding falls through (a kernel launched at import injected it)
    ("x = ast\nast = 1\n\n\n", "module-level name ast"),
    ("counter += 1\n\n\n", "counter += ...: the name is not surely bound"),
    # an annotation is read where the def runs, not among the function's parameters
    ("def outer():\n    def host(exec: exec('1')):\n        pass\n\n\n", "use of exec is not allowed"),
    # a name only read inside an assignment target binds nothing
    ("SEEN = {}\nSEEN[lambda: dataclasses] = 0\n\n\ndef host():\n    return dataclasses\n\n\n",
     "name dataclasses is not surely bound"),
    # a function called at import, after a kernel launch, reads the interpreter's dataclasses
    ("def peek():\n    return dataclasses\n\n\nZ = torch.zeros(4)\nadd_kernel[(1,)](Z, Z, Z, 4, BLOCK=4)\n"
     "EARLY = peek()\ndataclasses = None\n\n\n", "name dataclasses is not surely bound"),
    # self is an instance only as a method's first parameter
    ("class Names:\n    rewriter = None\n\n\ndef escape(self):\n    return self.rewriter\n\n\n",
     "self.rewriter: rewriter is also"),
    ("class Names:\n    def rewriter(self):\n        self = add_kernel\n        return self.rewriter\n\n\n",
     "self.rewriter: rewriter is also"),
    ("def patch(self):\n    self.cache = None\n\n\n", "only attributes of self (a method's first parameter"),
    # keys built from strings at run time, builtins' names defined by a class body
    ("def host(g):\n    return g['__built' + 'ins__']\n\n\n", "a subscript key built from strings"),
    ("class Names:\n    def exec(self):\n        pass\n\n\n", "class Names defines exec"),
    # library functions that evaluate strings: tl.str_to_ty, Gluon's aggregate (typing.get_type_hints)
    ("def host(s):\n    return tl.str_to_ty(s, None)\n\n\n", "str_to_ty is not on the allowlist"),
    ("class Host:\n    done: '[print(1), int][1]'\n\n\n", "a string annotation"),
    ("def host(x: 'int') -> 'int':\n    return x\n\n\n", "a string annotation"),
    # a mapping read by .get/.pop/.setdefault follows the subscript rules
    ("def host(g):\n    return g.get('__builtins__')\n\n\n", "dunder attribute __builtins__"),
    ("def host(g):\n    return g.pop('exec')\n\n\n", "the builtin exec is not allowed"),
    ("def host(g):\n    return g.setdefault('__buil' + 'tins__')\n\n\n", "key built from strings"),
    # names with code behind them on kernels, modules or the interpreter's objects are not defined
    ("class Names:\n    rewriter = None\n    _compile_and_exec = None\n\n\n", "defines rewriter"),
    ("class Names:\n    def go(self):\n        self.get_capture_scope = None\n\n\n",
     "defines get_capture_scope"),
])
def test_reads_that_fall_through_are_findings(body, fragment):
    findings = check_source(HEAD + body + FORWARD)
    assert any(fragment in f.message for f in findings), findings


def test_honest_scoping_passes():
    body = '''BLOCK = 1024


class Tiles:
    M = 64
    N = M * 2
    names = [f"t{i}" for i in range(3)]


def launch(a, b, out, partial=None, time=0):
    grid = lambda meta: (triton.cdiv(a.numel(), meta["BLOCK"]),)
    def inner():
        return out
    add_kernel[grid](a, b, inner(), a.numel(), BLOCK=BLOCK)
    return out


'''
    source = HEAD + body + FORWARD.replace("add_kernel[(triton.cdiv(a.numel(), 1024),)](a, b, out, a.numel(), "
                                           "BLOCK=1024)", "launch(a, b, out)")
    assert check_source(source) == []


def test_resolution_never_recurses():
    tree = ast.parse("y = 1\n")
    nested = ast.Constant(1)
    for _ in range(20000):
        nested = ast.UnaryOp(op=ast.USub(), operand=nested)
    tree.body[0].value = nested
    assert resolve(tree).where == {id(tree.body[0].targets[0]): "module"}


def test_the_interpreter_globals_list_covers_this_triton():
    """``static_allowlist.INTERPRETER_GLOBALS`` is data; recompute it from the installed Triton."""
    import triton.runtime.interpreter as interpreter

    from hawkeye_env.judge.parent.static.allowlist import INTERPRETER_GLOBALS, INTERPRETER_NAMES

    names = {k for k in vars(interpreter) if not (k.startswith("__") and k.endswith("__"))}
    assert not names - INTERPRETER_GLOBALS, sorted(names - INTERPRETER_GLOBALS)
    assert INTERPRETER_NAMES <= INTERPRETER_GLOBALS


def test_a_method_and_its_closures_see_self_as_the_instance():
    source = HEAD + """class ModelNew(nn.Module):
    scale = 2

    def forward(self, a, b):
        def launch():
            return self.scale
        self.cached = launch()
        out = torch.empty_like(a)
        add_kernel[(triton.cdiv(a.numel(), 1024),)](a, b, out, a.numel(), BLOCK=1024)
        return out

    @property
    def width(self):
        return self.scale
"""
    assert check_source(source) == []
