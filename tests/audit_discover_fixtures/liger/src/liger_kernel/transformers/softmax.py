# audit discover fixture: liger-kernel 0.8.5 (BSD-2-Clause license), src/liger_kernel/transformers/softmax.py, unchanged below this line.
import torch
import torch.nn as nn

from liger_kernel.ops import LigerSoftmaxFunction


class LigerSoftmax(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor):
        return LigerSoftmaxFunction.apply(x)
