"""run_benchmark: timing on a GPU (bench.py), this device's environment, measured peaks and the flags of
an implausible timing (peaks.py), roofline figures (roofline.py, the sidecar's formulas in formulas.py), the
no-GPU ESTIMATE (estimate.py), and audit's compiled analysis (bench.compiled_analysis).

May import: validation/, device/. Imported by the top only.
"""
