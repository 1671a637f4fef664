"""Under Triton's CPU interpreter a kernel's loads and stores reach only its launch's tensor
arguments once ``install_memory_bounds`` ran (the worker installs it before any candidate code):
an honest kernel and masked-out lanes pass, an address past the storage or cast from a pointer
raises ``KernelMemoryError``."""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl

interpreter = pytest.importorskip("triton.runtime.interpreter")


@triton.jit
def _copy(src, dst, n, shift, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst + offs, tl.load(src + offs + shift, mask=mask, other=0.0), mask=mask)


@triton.jit
def _peek(src, dst, BLOCK: tl.constexpr):
    here = src.to(tl.int64, bitcast=True)
    far = (here // 4096 - 1) * 4096  # a page below the tensor: no argument's storage
    tl.store(dst + tl.arange(0, BLOCK), tl.load(src + (far - here) // 4 + tl.arange(0, BLOCK)))


@pytest.fixture
def bounded():
    """The patches installed for the test, the interpreter's own methods restored after it."""
    from hawkeye_env.judge.sandboxed.common.interpreter.bounds import install_memory_bounds

    owners = {(interpreter.GridExecutor, "_init_args_hst")} | {
        (interpreter.InterpreterBuilder, n) for n in
        ("create_masked_load", "create_masked_store", "create_atomic_cas", "create_atomic_rmw")}
    saved = {(o, n): o.__dict__[n] for o, n in owners}
    install_memory_bounds()
    try:
        yield
    finally:
        for (owner, name), original in saved.items():
            setattr(owner, name, original)


@pytest.mark.skipif(torch.cuda.is_available(), reason="the bounds are the CPU interpreter's")
def test_in_bounds_and_masked_out_lanes_pass(bounded):
    src, dst = torch.arange(8, dtype=torch.float32), torch.zeros(8)
    _copy[(1,)](src, dst, 8, 0, BLOCK=8)
    assert torch.equal(dst, src)
    dst.zero_()
    _copy[(1,)](src, dst, 5, 0, BLOCK=16)  # lanes 5..15 point past the tensors but are masked out
    assert torch.equal(dst[:5], src[:5])


@pytest.mark.skipif(torch.cuda.is_available(), reason="the bounds are the CPU interpreter's")
def test_an_address_outside_every_argument_raises(bounded):
    from hawkeye_env.judge.sandboxed.common.interpreter.bounds import KernelMemoryError

    src, dst = torch.arange(8, dtype=torch.float32), torch.zeros(8)
    with pytest.raises(Exception, match="outside every tensor argument") as caught:
        _copy[(1,)](src, dst, 8, 4, BLOCK=8)  # reads 4 elements past src's storage
    assert "KernelMemoryError" in repr(caught.value) or isinstance(caught.value, KernelMemoryError)
    with pytest.raises(Exception, match="outside every tensor argument"):
        _peek[(1,)](src, dst, BLOCK=4)


class _Storage:
    def data_ptr(self):
        return 1

    def nbytes(self):
        return 1 << 62


class _Answers:
    """Not a tensor, though it answers ``untyped_storage`` with a whole address space."""

    def untyped_storage(self):
        return _Storage()


@triton.jit
def _poke(fake, addr):
    tl.load(addr.to(tl.pointer_type(tl.int64)))


@pytest.mark.skipif(torch.cuda.is_available(), reason="the bounds are the CPU interpreter's")
def test_only_real_tensors_name_a_range(bounded, monkeypatch):
    from hawkeye_env.judge.sandboxed.candidate import guards

    # The bounds alone: a worker's launch wrapper (installed in this process by an earlier test)
    # would refuse the object before the launch (launch_values.launch_value, tested in test_worker_guards).
    monkeypatch.setattr(guards, "launch_value", lambda value, depth=0: True)
    here = torch.zeros(2, dtype=torch.int64)
    with pytest.raises(Exception, match="no tensor argument"):
        _poke[(1,)](_Answers(), here.data_ptr())
