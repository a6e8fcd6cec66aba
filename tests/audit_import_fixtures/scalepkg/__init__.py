"""A package whose entries launch kernels they import from a sibling module (tests/test_audit_imports.py)."""
