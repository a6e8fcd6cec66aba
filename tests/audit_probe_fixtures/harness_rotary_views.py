# Audit harness: q and k are column views of one packed qkv buffer (tokens, 3 * heads * head_dim), rotated in place.
ENTRY = "rotary_"
AUDIT_SHAPE = (6, 2, 16)  # tokens, heads, head_dim


def make_inputs(case):
    t, h, d = case.shape
    qkv = case.randn(t, 3 * h * d)
    angle = case.randn(t, d // 2)
    return (qkv[:, :h * d], qkv[:, h * d:2 * h * d], angle.cos(), angle.sin(), h)


def reference(q, k, cos, sin, heads):
    for x in (q, k):
        v = x.view(x.shape[0], heads, -1)
        half = v.shape[-1] // 2
        x1, x2 = v[..., :half].clone(), v[..., half:].clone()
        c, s = cos[:, None, :], sin[:, None, :]
        v[..., :half] = x1 * c - x2 * s
        v[..., half:] = x2 * c + x1 * s
