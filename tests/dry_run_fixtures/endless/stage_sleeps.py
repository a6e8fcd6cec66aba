"""BAD on fake tensors only: waits for a value that fake tensors never have (a sleep in a Python loop, no torch op in
it). Right on real tensors: the values are there, the loop ends at once."""

import time

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        while not isinstance(x, torch.Tensor) or type(x).__name__ == "FakeTensor":
            time.sleep(0.05)
        return 2.0 * x + 1.0
