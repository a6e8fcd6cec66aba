"""Good candidate (tests/test_sandbox.py): builds a C extension with Triton's own build function, as Triton 3.6 builds
each kernel's launcher stub on its first launch on a GPU (triton.runtime.build.compile_module_from_src, the same in
3.6 and 3.9: the compiler is $CC, else gcc, else clang on PATH), then adds with good.py's kernel times the module's
answer (1). Under the sandbox it passes only if exec follows the compiler Triton resolves, with what that compiler
runs (cc1, as, collect2, ld), and the build writes only to the Triton cache and the scratch directory."""

from good import reference as _kernel
from triton.runtime.build import compile_module_from_src

SRC = r"""
#include <Python.h>
static PyObject* one(PyObject* self, PyObject* args) { return PyLong_FromLong(1); }
static PyMethodDef methods[] = {{"one", one, METH_NOARGS, ""}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "p2t_launcher_probe", NULL, -1, methods};
PyMODINIT_FUNC PyInit_p2t_launcher_probe(void) { return PyModule_Create(&module); }
"""
_MOD = []


def reference(x, y):
    if not _MOD:
        _MOD.append(compile_module_from_src(SRC, "p2t_launcher_probe"))
    return _kernel(x, y) * _MOD[0].one()
