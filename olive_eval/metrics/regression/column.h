/* The float64 columns the regression kernels read: 1-D buffers, contiguous or strided, at most 2**32 - 1 values. */
#ifndef OLIVE_EVAL_REGRESSION_COLUMN_H
#define OLIVE_EVAL_REGRESSION_COLUMN_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* A 1-D float64 buffer, contiguous or strided (a column of a wider array is read in place). */
typedef struct {
    Py_buffer view;
    const char *base;
    Py_ssize_t stride;
    Py_ssize_t n;
} Column;

static inline double value_at(const Column *c, Py_ssize_t i) {
    double v;
    memcpy(&v, c->base + i * c->stride, sizeof v);
    return v;
}

static int open_column(PyObject *object, Column *column) {
    if (PyObject_GetBuffer(object, &column->view, PyBUF_STRIDED_RO | PyBUF_FORMAT) < 0) return -1;
    const char *format = column->view.format;
    if (format != NULL && (format[0] == '<' || format[0] == '=' || format[0] == '@')) format++;
    if (column->view.ndim != 1 || format == NULL || strcmp(format, "d") != 0) {
        PyBuffer_Release(&column->view);
        PyErr_SetString(PyExc_TypeError, "expected a 1-D float64 buffer");
        return -1;
    }
    column->base = column->view.buf;
    column->stride = column->view.strides[0];
    column->n = column->view.shape[0];
    if (column->n > (Py_ssize_t)UINT32_MAX) {
        PyBuffer_Release(&column->view);
        PyErr_SetString(PyExc_OverflowError, "more than 2**32 - 1 values");
        return -1;
    }
    return 0;
}

#endif
