"""A mixture-of-experts projection in KernelBench's form: each token goes through the expert its router chose."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_experts: int, d_model: int, d_ff: int):
        super().__init__()
        self.w = nn.Parameter(torch.randn(num_experts, d_model, d_ff) / d_model ** 0.5)

    def forward(self, x: torch.Tensor, expert_idx: torch.Tensor) -> torch.Tensor:
        return torch.bmm(x.unsqueeze(1), self.w[expert_idx]).squeeze(1)


num_tokens = 2048
num_experts = 4
d_model = 1024
d_ff = 256


def get_inputs():
    return [torch.randn(num_tokens, d_model), torch.randint(0, num_experts, (num_tokens,))]


def get_init_inputs():
    return [num_experts, d_model, d_ff]
