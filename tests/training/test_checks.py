"""Bad training arguments are rejected before anything loads, with a message naming the argument:
an unknown YAML key or flag, a GRPO batch that does not hold whole groups, a model path that is not
there, an invalid device, an unknown task, a resume with no checkpoint; on the command lines they
exit 2 with that message and no traceback. Each run gets a name of its own."""

import pytest
from typer.testing import CliRunner

from hawkeye_env.cli import app
from training.args import main, parse_config
from training.checks import ConfigError, check_config
from training.config import TrainConfig
from training.recipe_options import run_name


def config(tmp_path, **kw) -> TrainConfig:
    (tmp_path / "m").mkdir(exist_ok=True)
    (tmp_path / "m" / "config.json").write_text("{}")
    return TrainConfig(**{"model": str(tmp_path / "m"), "output_dir": str(tmp_path / "out"), **kw})


@pytest.mark.parametrize("fields,message", [
    ({"device": "gpu0"}, "--device 'gpu0': must be one of auto, cpu, cuda"),
    ({"batch_size": 6, "num_generations": 4}, "6 completions per step is not a multiple of --num_generations 4"),
    ({"num_generations": 1, "batch_size": 1}, "at least 2 completions per prompt"),
    ({"model": "/no/such/checkpoint"}, "--model /no/such/checkpoint: no such file or folder"),
    ({"model": "weights.gguf"}, "--model weights.gguf: no such file or folder"),
    ({"context": "everything"}, "--context 'everything': must be one of none, docs, units, full"),
    ({"tasks": ["vector_add_fp32", "nope"]}, "unknown task 'nope'"),
    ({"resume_from_checkpoint": "latest"}, "has no checkpoint-* folder yet"),
    ({"eval_fraction": 1.0}, "--eval_fraction 1.0: must be in [0, 1)"),
])
def test_check_config_names_the_bad_argument(tmp_path, fields, message):
    with pytest.raises(ConfigError) as exc:
        check_config(config(tmp_path, **fields), "grpo")
    assert message in str(exc.value)


def test_a_good_config_passes_and_sft_ignores_the_grpo_batch_rule(tmp_path):
    check_config(config(tmp_path, tasks=["vector_add_fp32"]), "grpo")
    check_config(config(tmp_path, batch_size=3), "sft")
    check_config(config(tmp_path, model="HuggingFaceTB/SmolLM2-135M-Instruct"), "sft")  # a hub id is left to load


def test_unknown_yaml_keys_and_flags_name_the_closest_field(tmp_path):
    path = tmp_path / "grpo.yaml"
    path.write_text("model: m\nlearning_rat: 1.0e-6\n")
    with pytest.raises(ConfigError, match=r"unknown key\(s\) in the YAML file: learning_rat \(did you mean "
                                          r"learning_rate\?\)"):
        parse_config(["--config", str(path)])
    with pytest.raises(ConfigError, match=r"unknown flag\(s\): maxsteps \(did you mean max_steps\?\)"):
        parse_config(["--maxsteps", "3"])
    with pytest.raises(ConfigError, match="--extra .*must be a JSON object"):
        parse_config(["--extra", "[1]"])


def flat(text: str) -> str:
    """Typer's boxed error text as one line (box borders and wrapping removed)."""
    return " ".join(text.replace("│", " ").split())


def test_command_lines_exit_2_with_the_message_and_no_traceback(tmp_path, capsys):
    path = tmp_path / "grpo.yaml"
    path.write_text(f"model: {tmp_path / 'missing'}\ndevice: cpu\n")
    with pytest.raises(SystemExit) as exc:
        main(["grpo", "--config", str(path)])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "error: --model" in err and "no such file or folder" in err
    runner = CliRunner()
    result = runner.invoke(app, ["train", "grpo", "--model", str(tmp_path / "missing"), "--device", "cpu"])
    assert result.exit_code == 2 and "no such file or folder" in flat(result.output)
    assert "Traceback" not in result.output
    path.write_text(f"model: {config(tmp_path).model}\ndevice: cpu\n")
    result = runner.invoke(app, ["train", "run", "grpo", "--config", str(path), "--batch_size", "3"])
    assert result.exit_code == 2 and "not a multiple of --num_generations 4" in flat(result.output)
    result = runner.invoke(app, ["train", "sft", "--model", str(tmp_path), "--device", "tpu"])
    assert result.exit_code == 2 and "--device 'tpu'" in flat(result.output)


def test_every_run_gets_a_name_of_its_own(tmp_path):
    cfg = config(tmp_path)
    first, second = run_name(cfg, "grpo"), run_name(cfg, "grpo")
    assert first != second and first.startswith("grpo-out-")
    assert run_name(config(tmp_path, run_name="mine"), "sft") == "mine"
