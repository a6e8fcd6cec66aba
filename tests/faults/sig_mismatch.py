"""Bad input: the candidate takes one argument, the reference two."""


def reference(x):
    return x
