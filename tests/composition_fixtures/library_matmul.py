"""GOOD (a design choice, disclosed): the matmul stays in the library (cuBLAS on a GPU), the epilogue is Triton."""

import torch
from _epilogue import epilogue


def reference(x, w, b):
    return epilogue(torch.nn.functional.linear(x, w, b))
