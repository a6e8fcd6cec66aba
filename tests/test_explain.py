"""run_benchmark explain=true (worker/benchmark/explain.py): torch.compile's plan for the reference.

The parser is checked on a hand-written module in Inductor's GPU format (tests/explain_fixtures/*.py.txt: there is no
GPU here to generate one); the whole path (Service -> worker op "explain" -> Inductor's real CPU code) on two small
problems: a conv + epilogue + pooling, and a GEMM + epilogue. On the CPU there are no timings.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytorch_to_triton.cli import _explain_text
from pytorch_to_triton.worker.benchmark import explain

FIX = Path(__file__).parent / "explain_fixtures"
ROOT = Path(__file__).resolve().parent.parent


def test_parse_reads_kernels_library_calls_templates_and_channels_last_from_a_cuda_module() -> None:
    info = explain.parse([(FIX / "cuda_wrapper_conv_epilogue.py.txt").read_text()], "cuda")
    names = [ln["name"] for ln in info["launches"]]
    assert names == ["extern_kernels.convolution", "triton_poi_fused_hardswish_max_pool2d_with_indices_mish_sub_0",
                     "triton_tem_fused_addmm_1"]
    conv, epi, tem = info["launches"]
    assert conv["library"] == "cuDNN" and conv["role"] == "convolution" and conv["nodes"] == ["conv2d"]
    assert epi["kind"] == "triton pointwise" and epi["role"] == "epilogue + pooling"
    assert epi["aten"] == ["sub", "hardswish", "max_pool2d_with_indices", "mish"] and epi["nodes"][0] == "x_1"
    assert tem["template"] and tem["role"] == "GEMM (Triton template)"
    lay = [x for x in info["channels_last"] if x["buffer"] == "buf0"]
    assert lay and lay[0]["stride"] == [14400, 1, 480, 16] and lay[0]["what"] == "the convolution's output"
    assert not [x for x in info["channels_last"] if x["buffer"] == "buf1"]  # contiguous NCHW: not channels-last


def test_times_come_from_the_profile_and_the_plan_says_what_is_left_to_win() -> None:
    info = explain.parse([(FIX / "cuda_wrapper_conv_epilogue.py.txt").read_text()], "cuda")
    cudnn = "sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x64x32"
    prof = {"runs": 10, "kernels": {
        cudnn: {"ms": 0.2, "launches_per_call": 1.0},
        "triton_poi_fused_hardswish_max_pool2d_with_indices_mish_sub_0": {"ms": 0.1, "launches_per_call": 1.0},
        "triton_tem_fused_addmm_1": {"ms": 0.05, "launches_per_call": 1.0},
        "void at::native::elementwise_kernel<128, 2>": {"ms": 0.01, "launches_per_call": 1.0}},
        "library_kernels": {"cudnn_convolution": [cudnn]}}
    explain._attach_times(info, prof)
    conv, epi, tem = info["launches"]
    assert conv["ms"] == 0.2 and conv["device_kernels"] == [cudnn] and epi["ms"] == 0.1 and tem["ms"] == 0.05
    assert info["total_ms"] == pytest.approx(0.36) and conv["share_pct"] == pytest.approx(55.6)
    assert [k["name"] for k in info["other_kernels"]] == ["void at::native::elementwise_kernel<128, 2>"]
    text = explain.plan_text(info)
    assert "0.3600 ms of device time" in text and "only those are left to win" in text
    assert "implicit-GEMM conv" in text and "channels-last" in text and "no timings" not in text


def test_ops_from_a_cpp_kernel_name_keep_multi_word_aten_names() -> None:
    assert explain._ops_from_name("cpp_fused_hardswish_max_pool2d_with_indices_mish_sub_1") == [
        "hardswish", "max_pool2d_with_indices", "mish", "sub"]
    assert explain._ops_from_name("triton_per_fused__softmax_add_3") == ["_softmax", "add"]


@pytest.fixture(scope="module")
def svc():
    from pytorch_to_triton.service import Service

    s = Service(ROOT)
    yield s
    s.close()


def test_cpu_explain_of_a_conv_epilogue_pool_problem(svc) -> None:
    rep = svc.benchmark(reference="tests/explain_fixtures/conv_pool_reference.py", explain=True)
    plan = rep.explain
    assert plan is not None and plan.error is None, plan
    assert plan.device == "cpu" and plan.timing == "CPU interpreter: no timings" and plan.case == "bench"
    conv = [k for k in plan.launches if k.role == "convolution"]
    assert conv and conv[0].library == "oneDNN" and conv[0].kind in ("extern", "library op")
    epi = [k for k in plan.launches if "pooling" in k.role]
    assert epi and {"hardswish", "max_pool2d_with_indices"} <= set(epi[0].aten), plan.launches
    assert all(k.ms is None for k in plan.launches)
    assert any(x.get("what") == "the convolution's output" for x in plan.channels_last), plan.channels_last
    assert "keep the convolution in the library" in plan.plan and "CPU interpreter: no timings" in plan.plan
    assert rep.reproduce.endswith("--explain")
    text = _explain_text(plan)
    assert "extern_kernels.convolution" in text and "channels-last:" in text


def test_cpu_explain_of_a_gemm_epilogue_problem(svc) -> None:
    rep = svc.benchmark(reference="tests/explain_fixtures/gemm_epilogue_reference.py", explain=True)
    plan = rep.explain
    assert plan is not None and plan.error is None, plan
    gemm = [k for k in plan.launches if k.role == "GEMM"]
    assert gemm and gemm[0].name.startswith(("extern_kernels.", "torch.ops.")), plan.launches
    epi = [k for k in plan.launches if k.library is None]
    assert epi and "gelu" in epi[-1].aten and "reduction" in epi[-1].role, plan.launches
    assert "GEMM in the library" in plan.plan and not plan.channels_last
