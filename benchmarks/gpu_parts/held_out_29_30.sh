# PART=held_out_29_30 (issue 35, a further fresh pair): the examples and robustness notes of held_out_29 (lion-pytorch
# 0.2.5, hyper-connections 0.4.11) and held_out_30 (accelerated-scan 0.3.1) on the GPU, one process each
# (benchmarks/explore/held_out_29_30.py; exit 1 = what it describes shows, 0 = it does not, 2 = not run, 124 = timed
# out). About 1.5 minutes (8 processes, a few compiles each); up to 26 GB of GPU memory (the int32 checks).
# Sourced by benchmarks/gpu_session.sh ($OUT/x and stamp set up there). Expected if the labels are right:
#   examples 0 (the four example calls and the three backwards match their references on the GPU too: no known
#     problem; 1 would be a real problem the CPU interpreter hides, to be labelled),
#   lion_nan 1, lion_layout 1, sinkhorn_bwd 1 (robustness notes, as on the CPU),
#   lion_int32 1, scan_int32 1, complex_int32 1 (int32 offsets past 2**31 / 2**30 elements: an illegal address or
#     wrong last channels; 0 would make the int32_offset_overflow notes false),
#   scan_grid 1 (65,535 channels run and match, 65,536 fail to launch: grid axis 1; a labelling note).
checks benchmarks/explore/held_out_29_30.py ho2930 20 examples:45 lion_nan lion_layout sinkhorn_bwd:30 lion_int32:35 \
  scan_int32:35 complex_int32:35 scan_grid
