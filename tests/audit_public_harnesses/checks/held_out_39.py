"""The known problems and the labelling checks of issue 45's fresh batch held_out_39 (crossentropy-triton 0.1.2,
triton-csprng 0.1.5, flash-sinkhorn 0.4.1, eigentune 0.2.0), one function each, run on the corpus copies
(tests/audit_public_corpus/...) with the callers' inputs built by the batch's harnesses
(tests/audit_public_harnesses/...). Written without running the audit on these files
(tests/audit_public_corpus/README.md, the held_out_39 section).

Each check returns 1 while the problem shows (a wrong result, a caller's tensor overwritten, a compile per call size),
0 when it does not, 2 when it cannot run here. Without CUDA the kernels run under Triton's interpreter (the runner
sets TRITON_INTERPRET=1; `pair` installs the audit worker's stand-ins).

  python benchmarks/held_out.py 39                     # every check, one process each, then a table
  python benchmarks/held_out.py --one 39 examples      # every file's harness example against its reference
  python benchmarks/held_out.py --one 39 ce_all_ignored     # cross_entropy_forward: every label ignored (P0)
  python benchmarks/held_out.py --one 39 ce_batch1_inplace  # CrossEntropyFunction: batch 1 overwrites logits (P0)
  python benchmarks/held_out.py --one 39 chacha_recompile   # chacha20_blocks: a compile per block count (P1)
  python benchmarks/held_out.py --one 39 et_rank256         # eigentune down/up at rank 256 (a labelling check; GPU)

On a GPU: PART=held_out HELD_OUT=39 bash benchmarks/gpu_session.sh (each check in its own process).
"""

from __future__ import annotations

import torch
from _common import CUDA, DEV, Check, case, max_err, pair

SHIMS = ("libdevice", "cuda_noop", "autotune", "compat", "tf32")
# (project, file): every labelled file of the set, each with a harness
FILES = (("crossentropy_triton", "crossentropy_tl"), ("triton_csprng", "chacha20"),
         ("flash_sinkhorn", "c_transform_sqeuclid"), ("eigentune", "triton_backend"))
_LOADED: dict = {}


def _pair(project: str, name: str):
    """(harness, corpus module), each loaded once in this process (the harness's stand-ins first)."""
    if (project, name) not in _LOADED:
        _LOADED[project, name] = pair(project, name, SHIMS)
    return _LOADED[project, name]


def _copy(args):
    return tuple(a.clone() if torch.is_tensor(a) else a for a in args)


def examples() -> int:
    """Every file's entry on its harness's example call against the harness's reference (on copies of the inputs:
    cross_entropy_forward writes its gradient into logits by contract), within the harness's tolerance."""
    bad = False
    for project, name in FILES:
        h, k = _pair(project, name)
        args = h.make_inputs(case(h.AUDIT_SHAPE))
        ref = h.reference(*_copy(args))
        out = getattr(k, h.ENTRY)(*_copy(args))
        out, ref = (out, ref) if isinstance(ref, tuple) else ((out,), (ref,))
        for i, (o, r) in enumerate(zip(out, ref, strict=True)):
            atol, rtol = h.TOLERANCES.get(str(r.dtype).removeprefix("torch."), (0.0, 0.0))
            err, scale = max_err(o, r), float(r.double().abs().max())
            wrong = o.shape != r.shape or o.dtype != r.dtype or not err <= atol + rtol * scale
            bad |= wrong
            print(f"examples: {project}/{name}.py {h.ENTRY}{tuple(h.AUDIT_SHAPE)} output {i} ({r.dtype}) max abs err "
                  f"{err:.3e} (|ref| up to {scale:.3g}) {'WRONG' if wrong else 'ok'}", flush=True)
    return 1 if bad else 0


