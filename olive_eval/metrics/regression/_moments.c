/* Centred moments of paired samples in C: the optional compiled form of olive_eval.metrics.regression.moments.
 *
 *   moments(x, y) -> (mean_x, mean_y, sxx, syy, sxy, sdd): centred sums of squares and products, and the sum of
 *                    squared differences sum (x - y)^2
 *
 * Two passes without temporaries: the means, then the sums of deviations from them, refined by the residual sums
 * of the second pass (the corrected two-pass algorithm). x and y are float64 columns of one length (column.h).
 */
#include "column.h"

/* Values are added in blocks, the block sums then added up, which keeps the rounding error small. */
#define BLOCK 512

static PyObject *moments(PyObject *self, PyObject *args) {
    PyObject *xo, *yo;
    if (!PyArg_ParseTuple(args, "OO", &xo, &yo)) return NULL;
    Column x, y;
    if (open_column(xo, &x) < 0) return NULL;
    if (open_column(yo, &y) < 0) {
        PyBuffer_Release(&x.view);
        return NULL;
    }
    if (y.n != x.n || x.n == 0) {
        PyBuffer_Release(&x.view);
        PyBuffer_Release(&y.view);
        PyErr_SetString(PyExc_ValueError, "x and y must hold the same positive number of values");
        return NULL;
    }
    Py_ssize_t n = x.n;
    double mean_x, mean_y, sxx = 0.0, syy = 0.0, sxy = 0.0, sdd = 0.0;
    Py_BEGIN_ALLOW_THREADS
    double sum_x = 0.0, sum_y = 0.0;
    for (Py_ssize_t lo = 0; lo < n; lo += BLOCK) {
        Py_ssize_t hi = lo + BLOCK < n ? lo + BLOCK : n;
        double bx = 0.0, by = 0.0;
        for (Py_ssize_t i = lo; i < hi; i++) {
            bx += value_at(&x, i);
            by += value_at(&y, i);
        }
        sum_x += bx;
        sum_y += by;
    }
    mean_x = sum_x / (double)n;
    mean_y = sum_y / (double)n;
    double rx = 0.0, ry = 0.0; /* residual sums: the corrected two-pass algorithm refines the means with them */
    for (Py_ssize_t lo = 0; lo < n; lo += BLOCK) {
        Py_ssize_t hi = lo + BLOCK < n ? lo + BLOCK : n;
        double bx = 0.0, by = 0.0, bxx = 0.0, byy = 0.0, bxy = 0.0, bdd = 0.0;
        for (Py_ssize_t i = lo; i < hi; i++) {
            double a = value_at(&x, i), b = value_at(&y, i), dx = a - mean_x, dy = b - mean_y, d = a - b;
            bx += dx;
            by += dy;
            bxx += dx * dx;
            byy += dy * dy;
            bxy += dx * dy;
            bdd += d * d;
        }
        rx += bx;
        ry += by;
        sxx += bxx;
        syy += byy;
        sxy += bxy;
        sdd += bdd;
    }
    sxx -= rx * rx / (double)n;
    syy -= ry * ry / (double)n;
    sxy -= rx * ry / (double)n;
    mean_x += rx / (double)n;
    mean_y += ry / (double)n;
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&x.view);
    PyBuffer_Release(&y.view);
    return Py_BuildValue("(dddddd)", mean_x, mean_y, sxx, syy, sxy, sdd);
}

static PyMethodDef methods[] = {
    {"moments", moments, METH_VARARGS, "(mean_x, mean_y, sxx, syy, sxy, sdd), centred in two passes."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_moments", "Centred moments in C.", -1, methods};

PyMODINIT_FUNC PyInit__moments(void) { return PyModule_Create(&module); }
