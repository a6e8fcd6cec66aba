"""A user's package (for tests/test_scaffold.py): imported by the generated reference, never changed."""
