# Audit harness for tests/audit_public_corpus/deepspeed/residual_add.py: residual_add_bias on [B, S, H] as the
# inference engine calls it after attention (mp_size 1, mlp_after_attn, pre_attn_norm, no attention bias).
import sys
import types

# The file imports deepspeed.accelerator (not installed here) only to assert the tensors are on the accelerator:
# a stand-in that says yes.
_ds, _acc = types.ModuleType("deepspeed"), types.ModuleType("deepspeed.accelerator")


class _Accelerator:
    def on_accelerator(self, t):
        return True


_acc.get_accelerator = lambda: _Accelerator()
_ds.accelerator = _acc
sys.modules.setdefault("deepspeed", _ds)
sys.modules.setdefault("deepspeed.accelerator", _acc)

ENTRY = "residual_add_bias"
AUDIT_SHAPE = (2, 5, 96)


def make_inputs(case):
    b, s, h = case.shape
    return (case.randn(b, s, h), case.randn(b, s, h), case.randn(b, s, h), case.randn(h), case.randn(h), 1, True,
            False, True)


def reference(hidden, residual, attn_output, attn_bias, final_bias, mp_size, mlp_after_attn, add_attn_bias,
              pre_attn_norm):
    return hidden + (residual + final_bias + attn_output + attn_bias) / mp_size
