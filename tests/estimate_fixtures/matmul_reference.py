"""C = A @ B in fp32 (M, K, N); the estimate counts tl.dot FLOPs (2 M N K) by precision."""


SHAPES = {"small": (64, 128, 32)}
BENCH_SHAPES = {"full": (1024, 2048, 512)}
DTYPES = ["float32"]


def make_inputs(case):
    m, k, n = case.shape
    return case.randn(m, k), case.randn(k, n)


def reference(a, b):
    return a @ b
# The candidate runs an fp32 tl.dot in TF32 (the GPU default) on purpose: its error is TF32's (~1e-3 relative).
TOLERANCES = {"float32": "tf32"}
