"""run_validation's verdict as audit findings (issue 45: one judge for "is this kernel right for this problem?").

Design. With a task reference (reference=, or the reference.py / sidecar Service._audit_task finds beside the file)
the audit's execution half IS the validator: Service.audit builds the very request Service.validate builds for
(reference, candidate = the audited file) through the one builder (Service._validation_request: sidecar merged under
the explicit arguments, same cases, sizes, tiers, tolerances, require, target GPUs, reproduce line) and runs worker op
"validate". This module maps its CandidateReport onto the audit report:
- every contract failure (severity "fail", whatever its check: mismatch, input_mutated, dtype_mismatch, nonfinite,
  nondeterministic, exception, target_compile at a contract size, pytorch_compute under all_triton, ...) is a P0
  named by the validator's check, with its case, message, fix and validate's reproduce line (--only-cases CASE);
  its line is the evidence's kernel line, else the static suspect it confirms, else the entry's;
- every robustness finding is a Robustness entry in the validator's words (kind, title, check, message, fix);
- its warnings (library_compute "... (allowed; require all_triton to forbid)", small PyTorch ops, spills) and its
  composition line go to the audit's `checked` lines verbatim.
evidence.weigh then applies the policy with a reference (`Validated` passed in): no static finding is P0 by itself
(a correctness suspect is P2 "verify:" unless a validator failure sits on its kernel line; an honesty finding defers
to the validator's composition verdict); the probes run after the validator within half its time, without the
variants it already ran (repeat, reference), and every probe failure is robustness (tier_rules.probe_kind), a P0
only where the sidecar requires that kind. Without a reference nothing here runs: the probes' evidence alone.
"""