def ce_all_ignored() -> int:
    """cross_entropy_forward with every label ignored (a micro-batch whose response tokens were all masked or cut:
    SFT with completion-only labels) returns (0, logits) (line 104): logits, untouched, as logits_with_grads, which
    CrossEntropyFunction saves and its backward returns as the gradient. The loss is 0 and its gradient must be 0; the
    logits come back as d loss / d logits. Shown on the entry (the harness's reference: zeros) and on the autograd
    Function as TritonCausalLMLoss calls it (logits.grad against torch's cross_entropy's, all zeros)."""
    h, k = _pair("crossentropy_triton", "crossentropy_tl")
    g = torch.Generator().manual_seed(39)
    logits = torch.randn(2, 9, 32000, generator=g).to(DEV, torch.bfloat16)
    labels = torch.full((2, 9), -100, dtype=torch.int64, device=DEV)
    args = (logits[..., :-1, :].contiguous().view(-1, 32000), labels[..., 1:].contiguous().view(-1), -100)
    ref = h.reference(*_copy(args))
    out = k.cross_entropy_forward(*_copy(args))
    rows = [("entry: loss", max_err(out[0], ref[0])), ("entry: logits_with_grads", max_err(out[1], ref[1]))]
    x = torch.randn(2, 10, 32000, generator=g).to(DEV, torch.bfloat16).requires_grad_()
    y = torch.full((2, 10), -100, dtype=torch.int64, device=DEV)
    k.CrossEntropyFunction.apply(x, y, -100).backward()
    rows.append(("CrossEntropyFunction: logits.grad (torch's: 0)", float(x.grad.double().abs().max())))
    bad = False
    for label, err in rows:
        bad |= not err <= 1e-6
        print(f"ce_all_ignored: {label} max abs err {err:.3e} {'WRONG' if not err <= 1e-6 else 'ok'}", flush=True)
    return 1 if bad else 0


def ce_batch1_inplace() -> int:
    """CrossEntropyFunction.forward makes the shifted logits contiguous (line 166): for batch 1, logits[..., :-1, :]
    is already contiguous, so .contiguous() returns a view of the caller's logits and the kernel's gradient store
    (line 81) overwrites them (batch 2 copies: the README's example is not hit). Triton's store bypasses autograd's
    version counter, so nothing raises: the caller's logits (a model output it returns for metrics or generation, or
    the README's leaf) silently hold (softmax - onehot) / n. Shown at the README's vocabulary, batch 2 and batch 1: the
    logits after loss.backward() against their copy, and the token accuracy a caller computes from them."""
    _, k = _pair("crossentropy_triton", "crossentropy_tl")
    g = torch.Generator().manual_seed(7)
    bad = False
    for b in (2, 1):
        logits = torch.randn(b, 10, 32000, generator=g).to(DEV).requires_grad_()
        labels = torch.randint(0, 32000, (b, 10), generator=g).to(DEV)
        with torch.no_grad():
            logits[:, :-1].scatter_(-1, labels[:, 1:, None], 20.0)  # a model that predicts every next token
        before = logits.detach().clone()
        k.CrossEntropyFunction.apply(logits, labels, -100).backward()
        err = max_err(logits.detach(), before)
        acc = [float((t[:, :-1].argmax(-1) == labels[:, 1:]).double().mean()) for t in (before, logits.detach())]
        wrong = not err <= 0.0
        bad |= wrong
        print(f"ce_batch1_inplace: batch {b}: the caller's logits changed by {err:.3e}; token accuracy from them "
              f"{acc[1]:.2f} (before the loss {acc[0]:.2f}) {'WRONG' if wrong else 'ok'}", flush=True)
    return 1 if bad else 0


