"""Policy backed by a local Hugging Face ``transformers`` checkpoint (no network access).

Loads ``AutoModelForCausalLM.from_pretrained(path, local_files_only=True)`` and its tokenizer (a
``.gguf`` file is loaded the same way through transformers' GGUF support, which dequantizes it to
float32 and needs the ``gguf`` package: ``pip install 'hawkeye-env[gguf]'``),
renders the shared prompt (``policies/prompts.py``) with the tokenizer's chat template when it has
one (plain ``system\\n\\nuser`` text otherwise) and samples ``n`` replies per observation with
``num_return_sequences=n``; every reply is kept in ``raw`` (``hawkeye eval`` writes
``raw_replies.jsonl``). Meant for small models and fine-tuned checkpoints on one GPU; serve
large models with vLLM (``policies/vllm_offline.py`` or ``policies/openai_compat.py``).

Example::

    pip install 'hawkeye-env[train]'
    hawkeye eval --policy hf --model /ckpt/qwen2.5-coder-1.5b-grpo --n 8
"""

from __future__ import annotations

from policies.prompts import chat_messages, prompt_text

INSTALL_HINT = "the hf policy needs transformers: pip install 'hawkeye-env[train]'"


class HFPolicy:
    """transformers sampler; see the module docstring.

    Args:
        model: local checkpoint directory, or a ``.gguf`` file.
        temperature, top_p, max_tokens: sampling parameters (``max_tokens`` = new tokens).
        seed: ``transformers.set_seed`` before each observation, offset by its position.
        device: ``cuda``, ``cpu`` or ``auto`` (cuda when available).
        dtype: torch dtype name for the weights (``bfloat16``; ``float32`` on CPU).
    """

    name = "hf"

    def __init__(
        self, model: str, temperature: float = 0.8, top_p: float = 0.95, max_tokens: int = 4096, seed: int = 0,
        device: str = "auto", dtype: str = "bfloat16",
    ):
        try:
            import torch
            import transformers
        except ImportError as exc:
            raise ImportError(INSTALL_HINT) from exc
        self._torch, self._transformers = torch, transformers
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = device
        self.model_path, self.dtype = str(model), dtype if device != "cpu" else "float32"
        where = {"local_files_only": True}
        if str(model).endswith(".gguf"):
            from pathlib import Path

            model, where["gguf_file"] = str(Path(model).parent), Path(model).name
        self.tokenizer = transformers.AutoTokenizer.from_pretrained(model, **where)
        self.model = transformers.AutoModelForCausalLM.from_pretrained(
            model, dtype=getattr(torch, self.dtype), **where,
        ).to(device).eval()
        self.temperature, self.top_p, self.max_tokens, self.seed = temperature, top_p, max_tokens, seed
        self.raw: list[dict] = []
        self.on_reply = None

    def describe(self) -> dict:
        return {"model": self.model_path, "temperature": self.temperature, "top_p": self.top_p,
                "max_tokens": self.max_tokens, "seed": self.seed, "device": self.device, "dtype": self.dtype,
                "transformers": self._transformers.__version__}

    def _render(self, obs: dict) -> str:
        if getattr(self.tokenizer, "chat_template", None):
            return self.tokenizer.apply_chat_template(chat_messages(obs), tokenize=False, add_generation_prompt=True)
        return prompt_text(obs) + "\n"

    def sample(self, observations: list[dict], n: int) -> list[list[str]]:
        out: list[list[str]] = []
        for i, obs in enumerate(observations):
            self._transformers.set_seed(self.seed + i + 7919 * int(obs.get("turn", 0)))
            enc = self.tokenizer(self._render(obs), return_tensors="pt").to(self.device)
            with self._torch.no_grad():
                generated = self.model.generate(
                    **enc, do_sample=self.temperature > 0, temperature=self.temperature or None,
                    top_p=self.top_p, max_new_tokens=self.max_tokens, num_return_sequences=n,
                    pad_token_id=self.tokenizer.pad_token_id or self.tokenizer.eos_token_id,
                )
            prompt_len = enc["input_ids"].shape[1]
            texts = self.tokenizer.batch_decode(generated[:, prompt_len:], skip_special_tokens=True)
            where = {"task_id": obs.get("task_id"), "trajectory": int(obs.get("trajectory", 0)),
                     "turn": int(obs.get("turn", 0)), "prompt_tokens": int(prompt_len)}
            self.raw += [{**where, "sample": j, "text": t} for j, t in enumerate(texts)]
            if self.on_reply is not None:
                self.on_reply(obs, texts)
            out.append(texts)
        return out
