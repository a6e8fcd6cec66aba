"""Cross-entropy whose odd_7 case draws targets past the class range (the harness's mistake that issue 25 saw in
95_CrossEntropyLoss, where a size variant changed num_classes without input_shape). On a GPU F.cross_entropy hits
a device-side assert there; expected: the case is skipped as the harness's fault, no candidate is blamed."""

import torch

SHAPES = {"small": (16, 10), "odd_7": (7, 5)}
DTYPES = ["float32"]
NONCONTIGUOUS = False


def make_inputs(case):
    n, c = case.shape
    logits = case.randn(n, c)
    hi = c + 3 if case.name == "odd_7" else c  # planted: targets up to c + 2 on odd_7
    g = torch.Generator(device="cpu").manual_seed(case.seed)
    targets = torch.randint(0, hi, (n,), generator=g).to(logits.device)
    if case.name == "odd_7":
        targets[0] = c + 2
    return logits, targets


def reference(logits, targets):
    return torch.nn.functional.cross_entropy(logits, targets)