def chacha_recompile() -> int:
    """_chacha20_blocks_kernel declares n_blocks (and step) tl.constexpr (line 89): every new block count is a new
    compile, and ChaCha20Rng asks for ceil(remaining bytes / 64) blocks per request (stream.py _next_bytes: uint32(17)
    then uint32(23) are 2 and 1 blocks after the buffered bytes; every sampler's draw size is another). On a GPU: the
    compiled variants after 6 request sizes (exit 1 if one per size). Under the interpreter (no compile cache) the
    declaration is read from the kernel's signature: exit 1 while n_blocks is a constexpr."""
    h, k = _pair("triton_csprng", "chacha20")
    kern = k._chacha20_blocks_kernel
    if not CUDA:
        import inspect

        sig = inspect.signature(getattr(kern, "fn", kern))
        const = [n for n, prm in sig.parameters.items() if "constexpr" in str(prm.annotation)]
        print(f"chacha_recompile: constexpr parameters of _chacha20_blocks_kernel: {const} (read; a GPU counts "
              f"compiles) {'WRONG' if 'n_blocks' in const else 'ok'}")
        return 1 if "n_blocks" in const else 0
    for n in (1, 3, 16, 17, 64, 300):
        k.chacha20_blocks(h.states(n, device=DEV))
    torch.cuda.synchronize()
    n = sum(len(c[0]) for c in kern.device_caches.values())
    print(f"chacha_recompile: compiled variants of _chacha20_blocks_kernel after 6 block counts: {n} "
          f"{'WRONG' if n >= 6 else 'ok'}")
    return 1 if n >= 6 else 0


def et_rank256() -> int:
    """A labelling check, not a known problem: eigentune's kernels keep the whole padded rank in one tile (BR up to 256
    for diag, MAX_RANK_DIAG) and down's K loop is pipelined at Triton's default stages, so a bf16 down at rank 256 with
    K >= 2048 (BK 128) holds a [64, 128] and a [128, 256] tile per stage. On a GPU: down and up at rank 256 (diag),
    2048 tokens, 4096 features, against torch; exit 1 if either raises (out of shared memory: a compile P0 at ranks
    129-256 would be real) or is wrong, 0 if both run right (such a P0 would be false). The README's ranks are 8-64;
    the interpreter has no shared-memory limit: 2 here."""
    if not CUDA:
        print("et_rank256: needs a GPU (the interpreter has no shared-memory limit)")
        return 2
    _, k = _pair("eigentune", "triton_backend")
    g = torch.Generator().manual_seed(5)
    x = torch.randn(2048, 4096, generator=g).to(DEV, torch.bfloat16)
    vh = torch.linalg.qr(torch.randn(4096, 256, generator=g))[0].T.contiguous().to(DEV, torch.bfloat16)
    w = (0.1 * torch.randn(256, generator=g)).to(DEV, torch.bfloat16)
    u = torch.linalg.qr(torch.randn(4096, 256, generator=g))[0].to(DEV, torch.bfloat16)
    try:
        q = k.down(x, vh, 1)
        y = k.up(q, w, u, 0, "diag", x)
    except Exception as e:  # an OutOfResources is what this check looks for
        print(f"et_rank256: rank 256 raises {type(e).__name__}: {str(e).splitlines()[0][:200]} WRONG")
        return 1
    q_ref = x.float() @ vh.float().T
    y_ref = x.float() + (q.float() * w.float()) @ u.float().T
    errs = (max_err(q, q_ref), max_err(y, y_ref))
    wrong = not (errs[0] <= 0.1 and errs[1] <= 0.1)
    print(f"et_rank256: rank 256 ran: down {errs[0]:.3e}, up {errs[1]:.3e} {'WRONG' if wrong else 'ok'}")
    return 1 if wrong else 0


GPU_RUN = None
CHECKS = {  # what a GPU run gives when the labels are right (the held_out_39 section of the corpus README)
    "examples": Check(examples, "0: every harness example right", 120),
    "ce_all_ignored": Check(ce_all_ignored, "1: every label ignored: the logits come back as the gradient (P0)", 60),
    "ce_batch1_inplace": Check(ce_batch1_inplace, "1: batch 1: the caller's logits overwritten (P0)", 90),
    "chacha_recompile": Check(chacha_recompile, "1: one compiled variant per block count (0: the P1 is paper-only)",
                              120),
    "et_rank256": Check(et_rank256, "a labelling check: 1 = rank 256 does not run (a shared-memory compile P0 at "
                        "ranks 129-256 is real); 0 = it runs right (such a P0 is false)", 120),
}
