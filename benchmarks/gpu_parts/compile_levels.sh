# PART=compile_levels (issue 36's cost bar): sourced by benchmarks/gpu_session.sh. About 4 minutes.
# A CPU validation now sends every autotune config through Triton's frontend only (worker/device/target_compile_child.py
# front_one) and compiles to a cubin the interpreter's config, the two likeliest to overflow and the rest while
# 10 % of the validation's time lasts; configs with the same TTIR + backend options are compiled once. This checks,
# with this image's Triton 3.6, on the autotuned gallery stages (launches recorded on the GPU, trials=1), config by
# config: the frontend pass and the full sm_90 compile, then compares.
# Confirms the design when the "total" line says gap 0 (no config passes the frontend and fails the full compile),
# front_bad 0 (the frontend refuses nothing the compiler accepts) and split 0 (one binary key never gives two
# cubins); it also proves front_one runs on Triton 3.6 (an API error shows as front_bad on every config). The
# front/full seconds are this host's CPU (not a GPU figure). CPU Triton 3.9, layernorm stage 3's 74 configs (41
# compiled in the budget): gap 0, front_bad 0, split 0, frontend 8.9 s vs full 96.7 s under load ~10.
TAIL=12 run compile_levels 235 python3 benchmarks/target_compile_levels.py --record-s 70 --budget-s 140 \
  --only layernorm/stage3,matmul/stage2,matmul/stage3,rmsnorm/stage3,flash_attention/stage2,prefix_scan/stage3
grep -h -E "^total|^\| examples" "$OUT/x/compile_levels.log" | cut -c1-300
