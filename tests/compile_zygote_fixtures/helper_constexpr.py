# label: good -- a constexpr global: the GPU compiler accepts it
import triton.language as tl

SCALE = tl.constexpr(0.5)
