"""pytorch-to-triton: MCP server and agent skill that turns PyTorch code into validated Triton kernels."""

__version__ = "0.1.0"
