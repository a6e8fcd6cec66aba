# PART=held_out_33_34_labels (issue 35, held_out_33/34 audited at 7c7c73c, the labeller's GPU check): the host_sync
# P1s of late_interaction_kernels/varlen.py:304/308 (labelled real: maxsim_varlen's documented default syncs) and
# score_pairs.py:297/301 (labelled false: maxsim_padded, the package's caller, passes max_seqlen_*), measured with
# torch.cuda.set_sync_debug_mode("error") around a warm call (benchmarks/explore/held_out_33_34_labels.py lik_sync).
# Complements PART=held_out_33_34 (the known problems; its lik_varlen_repeat settles the static atomic_order P1s
# varlen.py:260 and score_pairs.py:202/270 labelled real by reading, "GPU check pending").
# Under 1 minute (one command, 50 s at most: imports, cold compiles, the Hopper autotune sweep); < 1 GB of GPU memory.
# Sourced by benchmarks/gpu_session.sh ($OUT/x, stamp). Expected if the labels are right: rc 1 and three lines:
#   maxsim_varlen positional: 2 .item() call(s); syncs            -> varlen.py:304/308 real
#   score_pairs_packed positional: 2 .item() call(s); syncs       -> the harness's call does sync (the cost is real
#                                                                    only for a caller that omits max_seqlen_*)
#   score_pairs_packed ... as maxsim_padded: 0 .item() call(s); no sync -> score_pairs.py:297/301 false
# rc 0 with "no sync" on the first line: the .item() does not block (relabel varlen real -> false); "syncs" on the
# third: the kernel path syncs elsewhere even with max_seqlen_* (read the traceback in the log); 124 = timed out.
timeout 50 python3 benchmarks/explore/held_out_33_34_labels.py lik_sync > "$OUT/x/ho3334l_lik_sync.log" 2>&1
rc=$?; stamp "ho3334l_lik_sync rc=$rc"
grep -v -i "warn" "$OUT/x/ho3334l_lik_sync.log" | tail -n 8 | cut -c1-300
echo "| check | rc | result |"
echo "|---|---|---|"
echo "| lik_sync | $rc | $(grep -E "^lik_sync: " "$OUT/x/ho3334l_lik_sync.log" | tr '\n|' ' /' | cut -c1-400) |"
