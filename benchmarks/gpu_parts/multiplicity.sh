# PART=multiplicity (issue 40, branch i40): sourced by benchmarks/gpu_session.sh (run, stamp, $OUT/x set up there).
# ~3-4 minutes. 1) the "index of a repeated dimension" corpus at full size, scored independently (torch + triton
# only) and by the tool's own GPU validation: every good.py passes, every planted bug fails (the labels the CPU
# test relies on). 2) the no-GPU ESTIMATE, now fitted per size and extrapolated to the problem's own sizes, against
# GPU medians of the 2026-12-04 trial stages: same order per problem, and the fit's held-back error.
run multiplicity_gpu 150 python3 benchmarks/multiplicity_gpu.py --tool
run estimate_fit 200 python3 benchmarks/estimate_fit_vs_gpu.py
