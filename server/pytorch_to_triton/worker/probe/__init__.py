"""audit_kernel's dynamic confirmation (worker op "probe"; its reproducer
`python -m pytorch_to_triton.probe_repro`, run by rerun.py):
the Prober and the op (probes.py) with its probe families as mixins (shape_probes.py: layouts, rows, sizes;
value_probes.py: sentinels, magnitudes, dtypes, defaults, the reference; grad_probes.py: an autograd Function's
backward), what one call did and how it is judged (outcome.py), the audited entry (entry.py), the inputs they
invent (probe_inputs.py), KernelBench-form harnesses (probe_kb.py), the host lines the example ran
(probe_lines.py), the interpreter's bounds check (bounds.py), compute-sanitizer over the probe's launches on a
GPU (sanitizer.py) and the rerun outside the server (rerun.py: the reproducer's run, and the sanitizer's child).

May import: validation/, device/, confine/. Imported by the top only.
"""
