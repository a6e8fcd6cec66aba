"""A helper beside the model: the generated reference must import the package, not the file alone."""


def shift(idx):
    return idx * 0.5
