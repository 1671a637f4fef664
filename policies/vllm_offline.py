"""Policy backed by vLLM's offline engine: ``vllm.LLM(model=path)`` in this process.

All observations of a call go to one ``LLM.chat`` batch with ``SamplingParams(n=n)``, so vLLM
schedules every prompt and sample together (the fastest way to sample best-of-N on one node). The
prompt is the shared one of ``policies/prompts.py``, rendered with the model's chat template.

Example::

    pip install 'hawkeye-env[vllm]'
    hawkeye eval --policy vllm --model /ckpt/qwen2.5-coder-7b --n 16 --workers 1
"""

from __future__ import annotations

from policies.prompts import chat_messages

INSTALL_HINT = "the vllm policy needs vLLM: pip install 'hawkeye-env[vllm]'"


class VLLMPolicy:
    """vLLM offline sampler; see the module docstring.

    Args:
        model: local checkpoint directory or a name vLLM can load.
        temperature, top_p, max_tokens, seed: ``SamplingParams`` fields.
        **engine_kwargs: passed to ``vllm.LLM`` (``tensor_parallel_size``, ``gpu_memory_utilization``...).
    """

    name = "vllm"

    def __init__(
        self, model: str, temperature: float = 0.8, top_p: float = 0.95, max_tokens: int = 4096, seed: int = 0,
        **engine_kwargs,
    ):
        try:
            import vllm
        except ImportError as exc:
            raise ImportError(INSTALL_HINT) from exc
        self._vllm = vllm
        self.llm = vllm.LLM(model=model, seed=seed, **engine_kwargs)
        self.model, self.engine_kwargs = str(model), engine_kwargs
        self.temperature, self.top_p, self.max_tokens, self.seed = temperature, top_p, max_tokens, seed

    def describe(self) -> dict:
        return {"model": self.model, "temperature": self.temperature, "top_p": self.top_p,
                "max_tokens": self.max_tokens, "seed": self.seed, "vllm": self._vllm.__version__,
                **{f"engine_{k}": str(v) for k, v in sorted(self.engine_kwargs.items())}}

    def sample(self, observations: list[dict], n: int) -> list[list[str]]:
        turn = int(observations[0].get("turn", 0)) if observations else 0
        params = self._vllm.SamplingParams(
            n=n, temperature=self.temperature, top_p=self.top_p, max_tokens=self.max_tokens,
            seed=self.seed + 104729 * turn,
        )
        results = self.llm.chat([chat_messages(obs) for obs in observations], params, use_tqdm=False)
        return [([o.text for o in r.outputs] + [""] * n)[:n] for r in results]
