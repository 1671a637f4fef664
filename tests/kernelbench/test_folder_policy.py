"""``policies.folder``: pre-generated solutions in KernelBench's generation layout become the
policy's replies, sample by sample; missing files are empty replies."""

from __future__ import annotations

import pytest

from hawkeye_env.edits import to_candidate
from policies import POLICIES, make_policy
from policies.folder import problem_of, solution_path
from tests.kernelbench.conftest import SOLUTIONS


def _obs(task_id: str) -> dict:
    return {"task_id": task_id, "prompt": "", "source": "", "feedback": "", "turn": 0}


def test_replies_are_the_folder_files_by_level_problem_and_sample(tmp_path):
    assert "folder" in POLICIES
    (tmp_path / "level_1_problem_19_sample_1_kernel.py").write_text("class ModelNew:\n    pass\n")
    policy = make_policy("folder", folder=tmp_path)
    [[first, second], [other, _]] = policy.sample([_obs("kb_level1_19_relu"), _obs("gemm_bf16")], n=2)
    assert first == "" and other == ""  # no sample 0; not a KernelBench task
    assert to_candidate(None, second) == "class ModelNew:\n    pass\n"


def test_the_test_solutions_follow_the_layout():
    assert problem_of("kb_level2_3_gemm_layernorm_made_in_forward") == (2, 3) and problem_of("softmax_fp32") is None
    assert solution_path(SOLUTIONS, 1, 2, 0).is_file()
    policy = make_policy("folder", folder=SOLUTIONS)
    [[reply]] = policy.sample([_obs("kb_level1_2_upper_triangular_matmul")], n=1)
    assert "class ModelNew" in to_candidate(None, reply)


def test_a_missing_folder_is_an_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        make_policy("folder", folder=tmp_path / "absent")
