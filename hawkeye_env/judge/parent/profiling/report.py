"""A kernel profile as data and as the text an agent reads.

``KernelProfile`` is what ``profiling.run.profile_source`` returns for one source: per compiled
kernel the machine-code facts the replay read (``sandboxed/replay/sass.py``, checked by
``validate/facts_check.py``) with the theoretical occupancy they imply, and on a GPU Nsight
Compute's counters. ``render`` writes it beside the expert solution's profile of the same shape
and the task's speed of light, one line per fact, no text of the candidate's.

Theoretical occupancy (``occupancy``) is what the compiled kernel allows on an sm_90 SM: warps
resident at once over 64, limited by registers (65,536 per SM, allocated per warp in units of 256),
shared memory (228 KiB per SM, 1 KiB of it reserved per block), warps (64) and blocks (32) per SM
(CUDA C Programming Guide, compute capability 9.0). Achieved occupancy needs a GPU.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

SM90_REGISTERS = 65536
SM90_REGISTER_UNIT = 256  # registers are allocated per warp in units of 256
SM90_SHARED_BYTES = 228 * 1024
SM90_RESERVED_SHARED_BYTES = 1024  # per block, for the system
SM90_WARPS = 64
SM90_BLOCKS = 32
WARP = 32


@dataclass
class KernelProfile:
    """One source's profile on one task: ``stage`` ``"ok"`` or the verdict stage that stopped it
    before its kernels could be read (``compile_error``, ``rejected``, ``runtime_error``...) with
    ``error``; ``kernels`` the checked facts per compiled kernel; ``counters`` Nsight Compute's
    (``{"kernels": [...]}``) or why there are none (``{"unavailable": reason}``); ``seconds`` what
    each step cost (``record``, ``replay``, ``sass`` the cross-compile or binary read, ``counters``,
    ``wall``); ``cached`` when answered from this process's cache."""

    task: str
    device: str
    shape: dict
    stage: str = "ok"
    error: str = ""
    kernels: list[dict] = field(default_factory=list)
    counters: dict = field(default_factory=dict)
    seconds: dict = field(default_factory=dict)
    cached: bool = False

    @property
    def ok(self) -> bool:
        return self.stage == "ok"

    def to_dict(self) -> dict:
        return asdict(self)


