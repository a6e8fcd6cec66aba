"""The worker process: the only place that imports torch, triton or user code (see protocol.py)."""
