# audit public corpus: siglip-kernel 0.1.2, siglip_kernel/gpu_config.py (Apache-2.0 license), copied unchanged below this header.
"""GPU architecture detection and kernel configuration.

Provides architecture-aware autotune configs for Triton kernels targeting:
- SM80 (A100)
- SM86 (RTX 3090, A6000)
- SM89 (RTX 4090, L40, L4)
- SM90 (H100, H200)
- SM100/SM103 (B200, GB200, B300)
- SM120 (RTX 5090, RTX 5080)
"""
import torch
import triton


def get_gpu_arch() -> int:
    """Return SM version as integer (e.g., 89, 90, 100)."""
    major, minor = torch.cuda.get_device_capability()
    return major * 10 + minor


def get_num_sms() -> int:
    return torch.cuda.get_device_properties(0).multi_processor_count


def get_smem_per_sm_kb() -> int:
    return torch.cuda.get_device_properties(0).shared_memory_per_multiprocessor // 1024


def supports_fp8() -> bool:
    return get_gpu_arch() >= 89


def supports_tma() -> bool:
    return get_gpu_arch() >= 90


def supports_clusters() -> bool:
    """Thread block clusters (num_ctas > 1) require SM90+, not SM120."""
    arch = get_gpu_arch()
    return arch >= 90 and arch < 120


def supports_warp_specialize() -> bool:
    """True hardware warp specialization requires SM100+ (Blackwell DC)."""
    return get_gpu_arch() >= 100


def supports_dot_scaled() -> bool:
    """Block-scaled FP4/MXFP8 via tl.dot_scaled requires SM100+."""
    arch = get_gpu_arch()
    return arch >= 100 and arch < 120  # SM120 may not support TCGEN05


# --- Autotune configs for the sigmoid BCE kernel (row-parallel) ---

def get_sigmoid_bce_configs():
    """Configs for the row-parallel sigmoid BCE kernel."""
    arch = get_gpu_arch()

    if arch >= 100:  # Blackwell DC
        return [
            triton.Config({"BLOCK_SIZE": 4096}, num_warps=8, num_stages=3),
            triton.Config({"BLOCK_SIZE": 2048}, num_warps=8, num_stages=4),
            triton.Config({"BLOCK_SIZE": 1024}, num_warps=4, num_stages=4),
        ]
    elif arch >= 90:  # Hopper
        return [
            triton.Config({"BLOCK_SIZE": 4096}, num_warps=8, num_stages=3),
            triton.Config({"BLOCK_SIZE": 2048}, num_warps=8, num_stages=4),
            triton.Config({"BLOCK_SIZE": 1024}, num_warps=4, num_stages=4),
            triton.Config({"BLOCK_SIZE": 512}, num_warps=4, num_stages=3),
        ]
    elif arch >= 89:  # Ada (RTX 4090)
        return [
            triton.Config({"BLOCK_SIZE": 2048}, num_warps=8, num_stages=3),
            triton.Config({"BLOCK_SIZE": 1024}, num_warps=4, num_stages=3),
            triton.Config({"BLOCK_SIZE": 512}, num_warps=4, num_stages=3),
            triton.Config({"BLOCK_SIZE": 256}, num_warps=4, num_stages=2),
        ]
    else:  # Ampere (A100, RTX 3090)
        return [
            triton.Config({"BLOCK_SIZE": 2048}, num_warps=8, num_stages=4),
            triton.Config({"BLOCK_SIZE": 1024}, num_warps=4, num_stages=4),
            triton.Config({"BLOCK_SIZE": 512}, num_warps=4, num_stages=3),
            triton.Config({"BLOCK_SIZE": 256}, num_warps=4, num_stages=2),
        ]


# --- Autotune configs for the fully fused kernel ---

