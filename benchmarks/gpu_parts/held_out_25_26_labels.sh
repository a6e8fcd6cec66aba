# PART=held_out_25_26_labels (issue 35, third fresh pair, the labeller's GPU checks): the false P0s of held_out_25 that
# the CPU interpreter gave, re-run on the GPU. Complements PART=held_out_25_26 (the known problems: memcheck of the
# auto-gptq N/K tails, dynamic_quant's recompiles, gemm_a16w8's split-K atomics, which confirm the real labels).
# About 1-2 minutes (four small probe reproducers, one quantiser call), < 1 GB of GPU memory. Sourced by
# benchmarks/gpu_session.sh ($OUT/x, run, stamp).
# 1. dq_tie: flashnn dynamic_quant's example on the GPU, int8 codes compared EXACTLY with the exact reference (round
#    half away from zero in float64) and with fp16 arithmetic as the package's torch path does it. On the interpreter 2
#    of 24,576 codes differ (-63 for -64 at row 1, cols 554 and 1874: x = -absmax / 2, a tie at -63.5). Label false
#    (a rounding tie, one step) holds if the GPU differs by at most 1 code anywhere; "gpu == fp16 path" says whether the
#    one-step difference is interpreter-only.
# 2. the four held_out_25 probe P0 reproducers (exit 1 = the probe still fails): layout ones 1 (the kernel really
#    reads a transposed x wrong; false because callers give contiguous x), gemm_a16w8's reference 1 ("1 outputs vs 4":
#    the harness's in-place reference, not the kernel), dynamic_quant's reference 0 or 1 (1 only with codes one step
#    off at the tie, as in 1).
cat > "$OUT/x/dq_tie.py" <<'EOF'
from pathlib import Path
import torch
from pytorch_to_triton.worker.validation.tasks import Case, load_module
h = load_module(Path("tests/audit_public_harnesses/flashnn/dynamic_quant.py").resolve(), "harness")
t = load_module(Path("tests/audit_public_corpus/flashnn/dynamic_quant.py").resolve(), "target")
out, x, sc = [a.cuda() for a in h.make_inputs(Case("example", tuple(h.AUDIT_SHAPE), torch.float32, "cpu", 0))]
t.triton_dynamic_quantize(out, x, sc)
torch.cuda.synchronize()
ref, rs = torch.empty_like(out), torch.empty_like(sc)
h.reference(ref, x, rs)
p = x * (torch.tensor(127.0, dtype=torch.float16, device=x.device) / x.abs().amax(-1, keepdim=True))
f16 = torch.where(p > 0, p + 0.5, p - 0.5).to(torch.int8)
d = (out.int() - ref.int()).abs()
print(f"dq_tie: codes differing from the exact reference {int((d > 0).sum())} of {d.numel()}, max step "
      f"{int(d.max())}; at (1,554) gpu {int(out[1, 554])} exact {int(ref[1, 554])} fp16-path {int(f16[1, 554])}; "
      f"gpu == fp16 path everywhere: {bool(torch.equal(out, f16))}")
EOF
run ho2526_dq_tie 120 env PYTHONPATH="$PWD/server" python3 "$OUT/x/dq_tie.py"
P="python3 -m pytorch_to_triton.worker.probe.probes tests/audit_public_corpus/flashnn"
H="tests/audit_public_harnesses/flashnn"
declare -A rp_of
for spec in "rms_norm:layout: transposed" "rms_norm_dquant:layout: transposed" \
            "dynamic_quant:reference: example vs reference" "gemm_a16w8:reference: example vs reference"; do
  f=${spec%%:*} only=${spec#*:}
  TAIL=3 run "ho2526_repro_$f" 150 env PYTHONPATH="$PWD/server" $P/$f.py --harness $H/$f.py --only "$only"
  rp_of[$f]=$(grep -m1 -E "^(FAIL|PASS|ok)" "$OUT/x/ho2526_repro_$f.log" | cut -c1-160)
done
echo "| check | result |"
echo "|---|---|"
echo "| dq_tie | $(grep -m1 '^dq_tie:' "$OUT/x/ho2526_dq_tie.log" | tr '|' '/' | cut -c1-300) |"
for f in rms_norm rms_norm_dquant dynamic_quant gemm_a16w8; do
  echo "| repro $f | ${rp_of[$f]:-see ho2526_repro_$f.log} |"
done
