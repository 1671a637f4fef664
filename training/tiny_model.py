"""A tiny local chat model for tests and smoke runs: no download, seconds to build.

The tokenizer is a byte-level BPE trained with ``tokenizers`` on the repo's own kernels (task
solutions, references, units), so kernel text is a few characters per token; it carries Qwen2.5's
special tokens and TRL's copy of the Qwen2.5 chat template (tool-capable, which TRL recognises for
response parsing). The model is a randomly initialised 2-layer Llama with hidden size 64. Example::

    python -m training.tiny_model /tmp/tiny     # then: hawkeye train sft --model /tmp/tiny ...
    python -m training.tiny_model /tmp/small --hidden-size 256 --layers 4   # for a GPU smoke run
"""

from __future__ import annotations

import sys
from pathlib import Path

from hawkeye_env.observation import SYSTEM_PROMPT, reference_source
from hawkeye_env.tasks.registry import list_tasks, solution_source
from units.lib.index import UNITS_DIR

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>",
                  "<tool_response>", "</tool_response>"]


def training_corpus() -> list[str]:
    """Texts the tokenizer is trained on: the system prompt, task references and solutions, unit files."""
    texts = [SYSTEM_PROMPT]
    for spec in list_tasks():
        texts.append(reference_source(spec))
        if spec.solution:
            texts.append(solution_source(spec))
    texts += [p.read_text(encoding="utf-8") for p in sorted(UNITS_DIR.glob("*/*.py"))]
    texts += [p.read_text(encoding="utf-8") for p in sorted(UNITS_DIR.glob("*/README.md"))]
    return texts


def build_tiny_tokenizer(vocab_size: int = 2048):
    """The byte-level BPE trained on ``training_corpus()`` (a ``PreTrainedTokenizerFast``, no chat
    template, not saved); ``decode(encode(text))`` gives back any text. About 3 s on 2 cores."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    bpe.train_from_iterator(training_corpus(), trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   bos_token=None, unk_token=None)


def build_tiny_model(out_dir: str | Path, vocab_size: int = 2048, hidden_size: int = 64, layers: int = 2,
                     seed: int = 0) -> Path:
    """Train the tokenizer, initialise the model, save both (safetensors + tokenizer files) to ``out_dir``."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM
    from trl.chat_template_utils import qwen2_5_chat_template

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tiny_tokenizer(vocab_size)
    tokenizer.chat_template = qwen2_5_chat_template
    tokenizer.save_pretrained(out)

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=hidden_size, intermediate_size=2 * hidden_size,
        num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=32_768,
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id, bos_token_id=None,
        tie_word_embeddings=True,
    )
    model = LlamaForCausalLM(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(out)
    return out


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m training.tiny_model", description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", nargs="?", default="tiny-model")
    parser.add_argument("--hidden-size", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--vocab-size", type=int, default=2048)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(build_tiny_model(args.out_dir, vocab_size=args.vocab_size, hidden_size=args.hidden_size,
                           layers=args.layers, seed=args.seed))


if __name__ == "__main__":
    main(sys.argv[1:])
