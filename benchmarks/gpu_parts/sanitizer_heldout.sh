# PART=sanitizer_heldout (issue 35, items 3 and "Speed"), ~4 minutes. Sourced by benchmarks/gpu_session.sh.
# 1. the 500-line audit with a harness on the GPU (benchmarks/audit_speed.py, lightning_attn2.py, 508 lines): first
#    and warm call; issue 35's bar is < 20 s on a GPU (the CPU figure is in benchmarks/RESULTS.md);
# 2. compute-sanitizer memcheck over the out-of-bounds claims the CPU audit made on the held-out files
#    (benchmarks/results/sanitizer_claims_cpu_2026-12-06.json): the sanitizer's own verdict on each, one child per
#    file. A claim the interpreter's bounds check made that memcheck CONFIRMS is a real GPU fault; "no invalid access
#    seen" on a real-labelled claim means the GPU's layout hides it (or the claim is the interpreter's alone).
TAIL=8 run audit_speed 100 python3 benchmarks/audit_speed.py --files tests/audit_public_corpus/lightning_attn/lightning_attn2.py \
  --json "$OUT/x/audit_speed.json"
TAIL=40 run sanitizer_heldout 140 python3 benchmarks/sanitizer_check.py --group held_out --budget 100 \
  --json "$OUT/x/sanitizer_heldout.json"
