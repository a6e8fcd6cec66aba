# PART=fastpath: sourced by benchmarks/gpu_session.sh (run, stamp, $OUT/x set up there).
# Issue 20's cached launch path on the GPU (~7 minutes): every memory-bound stage 3
# through _FastLaunch, the GPU tests of that session, latency and host overhead.
run fastpath_check 200 python3 benchmarks/explore/gpu_fastpath_check.py
run gpu_tests 120 python3 -m pytest -q -p no:cacheprovider tests/test_fastlaunch.py tests/test_refwatch.py \
    tests/test_memory.py -k "fastlaunch or cached or hooked or watch or cuda_bytes"
run latency "${LAT_S:-150}" python3 benchmarks/latency.py --calls 10
run host_overhead 60 python3 benchmarks/explore/host_overhead.py
