# label: bad -- a plain float global: the interpreter runs it, the GPU compiler refuses it
SCALE = 0.5
