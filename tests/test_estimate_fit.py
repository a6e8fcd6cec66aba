"""The fitted estimate's held-back run (worker/benchmark/estimate.held_back_size)."""


def test_the_held_back_size_stays_below_the_problem_and_near_the_count_point() -> None:
    from pytorch_to_triton.worker.benchmark.estimate import held_back_size

    assert held_back_size(64, 2048, 128) == 192  # one block past the count point, aligned as the problem's size is
    assert held_back_size(16, 256, 256) == 24  # aligned would be 272 > 256 (the 2026-12-06 trial): unaligned x1.5
    assert held_back_size(16, 18, 1) == 17 or held_back_size(16, 18, 1) is None
    assert held_back_size(3, 4, 32) is None  # nothing lies between the count point and the problem's size
    for base, full, block in [(4, 8, 16), (32, 100, 128), (48, 512, 1024), (7, 4096, 64)]:
        got = held_back_size(base, full, block)
        assert got is None or base < got < full and got <= 4 * base, (base, full, block, got)