def get_fused_siglip_configs():
    """Configs for the fully fused matmul + sigmoid BCE kernel."""
    arch = get_gpu_arch()

    if arch >= 100:  # Blackwell DC — TCGEN05 requires BLOCK >= 128
        return [
            triton.Config({"BLOCK_I": 128, "BLOCK_J": 128, "BLOCK_D": 128}, num_warps=8, num_stages=3),
            triton.Config({"BLOCK_I": 128, "BLOCK_J": 128, "BLOCK_D": 64}, num_warps=8, num_stages=4),
            triton.Config({"BLOCK_I": 128, "BLOCK_J": 64, "BLOCK_D": 128}, num_warps=4, num_stages=3),
            triton.Config({"BLOCK_I": 128, "BLOCK_J": 64, "BLOCK_D": 64}, num_warps=4, num_stages=4),
        ]
    elif arch >= 90:  # Hopper — larger SMEM allows bigger tiles
        return [
            # Original Hopper configs
            triton.Config({"BLOCK_I": 128, "BLOCK_J": 128, "BLOCK_D": 64}, num_warps=8, num_stages=3),
            triton.Config({"BLOCK_I": 64, "BLOCK_J": 128, "BLOCK_D": 64}, num_warps=8, num_stages=4),
            triton.Config({"BLOCK_I": 128, "BLOCK_J": 64, "BLOCK_D": 64}, num_warps=4, num_stages=3),
            triton.Config({"BLOCK_I": 64, "BLOCK_J": 64, "BLOCK_D": 64}, num_warps=4, num_stages=4),
            triton.Config({"BLOCK_I": 32, "BLOCK_J": 128, "BLOCK_D": 64}, num_warps=4, num_stages=3),
            # Larger tiles for bf16/fp16 (half the SMEM footprint per element)
            triton.Config({"BLOCK_I": 256, "BLOCK_J": 64, "BLOCK_D": 64}, num_warps=8, num_stages=3),
            triton.Config({"BLOCK_I": 64, "BLOCK_J": 256, "BLOCK_D": 64}, num_warps=8, num_stages=3),
            triton.Config({"BLOCK_I": 128, "BLOCK_J": 128, "BLOCK_D": 32}, num_warps=4, num_stages=4),
            # 128-deep K dim for potentially better WGMMA utilization
            triton.Config({"BLOCK_I": 128, "BLOCK_J": 128, "BLOCK_D": 128}, num_warps=8, num_stages=3),
            # Aggressive bf16 configs: shallower K, more stages, wider N
            triton.Config({"BLOCK_I": 128, "BLOCK_J": 256, "BLOCK_D": 32}, num_warps=8, num_stages=3),
            triton.Config({"BLOCK_I": 256, "BLOCK_J": 128, "BLOCK_D": 32}, num_warps=8, num_stages=3),
            triton.Config({"BLOCK_I": 64, "BLOCK_J": 128, "BLOCK_D": 128}, num_warps=8, num_stages=3),
            triton.Config({"BLOCK_I": 128, "BLOCK_J": 64, "BLOCK_D": 128}, num_warps=4, num_stages=4),
            triton.Config({"BLOCK_I": 64, "BLOCK_J": 256, "BLOCK_D": 32}, num_warps=8, num_stages=4),
            triton.Config({"BLOCK_I": 256, "BLOCK_J": 64, "BLOCK_D": 32}, num_warps=8, num_stages=4),
        ]
    elif arch >= 89:  # Ada — 100KB SMEM, moderate tiles
        return [
            triton.Config({"BLOCK_I": 64, "BLOCK_J": 64, "BLOCK_D": 64}, num_warps=4, num_stages=3),
            triton.Config({"BLOCK_I": 32, "BLOCK_J": 64, "BLOCK_D": 64}, num_warps=4, num_stages=3),
            triton.Config({"BLOCK_I": 64, "BLOCK_J": 32, "BLOCK_D": 64}, num_warps=4, num_stages=2),
            triton.Config({"BLOCK_I": 32, "BLOCK_J": 128, "BLOCK_D": 64}, num_warps=4, num_stages=2),
            triton.Config({"BLOCK_I": 32, "BLOCK_J": 64, "BLOCK_D": 32}, num_warps=4, num_stages=3),
        ]
    else:  # Ampere
        return [
            triton.Config({"BLOCK_I": 64, "BLOCK_J": 64, "BLOCK_D": 32}, num_warps=4, num_stages=4),
            triton.Config({"BLOCK_I": 32, "BLOCK_J": 64, "BLOCK_D": 32}, num_warps=4, num_stages=4),
            triton.Config({"BLOCK_I": 64, "BLOCK_J": 32, "BLOCK_D": 32}, num_warps=4, num_stages=3),
            triton.Config({"BLOCK_I": 32, "BLOCK_J": 32, "BLOCK_D": 32}, num_warps=4, num_stages=3),
            triton.Config({"BLOCK_I": 128, "BLOCK_J": 64, "BLOCK_D": 32}, num_warps=8, num_stages=4),
        ]


def prune_fused_configs(configs, named_args, **kwargs):
    """Prune configs that are invalid for the current problem size or architecture.

    Note: BLOCK_I/J > B and BLOCK_D > D are handled by masking in the kernel.
    We only prune configs that would be grossly wasteful (e.g., BLOCK_D >> D).
    """
    D = kwargs.get("D", named_args.get("D", 256))

    valid = []
    for cfg in configs:
        bd = cfg.kwargs["BLOCK_D"]
        # Only prune if BLOCK_D is much larger than D (wastes registers)
        if bd > D * 2:
            continue
        valid.append(cfg)

    return valid if valid else configs[:1]
