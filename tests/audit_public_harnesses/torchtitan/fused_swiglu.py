# Audit harness for tests/audit_public_corpus/torchtitan/fused_swiglu.py: silu_and_mul_forward_kernel(gate, up,
# offsets=None) -> silu(gate) * up [R, F] (computed in fp32, stored in a contiguous output of gate's dtype); with
# grouped_mm offsets, only the rows below offsets[-1] are written. Called as the torchtitan::silu_and_mul op calls it
# for FusedSwiGLU.forward: gate and up the two halves of einsum("...d,hgd->...hg", x, w13).unbind(-1), reshaped to
# [tokens, hidden] (views with a column stride of 2), no offsets, in the training dtype (bf16 under FSDP's mixed
# precision). The op itself is a torch.library.custom_op registered for CUDA only (it has no CPU kernel), so the
# entry is the plain function it wraps. The file imports spmd_types and five torchtitan modules (config, the decoder
# sharding helper, FeedForward, GroupedExperts, ShardingConfig) that only its module classes and config overrides use:
# small stand-ins (a decorator factory, empty dataclass Configs, no-op helpers); the kernels and this entry use none.
import dataclasses
import sys
import types

import torch


def _mod(name, **attrs):
    m = sys.modules.get(name) or types.ModuleType(name)
    for k, v in attrs.items():
        setattr(m, k, v)
    sys.modules.setdefault(name, m)
    return m


def _module_with_config(name):
    @dataclasses.dataclass(kw_only=True, slots=True)
    class Config:
        pass

    return type(name, (torch.nn.Module,), {"Config": Config})


_mod("spmd_types", S=lambda dim: ("S", dim), R="R", local_map=lambda **kw: (lambda fn: fn))
_mod("torchtitan")
_mod("torchtitan.config", derive=lambda cfg, cls, **kw: cls(), override=lambda **kw: (lambda fn: fn))
_mod("torchtitan.models")
_mod("torchtitan.models.common")
_mod("torchtitan.models.common.decoder_sharding", dense_param_placement=lambda **kw: kw)
_mod("torchtitan.models.common.feed_forward", FeedForward=_module_with_config("FeedForward"))
_mod("torchtitan.models.common.moe", GroupedExperts=_module_with_config("GroupedExperts"))
_mod("torchtitan.protocols")
_mod("torchtitan.protocols.sharding", ShardingConfig=dataclasses.make_dataclass(
    "ShardingConfig", [("state_shardings", dict, dataclasses.field(default_factory=dict)),
                       ("in_src_shardings", object, None), ("in_dst_shardings", object, None)]))

ENTRY = "silu_and_mul_forward_kernel"
AUDIT_SHAPE = (24, 96)  # tokens (batch * sequence), hidden dim


def make_inputs(case):
    t, f = case.shape
    gate, up = case.randn(t, f, 2).unbind(-1)  # FusedSwiGLU: the einsum's (..., hidden, 2) output split in two
    return (gate, up)


def reference(gate, up, offsets=None):
    out = (torch.nn.functional.silu(gate.double()) * up.double()).to(gate.dtype)
    if offsets is not None:
        out[int(offsets[-1]):] = 0  # rows past the last offset are never written (garbage in the kernel's output)
    return out
