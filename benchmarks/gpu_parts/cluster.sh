# PART=cluster (the 2026-12-04 sessions): sourced by benchmarks/gpu_session.sh (run, stamp, $OUT/x set up there).
run gpu_cluster 330 python3 benchmarks/gpu_cluster.py
run cluster_overhead 60 python3 benchmarks/gpu_cluster.py --part overhead --calls 10 --tasks 500
