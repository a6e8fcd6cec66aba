# PART=sanitizer_heldout (issue 35, item 3 and "Speed"), ~4 minutes. Sourced by benchmarks/gpu_session.sh.
# 1. audit_speed.py: the 508-line lightning_attn2.py audited with its harness, first and warm call (bar: < 20 s);
# 2. sanitizer_check.py --group held_out: memcheck over the CPU audit's out-of-bounds claims on held-out files, one
#    child per file. CONFIRMED is a real GPU fault; "no invalid access seen" on a real-labelled claim means the GPU's
#    layout hides it (or the claim is the interpreter's alone).
TAIL=8 run audit_speed 100 python3 benchmarks/audit_speed.py --files tests/audit_public_corpus/lightning_attn/lightning_attn2.py \
  --json "$OUT/x/audit_speed.json"
TAIL=40 run sanitizer_heldout 140 python3 benchmarks/sanitizer_check.py --group held_out --budget 100 \
  --json "$OUT/x/sanitizer_heldout.json"