def occupancy(registers: int | None, shared_bytes: int, num_warps: int | None) -> tuple[float, str] | None:
    """``(fraction of the SM's 64 warps, limiter)`` a kernel allows (module docstring), or None
    without its registers or warps."""
    if not registers or not num_warps:
        return None
    per_warp = -(-registers * WARP // SM90_REGISTER_UNIT) * SM90_REGISTER_UNIT
    limits = {"registers": SM90_REGISTERS // per_warp // num_warps,
              "shared memory": SM90_SHARED_BYTES // (shared_bytes + SM90_RESERVED_SHARED_BYTES),
              "warps": SM90_WARPS // num_warps, "blocks": SM90_BLOCKS}
    limiter = min(limits, key=limits.get)
    return min(1.0, limits[limiter] * num_warps / SM90_WARPS), limiter


def _table(table: dict, unit: str = "") -> str:
    return ", ".join(f"{k}{unit} x{n}" for k, n in sorted(table.items(), key=lambda kv: str(kv[0]))) or "none"


def kernel_lines(k: dict) -> list[str]:
    """Two lines per compiled kernel: its resources, then its instruction mix."""
    if "error" in k:
        return [f"- {k['name']}: does not compile for sm_90: {k['error'].splitlines()[0][:200]}"]
    shared = (k.get("shared_bytes") or 0) + (k.get("static_shared_bytes") or 0)
    occ = occupancy(k.get("registers"), shared, k.get("num_warps"))
    spills = k.get("spill_stores", 0) + k.get("spill_loads", 0)
    spilled = (f"{k.get('local_bytes', 0)} B local memory per thread, {k.get('spill_stores', 0)} STL / "
               f"{k.get('spill_loads', 0)} LDL instructions" if spills or k.get("local_bytes") else "no spills")
    occ_text = "occupancy unknown" if not occ else f"theoretical occupancy {occ[0]:.0%}" + (
        f" (limited by {occ[1]})" if occ[0] < 1 else "")
    launches = k.get("launches", 1)
    head = (f"- {k['name']} ({launches} launch{'es' if launches != 1 else ''}): {k.get('num_warps')} warps, "
            f"{k.get('num_stages')} stages; {k.get('registers', '?')} registers/thread, {spilled}; "
            f"{shared / 1024:.1f} KiB shared memory; {occ_text}")
    mix = (f"  tensor cores: {_table(k.get('mma', {}))}; global loads: {_table(k.get('global_loads', {}), '-bit')}; "
           f"global stores: {_table(k.get('global_stores', {}), '-bit')}; cp.async: "
           f"{_table(k.get('async_copies', {}), '-bit')}; TMA: {_table(k.get('tma', {}))}; "
           f"{k.get('fma', 0)} FMA; {k.get('instructions', 0)} instructions")
    return [head, mix]


COUNTER_LABELS = {"achieved_occupancy_pct": "achieved occupancy", "tensor_pipe_pct": "tensor pipe busy",
                  "fma_pipe_pct": "FMA pipe busy", "dram_throughput_pct": "DRAM throughput",
                  "l2_throughput_pct": "L2 throughput", "l2_hit_rate_pct": "L2 hit rate"}


def counter_lines(counters: dict) -> list[str]:
    """Nsight Compute's counters, one line per kernel (throughputs as a share of peak), or why
    there are none."""
    if "unavailable" in counters:
        return [f"Not measured: {counters['unavailable']}."]
    out = []
    for c in counters.get("kernels", []):
        dur = "?" if c.get("duration_us") is None else f"{c['duration_us']:.1f} us"
        parts = [f"{label} {'?' if c.get(k) is None else format(c[k], '.0f') + '%'}"
                 for k, label in COUNTER_LABELS.items()]
        out.append(f"- {c['name'][:80]}: {dur}, " + ", ".join(parts))
    return out


def _section(title: str, p: KernelProfile) -> list[str]:
    if not p.ok:  # the error's last line: a traceback ends with the exception's message
        why = next((line.strip() for line in reversed(p.error.splitlines()) if line.strip()), "")
        return [f"{title}: not profiled ({p.stage}): {why[:300]}"]
    lines = [f"{title}:"]
    for k in p.kernels:
        lines += kernel_lines(k)
    if p.device == "cuda":
        lines += ["  Nsight Compute:", *("  " + x for x in counter_lines(p.counters))]
    return lines


def render(candidate: KernelProfile, expert: KernelProfile | None, light_lines: list[str]) -> str:
    """The profile text: where the figures come from, the candidate's kernels, the expert's, what
    needs a GPU, and ``light_lines`` (the speed of light and, on a GPU, the fraction reached)."""
    shape = ", ".join(f"{k}={v}" for k, v in candidate.shape.items())
    if candidate.device == "cuda":
        where = f"the plan's own cubins at {shape}, and one replayed forward under Nsight Compute"
    else:
        where = (f"a cross-compile for sm_90 (H100/H200) of the kernels the CPU recording launched at {shape}; "
                 "instruction counts are static (a loop body counts once)")
    lines = [f"Profile of the current source on {candidate.task}: {where}."]
    lines += _section("Candidate", candidate)
    if expert is not None:
        lines += _section("Expert solution, same shape", expert)
    if candidate.device != "cuda" and candidate.ok:
        lines += counter_lines(candidate.counters)
    return "\n".join(lines + light_lines)


__all__ = ["KernelProfile", "counter_lines", "kernel_lines", "occupancy", "render"]
