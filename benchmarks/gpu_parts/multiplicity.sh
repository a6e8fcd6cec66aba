# PART=multiplicity (issue 40, branch i40): sourced by benchmarks/gpu_session.sh (run, stamp, $OUT/x set up there).
# ~2-3 minutes. The "index of a repeated dimension" corpus (tests/multiplicity_corpus) at each problem's full size,
# scored independently (torch + triton only, 3 seeds, allclose 1e-2 and 1e-4) and by the tool's own GPU validation
# (--tool): every good.py passes, every planted bug (h = bh * 0, group/expert/batch offset * 0) fails. The table's
# last line says whether all labels were confirmed.
run multiplicity_gpu 220 python3 benchmarks/multiplicity_gpu.py --tool
