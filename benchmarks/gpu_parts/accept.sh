# PART=accept (the 2026-12-04 sessions): sourced by benchmarks/gpu_session.sh (run, stamp, $OUT/x set up there).
source benchmarks/gpu_accept.sh
