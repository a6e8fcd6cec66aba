# audit discover fixture: liger-kernel 0.8.5 (BSD-2-Clause license), test/__init__.py, unchanged below this line.
