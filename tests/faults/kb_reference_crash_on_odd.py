"""KernelBench-form reference that ends the process when the batch is odd and > 1 (stands in, on CPU, for a
reference op that hits a device-side assert on a size variant the harness made, like 95_CrossEntropyLoss with
num_classes changed alone). Expected: the odd variants are skipped as the harness's fault, the rest runs."""

import os

import torch
import torch.nn as nn

batch_size = 64
dim = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[0] % 2 == 1 and x.shape[0] > 1:
            os._exit(9)
        return x * 2.0 + 1.0


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
