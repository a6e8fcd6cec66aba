# Audit harness for tests/audit_public_corpus/lightllm/multimodal_emb.py: multimodal_emb(out, prompt_ids,
# text_weight_embs, img_embs, img_token_lens, img_start_token_ids, img_start_locs, tp_text_start_token_id,
# tp_text_end_token_id), in place on out [tokens, hidden]: a token id in [text_start, text_end) takes row id -
# text_start of this rank's slice of the embedding table; an id in an image's range [start_id, start_id + len) takes
# row start_loc + id - start_id of img_embs (image tokens get ids past the vocabulary); other rows are left as they
# were (another tensor-parallel rank writes them). The file imports only torch and triton: no stand-in.
import torch

ENTRY = "multimodal_emb"
AUDIT_SHAPE = (12, 64)  # 12 prompt tokens, hidden 64; vocab 40 split over 2 ranks (this is rank 0: ids 0..19)
VOCAB, IMG_LEN = 40, 3


def make_inputs(case):
    s, d = case.shape
    ids = case.randint(0, VOCAB, (s,))
    ids[1:1 + min(IMG_LEN, s - 1)] = VOCAB + torch.arange(min(IMG_LEN, s - 1))  # one image of IMG_LEN tokens
    out = torch.zeros(s, d, dtype=case.dtype, device=case.device)
    return (out, ids, case.randn(VOCAB // 2, d), case.randn(IMG_LEN, d),
            torch.tensor([IMG_LEN], device=case.device), torch.tensor([VOCAB], device=case.device),
            torch.tensor([0], device=case.device), 0, VOCAB // 2)


def reference(out, ids, text, img, lens, starts, locs, t0, t1):
    for i, t in enumerate(ids.tolist()):
        if t0 <= t < t1:
            out[i] = text[t - t0]
        for j in range(len(lens)):
            if int(starts[j]) <= t < int(starts[j]) + int(lens[j]):
                out[i] = img[int(locs[j]) + t - int(starts[j])]
