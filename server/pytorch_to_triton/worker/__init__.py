"""The worker process: the only place that imports torch, triton or user code (see protocol.py).

Rooms, bottom up (each subpackage's __init__ says what it owns and what it may import):
- device/      where kernels run: device choice, Triton import, launch recorder, the CPU interpreter's fixes
- confine/     the Landlock sandbox, the sealed reference, the reference-call watch
- validation/  run_validation and what every tool shares with it: tasks, cases, the Validator, guards, compare
- benchmark/   run_benchmark: timing, this device's peaks, roofline figures, the no-GPU estimate
- probe/       audit_kernel's probes
- __main__.py (the entry: the request loop and its dispatch) and prewarm.py (start-up work) import them all;
  nothing imports them. Imports run one way: top -> benchmark, probe -> validation -> device, confine.
"""
