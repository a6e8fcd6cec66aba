# PART=estimate_fit (issue 40 item 3, branch i40): sourced by benchmarks/gpu_session.sh. ~4 minutes.
# The no-GPU ESTIMATE, fitted per size at small counted sizes and extrapolated to the problem's own sizes, against
# GPU medians of the 2026-12-04 trial stages at full size: same order per problem, and the fit's error on its
# held-back run. Each problem is printed as it finishes (the limit may cut the second); EST_PROBLEMS picks others.
run estimate_fit 230 python3 benchmarks/estimate_fit_vs_gpu.py ${EST_PROBLEMS:-45_Gemm_Sigmoid_LogSumExp 62_Matmul_GroupNorm_LeakyReLU_Sum}
