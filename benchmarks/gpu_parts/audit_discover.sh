# PART=audit_discover: issue 45 part 3, the probes' example call from a file's own callers (no harness=), on one GPU
# (~2-3 minutes). On a GPU no size cap applies (the CPU interpreter's 2**17 elements per example tensor does not):
#   discover_layer_norm  the Triton tutorial 05-layer-norm audited without harness=: its test_layer_norm runs at the
#                        tutorial's own M=1151, N=8192 (on the CPU: M shrunk to 16); read "example call:" and P0/P1
#   discover_corpus      benchmarks/audit_discover.py --with-callers: the public-corpus files with a known problem whose
#                        search finds a caller, audited without harness= (the others are static-only on any device:
#                        the CPU figures stand for them); its last line: files with an example call, problems named
run discover_layer_norm 150 python3 -m pytorch_to_triton audit tests/audit_discover_fixtures/tutorials/layer_norm.py \
  --no-compile --json
grep -o '"example call: [^"]*' "$OUT/x/discover_layer_norm.log" | head -1 | cut -c1-400
grep -o '"severity": "P[01]", "category": "[a-z_]*", "file": "[^"]*", "line": [0-9]*' \
  "$OUT/x/discover_layer_norm.log" | head -8
run discover_corpus 200 python3 benchmarks/audit_discover.py --with-callers --timeout 60 \
  --json "$OUT/x/audit_discover.json"
