"""Conv2d + bias + ReLU + hardswish in KernelBench form (KernelBench level 2 57_Conv2d_ReLU_HardSwish, small sizes).
A stage may leave the convolution to cuDNN and fuse the epilogue in Triton: run_validation allows it and says so
(library_compute ... (allowed)); audit_kernel must give the same words and no P0 (issue 45)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        x = self.conv(x)
        x = torch.relu(x)
        return x * torch.clamp((x + 3) / 6, 0, 1)


batch_size = 2
in_channels = 3
out_channels = 8
height, width = 12, 10
kernel_size = 3


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
