"""The labeller's check for held_out_33 (audited at 7c7c73c): the host_sync P1s of varlen.py:304/308 and
score_pairs.py:297/301, the `.item()` calls that size the kernels' loops when max_seqlen_q / max_seqlen_d are left out.

  python benchmarks/explore/held_out_33_34_labels.py lik_sync

It runs three calls on the harnesses' inputs: maxsim_varlen positional (the documented default; the package has no
caller of it), score_pairs_packed positional (the harness's call) and score_pairs_packed with max_seqlen_* (as
padded.maxsim_padded, the package's caller, passes them), and prints how many `.item()` calls of the corpus file each
makes. On a GPU it also arms torch.cuda.set_sync_debug_mode("error") around each call: a call that synchronises the
host raises there, so "syncs" is measured, not counted from the source. Exit 1 while the labels hold (the two
default calls sync, maxsim_padded's call does not), 0 otherwise.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import torch

_spec = importlib.util.spec_from_file_location("ho3334", Path(__file__).resolve().parent / "held_out_33_34.py")
assert _spec and _spec.loader
ho = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ho)
CUDA, DEV = ho.CUDA, ho.DEV


class _Case:
    device = DEV

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape, self.g = shape, torch.Generator().manual_seed(0)

    def randn(self, *shape, dtype=torch.float32):
        return torch.randn(*shape, generator=self.g).to(DEV, dtype)

    def randint(self, lo, hi, shape, dtype=torch.int64):
        return torch.randint(lo, hi, shape, generator=self.g).to(DEV, dtype)


def _syncs(fn, path: str) -> tuple[int, str]:
    """(.item() calls made from `path` during fn(), what the GPU's sync debug mode said or '' on the CPU)."""
    hits = [0]
    orig = torch.Tensor.item

    def item(self):
        if any(f.filename.endswith(path) for f in _frames()):
            hits[0] += 1
        return orig(self)

    torch.Tensor.item = item
    verdict = ""
    try:
        if CUDA:
            torch.cuda.synchronize()
            torch.cuda.set_sync_debug_mode("error")
        try:
            fn()
            verdict = "no sync" if CUDA else ""
        except RuntimeError as e:
            if not CUDA or "synchroniz" not in str(e):
                raise
            verdict = "syncs"
    finally:
        torch.Tensor.item = orig
        if CUDA:
            torch.cuda.set_sync_debug_mode(0)
    return hits[0], verdict


def _frames():
    import inspect

    return inspect.stack(0)[2:8]


def lik_sync() -> int:
    hv, kv = ho._pair("late_interaction_kernels", "varlen")
    hs, ks = ho._pair("late_interaction_kernels", "score_pairs")
    v = hv.make_inputs(_Case(hv.AUDIT_SHAPE))
    s = hs.make_inputs(_Case(hs.AUDIT_SHAPE))
    q_len, d_len = (s[2][1:] - s[2][:-1]), (s[3][1:] - s[3][:-1])
    mq, md = torch.stack([q_len.max(), d_len.max()]).tolist()  # pack_padded's one combined fetch, before the call
    kv.maxsim_varlen(*v), ks.score_pairs_packed(*s)  # compile first: the counts are of a warm call
    rows = [("maxsim_varlen(Q, D, cu_q, cu_d), positional", *_syncs(lambda: kv.maxsim_varlen(*v), "varlen.py")),
            ("score_pairs_packed(...), positional (the harness)",
             *_syncs(lambda: ks.score_pairs_packed(*s), "score_pairs.py")),
            ("score_pairs_packed(..., max_seqlen_q=, max_seqlen_d=) as maxsim_padded",
             *_syncs(lambda: ks.score_pairs_packed(*s, max_seqlen_q=mq, max_seqlen_d=md), "score_pairs.py"))]
    for label, n, verdict in rows:
        print(f"lik_sync: {label}: {n} .item() call(s) of the corpus file{'; ' + verdict if verdict else ''}")
    hold = rows[0][1] == 2 and rows[1][1] == 2 and rows[2][1] == 0
    if CUDA:
        hold = hold and rows[0][2] == rows[1][2] == "syncs" and rows[2][2] == "no sync"
    return 1 if hold else 0


if __name__ == "__main__":
    names = sys.argv[1:] or ["lik_sync"]
    rc = 0
    for name in names:
        r = globals()[name]()
        print(f"rc {name}={r}")
        rc = max(rc, r)
    sys.exit(rc)
