"""C = A @ B for 2-D A (M, K) and B (K, N); case.shape is (M, N, K)."""

SHAPES = {
    "edge_single": (1, 1, 1),
    "odd_7": (7, 13, 5),
    "irregular": (129, 65, 257),  # nothing a multiple of a block
    "medium": (256, 256, 256),  # exact tiles; the non-contiguous variants run on this one
    "k_tail": (64, 96, 100),  # K not a multiple of BLOCK_K: the masked last K step
    "tall": (300, 17, 48),
    "tma_tail": (200, 136, 72),  # 16-byte rows (TMA path in stage 3) but M, N, K all off the tile grid
}
BENCH_SHAPES = {"bench": (8192, 8192, 8192)}
DTYPES = ["bfloat16", "float16", "float32"]
# float32 inputs go through tl.dot in TF32 on Hopper (10-bit mantissa): the "tf32" preset, not float32's 1e-4.
TOLERANCES = {"float32": (1e-2, 1e-2)}


def make_inputs(case):
    """A (M, K) and B (K, N), scaled by K**-0.25 each so C stays ~N(0, 1) whatever K is."""
    M, N, K = case.shape
    s = float(max(K, 1)) ** -0.25
    return case.randn(M, K) * s, case.randn(K, N) * s


def FLOPS(case, inputs):
    """One multiply and one add per (m, n, k)."""
    M, N, K = case.shape
    return 2 * M * N * K


def matmul(a, b):
    """The PyTorch reference."""
    return a @ b
