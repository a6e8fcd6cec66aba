"""run_validation and what every tool shares with it: loading the reference and candidate (tasks.py,
loader.py, code and kernel caches), the cases and their tiers (cases.py, sizes.py: the one home of invented
inputs), the Validator (validate.py; its output checks in output_checks.py, its gradients in gradients.py) and
KernelBench's form (kernelbench.py, kb_criterion.py), the comparison (compare.py), poisoned memory, the honesty guards, composition, memory, the reference's cache, per-case events,
error formatting and first fixes, and the verdict (run_validation.py).

May import: device/, confine/. Imported by benchmark/, probe/ and the top (__main__, prewarm).
"""
