"""Where kernels run: the device choice (CUDA, or Triton's CPU interpreter), the Triton import and the
launch recorder (runtime.py), a GPU's first CUDA set-up (gpu_first.py), the prewarm's kernel, and the
interpreter's fixes and instruments: TF32 dots, libdevice, autotune, NumPy compatibility, progress, traffic
counts, and the hints that explain interpreter-only errors; each launch's specialisation (launch_specs.py), its
compile for the target GPU without one (target_compile.py and its child process) and the compiled kernel's facts
(compiled.py: registers, spills, occupancy, PTX shape).

May import: nothing else of the worker (the bottom floor, beside confine/). Everything above imports it.
"""
