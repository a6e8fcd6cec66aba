# Audit harness for tests/audit_public_corpus/lightllm/apply_penalty.py: apply_penalty(Logits, presence_penalty,
# freqency_penalty, repetition_penalty, p_token_ids, p_token_counts, p_cumsum_seq_len, p_max_len_in_batch), in place
# on Logits [batch, vocab]: for each batch row b and each of its generated tokens (p_token_ids[p_cumsum_seq_len[b]:
# p_cumsum_seq_len[b + 1]], distinct, with their counts), logit / rep if logit > 0 else logit * rep, minus count *
# frequency, minus presence (lightllm's sampling: the ids and counts come from torch.unique of each request's output).
# The file imports torch, triton and numpy: no stand-in.
import torch

ENTRY = "apply_penalty"
AUDIT_SHAPE = (4, 100)  # 4 requests, vocab 100


def make_inputs(case):
    b, v = case.shape
    g = torch.Generator().manual_seed(case.seed)
    ids, counts, lens = [], [], []
    for i in range(b):
        n = min(v, 3 + 5 * i)
        ids.append(torch.randperm(v, generator=g)[:n])
        counts.append(torch.randint(1, 5, (n,), generator=g))
        lens.append(n)
    cum = torch.tensor([0] + lens).cumsum(0)
    dev = case.device
    return (case.randn(b, v), case.rand(b, low=0.0, high=1.0), case.rand(b, low=0.0, high=0.5),
            case.rand(b, low=1.0, high=1.5), torch.cat(ids).to(dev, torch.int32), torch.cat(counts).to(dev, torch.int32),
            cum.to(dev, torch.int32), max(lens))


def reference(logits, presence, freq, rep, ids, counts, cum, max_len):
    for b in range(logits.shape[0]):
        s, e = int(cum[b]), int(cum[b + 1])
        tok, cnt = ids[s:e].long(), counts[s:e]
        x = logits[b, tok]
        x = torch.where(x > 0, x / rep[b], x * rep[b])
        logits[b, tok] = x - cnt * freq[b] - presence[b]
