/*
 * tosac._tosac: the C extension under the Python package (docs/PYTHON.md). It binds the public C
 * API only (the headers in include/tosac/): compilation through the driver, programs read back with their
 * sidecar, the runtime, validation and inspection. NumPy is handled by the Python layer
 * (tosac/__init__.py): arrays cross this boundary as (descr, shape, buffer) triples in the .npy
 * vocabulary, so the extension needs no NumPy headers and converts data exactly as `tosac run`
 * does (same functions: tosac_npy_to_tosa, tosac_quant_quantize, tosac_quant_dequantize).
 * Long calls (compile, run) release the GIL; a program runs one call at a time (its lock).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tosac/driver.h"
#include "tosac/inspect.h"
#include "tosac/npy.h"
#include "tosac/quant.h"
#include "tosac/runtime.h"
#include "tosac/target.h"
#include "tosac/tosa_file.h"
#include "tosac/validate.h"

static PyObject *Error; /* tosac.Error */

/* Raises tosac.Error(message) with .messages (every diagnostic) and .status (the status text). */
static PyObject *raise_error(tosac_status s, const tosac_diag *d, const char *context)
{
    PyObject *list = PyList_New(0);
    PyObject *text = NULL, *exc = NULL;
    if (!list) return NULL;
    size_t n = tosac_diag_count(d);
    for (size_t k = 0; k < n; k++) {
        PyObject *m = PyUnicode_DecodeUTF8(tosac_diag_message(d, k, NULL), (Py_ssize_t)strlen(tosac_diag_message(d, k, NULL)), "replace");
        if (!m || PyList_Append(list, m) < 0) {
            Py_XDECREF(m);
            goto out;
        }
        Py_DECREF(m);
    }
    if (n) {
        PyObject *sep = PyUnicode_FromString("\n");
        text = sep ? PyUnicode_Join(sep, list) : NULL;
        Py_XDECREF(sep);
    } else {
        text = PyUnicode_FromFormat("%s: %s", context, tosac_status_str(s));
    }
    if (!text) goto out;
    exc = PyObject_CallOneArg(Error, text);
    if (!exc) goto out;
    PyObject *st = PyUnicode_FromString(tosac_status_str(s));
    if (!st || PyObject_SetAttrString(exc, "messages", list) < 0 || PyObject_SetAttrString(exc, "status", st) < 0) {
        Py_XDECREF(st);
        goto out;
    }
    Py_DECREF(st);
    PyErr_SetObject(Error, exc);
out:
    Py_XDECREF(exc);
    Py_XDECREF(text);
    Py_DECREF(list);
    return NULL;
}

static PyObject *raise_msg(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    PyObject *exc = PyObject_CallFunction(Error, "s", buf);
    if (!exc) return NULL;
    PyObject *list = Py_BuildValue("[s]", buf);
    if (list) PyObject_SetAttrString(exc, "messages", list);
    PyObject_SetAttrString(exc, "status", Py_None);
    Py_XDECREF(list);
    PyErr_SetObject(Error, exc);
    Py_DECREF(exc);
    return NULL;
}

/* ---- arrays in the .npy vocabulary ---------------------------------------------------------- */

/* A borrowed array: descr ("<f4", "|u1", ...), shape and a contiguous buffer. */
typedef struct array_view {
    Py_buffer buf;
    bool held;
    tosac_npy npy; /* data points into buf */
} array_view;

/* Fills v from the tuple (descr, shape, buffer); the buffer is held until view_release. */
static bool view_get(PyObject *t, const char *what, array_view *v)
{
    const char *descr;
    PyObject *shape, *data;
    memset(v, 0, sizeof *v);
    if (!PyArg_ParseTuple(t, "sOO", &descr, &shape, &data)) return false;
    if (strlen(descr) >= sizeof v->npy.descr) {
        PyErr_Format(PyExc_TypeError, "%s: unsupported dtype '%s'", what, descr);
        return false;
    }
    strcpy(v->npy.descr, descr);
    Py_ssize_t rank = PySequence_Length(shape);
    if (rank < 0 || rank > TOSAC_NPY_MAX_RANK) {
        if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "%s: rank %zd is above %d", what, rank, TOSAC_NPY_MAX_RANK);
        return false;
    }
    v->npy.rank = (int)rank;
    v->npy.count = 1;
    for (Py_ssize_t k = 0; k < rank; k++) {
        PyObject *o = PySequence_GetItem(shape, k);
        long long dim = o ? PyLong_AsLongLong(o) : -1;
        Py_XDECREF(o);
        if (dim < 0 || (dim && v->npy.count > INT64_MAX / dim)) {
            if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "%s: bad shape", what);
            return false;
        }
        v->npy.shape[k] = dim;
        v->npy.count *= dim;
    }
    if (PyObject_GetBuffer(data, &v->buf, PyBUF_C_CONTIGUOUS) < 0) return false;
    v->held = true;
    v->npy.data = v->buf.len ? v->buf.buf : NULL;
    v->npy.nbytes = (size_t)v->buf.len;
    v->npy.elem_size = v->npy.count ? (size_t)v->buf.len / (size_t)v->npy.count : 0;
    if (v->npy.count && (size_t)v->npy.count * v->npy.elem_size != (size_t)v->buf.len) {
        PyErr_Format(PyExc_ValueError, "%s: %zd bytes do not hold %lld elements", what, v->buf.len,
                     (long long)v->npy.count);
        return false;
    }
    return true;
}

static void view_release(array_view *v)
{
    if (v->held) PyBuffer_Release(&v->buf);
    v->held = false;
}

/* ---- options -------------------------------------------------------------------------------- */

/* Everything a compile call borrows from Python; released after the call. */
typedef struct compile_args {
    tosac_driver_opts o;
    tosac_compile_shape *shapes;
    int64_t (*dims)[TOSAC_MAX_RANK];
    tosac_compile_binding *binds;
    array_view *bind_views;
    tosac_driver_calib_array *arrays;
    Py_buffer *array_bufs;
    const char **sources;
    Py_ssize_t n_shapes, n_binds, n_arrays, n_sources, n_bufs, n_views;
} compile_args;

static void args_free(compile_args *a)
{
    for (Py_ssize_t k = 0; k < a->n_views; k++) view_release(&a->bind_views[k]);
    for (Py_ssize_t k = 0; k < a->n_bufs; k++) PyBuffer_Release(&a->array_bufs[k]);
    PyMem_Free(a->shapes);
    PyMem_Free(a->dims);
    PyMem_Free(a->binds);
    PyMem_Free(a->bind_views);
    PyMem_Free(a->arrays);
    PyMem_Free(a->array_bufs);
    PyMem_Free(a->sources);
}

/* A list item of the options: the list under `key` (empty when missing). */
static PyObject *opt_list(PyObject *opts, const char *key, Py_ssize_t *n)
{
    PyObject *v = PyDict_GetItemString(opts, key); /* borrowed */
    if (!v) {
        *n = 0;
        return NULL;
    }
    if (!PyList_Check(v)) {
        PyErr_Format(PyExc_TypeError, "option %s: a list expected", key);
        *n = -1;
        return NULL;
    }
    *n = PyList_GET_SIZE(v);
    return v;
}

static bool opt_str(PyObject *opts, const char *key, const char **out)
{
    PyObject *v = PyDict_GetItemString(opts, key);
    if (!v || v == Py_None) return true;
    *out = PyUnicode_AsUTF8(v);
    return *out != NULL;
}

static bool opt_uint(PyObject *opts, const char *key, uint32_t *out)
{
    PyObject *v = PyDict_GetItemString(opts, key);
    if (!v || v == Py_None) return true;
    unsigned long x = PyLong_AsUnsignedLong(v);
    if (PyErr_Occurred() || x > UINT32_MAX) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "option %s: a count in 0..%u expected", key, UINT32_MAX);
        return false;
    }
    *out = (uint32_t)x;
    return true;
}

static bool opt_bool(PyObject *opts, const char *key, bool *out)
{
    PyObject *v = PyDict_GetItemString(opts, key);
    if (!v) return true;
    int t = PyObject_IsTrue(v);
    if (t < 0) return false;
    *out = t;
    return true;
}

/* Calibration progress to a Python callable (called from the compiling thread, which runs
   without the GIL); an exception it raises is reported as unraisable: compilation goes on. */
static void progress_cb(void *user, uint32_t done, uint32_t total)
{
    PyGILState_STATE st = PyGILState_Ensure();
    PyObject *r = PyObject_CallFunction((PyObject *)user, "II", done, total);
    if (!r) PyErr_WriteUnraisable((PyObject *)user);
    Py_XDECREF(r);
    PyGILState_Release(st);
}

/*
 * The options dict (tosac/__init__.py builds it): target, io (0 float, 1 int8, 2 uint8),
 * calib_method (0 minmax, 1 percentile, 2 mse), calib_random, calib_samples, lowering, per_tensor,
 * a16w8, preserve_io, io_nhwc, verify_each, report, emit_qdq, progress (callable), shapes [(name, dims)], binds
 * [(name, descr, shape, buffer)], calib_arrays [(name or None, float32 buffer)], calib_sources [str].
 */
static bool args_parse(PyObject *opts, compile_args *a)
{
    memset(a, 0, sizeof *a);
    a->o = tosac_driver_opts_default();
    uint32_t io = 0, method = (uint32_t)a->o.calib_method;
    if (!PyDict_Check(opts)) return PyErr_SetString(PyExc_TypeError, "options: a dict expected"), false;
    if (!opt_str(opts, "target", &a->o.target) || !opt_str(opts, "emit_qdq", &a->o.emit_qdq) ||
        !opt_uint(opts, "io", &io) || !opt_uint(opts, "calib_method", &method) ||
        !opt_uint(opts, "calib_random", &a->o.calib_random) || !opt_uint(opts, "calib_samples", &a->o.calib_samples) ||
        !opt_uint(opts, "lowering", &a->o.lowering) || !opt_bool(opts, "per_tensor", &a->o.per_tensor) ||
        !opt_bool(opts, "a16w8", &a->o.a16w8) || !opt_bool(opts, "preserve_io", &a->o.preserve_io) ||
        !opt_bool(opts, "io_nhwc", &a->o.io_nhwc) || !opt_bool(opts, "verify_each", &a->o.verify_each) ||
        !opt_bool(opts, "report", &a->o.report) || !opt_uint(opts, "threads", &a->o.threads))
        return false;
    PyObject *progress = PyDict_GetItemString(opts, "progress");
    if (progress && progress != Py_None) {
        if (!PyCallable_Check(progress)) return PyErr_SetString(PyExc_TypeError, "progress: a callable expected"), false;
        a->o.progress = progress_cb;
        a->o.progress_user = progress; /* the options dict keeps it alive during the call */
    }
    /* lowering given (even 0, "none") replaces the target's own choices */
    a->o.lowering_given = PyDict_GetItemString(opts, "lowering") && PyDict_GetItemString(opts, "lowering") != Py_None;
    a->o.io = (tosac_driver_io)io;
    a->o.calib_method = (tosac_quant_calib_method)method;

    PyObject *l = opt_list(opts, "shapes", &a->n_shapes);
    if (a->n_shapes < 0) return false;
    a->shapes = PyMem_Calloc((size_t)a->n_shapes + 1, sizeof *a->shapes);
    a->dims = PyMem_Calloc((size_t)a->n_shapes + 1, sizeof *a->dims);
    if (!a->shapes || !a->dims) return PyErr_NoMemory(), false;
    for (Py_ssize_t k = 0; k < a->n_shapes; k++) {
        const char *name;
        PyObject *dims;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(l, k), "sO", &name, &dims)) return false;
        Py_ssize_t rank = PySequence_Length(dims);
        if (rank < 0 || rank > TOSAC_MAX_RANK) {
            if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "input shape of '%s': rank above %d", name, TOSAC_MAX_RANK);
            return false;
        }
        for (Py_ssize_t j = 0; j < rank; j++) {
            PyObject *o = PySequence_GetItem(dims, j);
            long long x = o ? PyLong_AsLongLong(o) : -1;
            Py_XDECREF(o);
            if (x < 0 || x > INT32_MAX) {
                if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_OverflowError)) {
                    PyErr_Clear();
                    PyErr_Format(PyExc_ValueError, "input shape of '%s': dimensions are 0..%d", name, INT32_MAX);
                }
                return false;
            }
            a->dims[k][j] = x;
        }
        a->shapes[k].name = name;
        a->shapes[k].rank = (int)rank;
        a->shapes[k].dims = a->dims[k];
    }
    a->o.n_shapes = (size_t)a->n_shapes;
    a->o.shapes = a->shapes;

    l = opt_list(opts, "binds", &a->n_binds);
    if (a->n_binds < 0) return false;
    a->binds = PyMem_Calloc((size_t)a->n_binds + 1, sizeof *a->binds);
    a->bind_views = PyMem_Calloc((size_t)a->n_binds + 1, sizeof *a->bind_views);
    if (!a->binds || !a->bind_views) return PyErr_NoMemory(), false;
    for (Py_ssize_t k = 0; k < a->n_binds; k++) {
        PyObject *item = PyList_GET_ITEM(l, k), *rest;
        const char *name;
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 4)
            return PyErr_SetString(PyExc_TypeError, "binds: (name, descr, shape, buffer) expected"), false;
        name = PyUnicode_AsUTF8(PyTuple_GET_ITEM(item, 0));
        rest = PyTuple_GetSlice(item, 1, 4);
        bool ok = name && rest && view_get(rest, name, &a->bind_views[k]);
        Py_XDECREF(rest);
        a->n_views = k + 1;
        if (!ok) return false;
        a->binds[k].name = name;
        a->binds[k].value = &a->bind_views[k].npy;
    }
    a->o.n_bindings = (size_t)a->n_binds;
    a->o.bindings = a->binds;

    l = opt_list(opts, "calib_arrays", &a->n_arrays);
    if (a->n_arrays < 0) return false;
    a->arrays = PyMem_Calloc((size_t)a->n_arrays + 1, sizeof *a->arrays);
    a->array_bufs = PyMem_Calloc((size_t)a->n_arrays + 1, sizeof *a->array_bufs);
    if (!a->arrays || !a->array_bufs) return PyErr_NoMemory(), false;
    for (Py_ssize_t k = 0; k < a->n_arrays; k++) {
        PyObject *item = PyList_GET_ITEM(l, k);
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2)
            return PyErr_SetString(PyExc_TypeError, "calib_arrays: (name, buffer) expected"), false;
        PyObject *name = PyTuple_GET_ITEM(item, 0);
        a->arrays[k].input = name == Py_None ? NULL : PyUnicode_AsUTF8(name);
        if (name != Py_None && !a->arrays[k].input) return false;
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(item, 1), &a->array_bufs[k], PyBUF_C_CONTIGUOUS) < 0) return false;
        a->n_bufs = k + 1;
        a->arrays[k].data = a->array_bufs[k].buf;
        a->arrays[k].count = (size_t)a->array_bufs[k].len / sizeof(float);
    }
    a->o.n_calib_arrays = (size_t)a->n_arrays;
    a->o.calib_arrays = a->arrays;

    l = opt_list(opts, "calib_sources", &a->n_sources);
    if (a->n_sources < 0) return false;
    a->sources = PyMem_Calloc((size_t)a->n_sources + 1, sizeof *a->sources);
    if (!a->sources) return PyErr_NoMemory(), false;
    for (Py_ssize_t k = 0; k < a->n_sources; k++)
        if (!(a->sources[k] = PyUnicode_AsUTF8(PyList_GET_ITEM(l, k)))) return false;
    a->o.n_calib_sources = (size_t)a->n_sources;
    a->o.calib_sources = a->sources;
    return true;
}

/* ---- Program -------------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    tosac_compiled *c;
    tosac_program *rt;
    uint32_t threads; /* tosac_program_opts.threads of rt (0: one per processor) */
    bool conv_direct; /* tosac_program_opts.conv_direct of rt (no Winograd) */
    PyThread_type_lock lock;
} ProgramObject;

static PyTypeObject ProgramType;

static void program_dealloc(ProgramObject *self)
{
    tosac_program_destroy(self->rt);
    tosac_compiled_destroy(self->c);
    if (self->lock) PyThread_free_lock(self->lock);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* A runtime for `c` built as `tosac run` builds it: every profile and extension, no level limits;
   NULL with tosac.Error raised. */
static tosac_program *runtime_new(const tosac_compiled *c, uint32_t threads, bool conv_direct, const char *name)
{
    tosac_diag *d = tosac_diag_create();
    if (!d) return (tosac_program *)PyErr_NoMemory();
    tosac_program_opts po = tosac_program_opts_default();
    po.validate.extensions = TOSAC_EXT_ALL;
    po.validate.level = TOSAC_LEVEL_NONE;
    po.threads = threads;
    po.conv_direct = conv_direct;
    tosac_program *rt = NULL;
    tosac_status s;
    Py_BEGIN_ALLOW_THREADS
    s = tosac_program_create(tosac_compiled_program(c), &po, &rt, d);
    Py_END_ALLOW_THREADS
    if (s != TOSAC_OK) raise_error(s, d, name);
    tosac_diag_destroy(d);
    return rt;
}

/* Wraps `c` (taken over) with a runtime on `threads` threads. */
static PyObject *program_new(tosac_compiled *c, const char *name, uint32_t threads, bool conv_direct)
{
    tosac_program *rt = runtime_new(c, threads, conv_direct, name);
    if (!rt) {
        tosac_compiled_destroy(c);
        return NULL;
    }
    ProgramObject *self = PyObject_New(ProgramObject, &ProgramType);
    if (self) {
        self->c = c;
        self->rt = rt;
        self->threads = threads;
        self->conv_direct = conv_direct;
        self->lock = PyThread_allocate_lock();
        if (self->lock) return (PyObject *)self;
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    tosac_program_destroy(rt);
    tosac_compiled_destroy(c);
    return NULL;
}

/* The sidecar entry of an input or output, or NULL. */
static const tosac_quant_io *find_io(const tosac_compiled *c, bool input, const char *name)
{
    const tosac_quant_iomap *m = tosac_compiled_iomap(c);
    if (!m) return NULL;
    const tosac_quant_io *list = input ? m->inputs : m->outputs;
    uint32_t n = input ? m->n_inputs : m->n_outputs;
    for (uint32_t k = 0; k < n; k++)
        if (!strcmp(list[k].name, name)) return &list[k];
    return NULL;
}

/* The .npy descr run() returns for an output (execution storage, host order; BF16 widened to
   float32 since NumPy has no bfloat16). */
static const char *out_descr(const tosac_tensor_info *info, const tosac_quant_io *q, size_t *elem)
{
    if (tosac_quant_io_holds_codes(q, info->dtype) || info->dtype == TOSAC_DTYPE_BF16) return *elem = 4, "<f4";
    if (info->f64) return *elem = 8, "<f8";
    switch (info->dtype) {
    case TOSAC_DTYPE_BOOL: return *elem = 1, "|b1";
    case TOSAC_DTYPE_INT4:
    case TOSAC_DTYPE_INT8: return *elem = 1, "|i1";
    case TOSAC_DTYPE_INT16: return *elem = 2, "<i2";
    case TOSAC_DTYPE_INT32: return *elem = 4, "<i4";
    case TOSAC_DTYPE_INT48:
    case TOSAC_DTYPE_SHAPE: return *elem = 8, "<i8";
    case TOSAC_DTYPE_FP16: return *elem = 2, "<f2";
    case TOSAC_DTYPE_FP32: return *elem = 4, "<f4";
    case TOSAC_DTYPE_FP8E4M3:
    case TOSAC_DTYPE_FP8E5M2: return *elem = 1, "|u1";
    default: return NULL;
    }
}

static int32_t get_code(const tosac_quant_io *q, const uint8_t *p, size_t k)
{
    switch (q->type) {
    case TOSAC_QUANT_IO_UINT8: return p[k];
    case TOSAC_QUANT_IO_INT16: {
        int16_t v;
        memcpy(&v, p + 2 * k, 2);
        return v;
    }
    default: return (int8_t)p[k];
    }
}

/* The dims of `info` as a tuple; NULL with an exception set. */
static PyObject *shape_tuple(const tosac_tensor_info *info)
{
    PyObject *t = PyTuple_New(info->rank);
    for (int32_t j = 0; t && j < info->rank; j++) {
        PyObject *v = PyLong_FromLongLong(info->shape[j]);
        if (!v) Py_CLEAR(t);
        else PyTuple_SET_ITEM(t, j, v);
    }
    return t;
}

/* Output i from execution storage into `dst` (descr from out_descr). */
static void copy_output(const tosac_tensor_info *info, const tosac_quant_io *q, const void *src, uint8_t *dst)
{
    size_t n = (size_t)info->nelem;
    if (tosac_quant_io_holds_codes(q, info->dtype)) {
        for (size_t k = 0; k < n; k++) {
            float f = (float)tosac_quant_dequantize(get_code(q, src, k), q->q);
            memcpy(dst + 4 * k, &f, 4);
        }
    } else if (info->dtype == TOSAC_DTYPE_BF16 && !info->f64) {
        for (size_t k = 0; k < n; k++) {
            uint16_t b;
            memcpy(&b, (const uint8_t *)src + 2 * k, 2);
            uint32_t w = (uint32_t)b << 16;
            memcpy(dst + 4 * k, &w, 4);
        }
    } else {
        memcpy(dst, src, info->nbytes);
    }
}

/* run(inputs) with inputs a list of (descr, shape, buffer) in program input order; returns the
   outputs as a list of (name, descr, shape, bytearray). */
static PyObject *program_run(ProgramObject *self, PyObject *arg)
{
    uint32_t n_in = tosac_program_input_count(self->rt), n_out = tosac_program_output_count(self->rt);
    if (!PyList_Check(arg) || PyList_GET_SIZE(arg) != (Py_ssize_t)n_in)
        return PyErr_Format(PyExc_TypeError, "run: a list of %u inputs expected", n_in);
    array_view *views = PyMem_Calloc(n_in + 1, sizeof *views);
    uint8_t **bytes = PyMem_Calloc(n_in + 1, sizeof *bytes);
    size_t *lens = PyMem_Calloc(n_in + 1, sizeof *lens);
    PyObject **outs = PyMem_Calloc(n_out + 1, sizeof *outs);
    PyObject *result = NULL;
    tosac_diag *d = tosac_diag_create();
    uint32_t held = 0;
    if (!views || !bytes || !lens || !outs || !d) {
        PyErr_NoMemory();
        goto done;
    }
    for (; held < n_in; held++) {
        tosac_tensor_info info;
        tosac_program_input_info(self->rt, held, &info);
        if (!view_get(PyList_GET_ITEM(arg, held), info.name, &views[held])) {
            view_release(&views[held]);
            goto done;
        }
    }
    for (uint32_t k = 0; k < n_out; k++) {
        tosac_tensor_info info;
        size_t elem = 0;
        tosac_program_output_info(self->rt, k, &info);
        if (!out_descr(&info, find_io(self->c, false, info.name), &elem)) {
            raise_msg("output '%s': type %s has no NumPy form", info.name, tosac_dtype_name(info.dtype));
            goto done;
        }
        if (!(outs[k] = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)(elem * (size_t)info.nelem)))) goto done;
    }
    tosac_status s = TOSAC_OK;
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(self->lock, WAIT_LOCK);
    for (uint32_t i = 0; i < n_in && s == TOSAC_OK; i++) {
        tosac_tensor_info info;
        tosac_program_input_info(self->rt, i, &info);
        char label[300];
        size_t nans = 0;
        snprintf(label, sizeof label, "the array for input '%s'", info.name);
        s = tosac_quant_input_bytes(&views[i].npy, &info, find_io(self->c, true, info.name), label, "input", &bytes[i],
                                    &lens[i], &nans, d);
        if (s == TOSAC_OK) s = tosac_program_set_input_tosa(self->rt, i, bytes[i], lens[i], d);
    }
    if (s == TOSAC_OK) s = tosac_program_invoke(self->rt, d);
    for (uint32_t k = 0; k < n_out && s == TOSAC_OK; k++) {
        tosac_tensor_info info;
        tosac_program_output_info(self->rt, k, &info);
        copy_output(&info, find_io(self->c, false, info.name), tosac_program_output_ptr(self->rt, k),
                    (uint8_t *)PyByteArray_AS_STRING(outs[k]));
    }
    PyThread_release_lock(self->lock);
    Py_END_ALLOW_THREADS
    if (s != TOSAC_OK) {
        raise_error(s, d, "run");
        goto done;
    }
    result = PyList_New(n_out);
    for (uint32_t k = 0; result && k < n_out; k++) {
        tosac_tensor_info info;
        size_t elem;
        tosac_program_output_info(self->rt, k, &info);
        PyObject *shape = shape_tuple(&info);
        PyObject *t = shape ? Py_BuildValue("(ssNO)", info.name, out_descr(&info, find_io(self->c, false, info.name), &elem),
                                            shape, outs[k])
                            : NULL;
        if (!t) {
            Py_CLEAR(result);
            break;
        }
        PyList_SET_ITEM(result, k, t);
    }
done:
    for (uint32_t i = 0; i < held; i++) view_release(&views[i]);
    for (uint32_t i = 0; bytes && i < n_in; i++) tosac_free(bytes[i], lens[i]);
    for (uint32_t k = 0; outs && k < n_out; k++) Py_XDECREF(outs[k]);
    PyMem_Free(views);
    PyMem_Free(bytes);
    PyMem_Free(lens);
    PyMem_Free(outs);
    tosac_diag_destroy(d);
    return result;
}

/* (scale, zero_point, type name) of a sidecar entry, or None. */
static PyObject *qparams_tuple(const tosac_quant_io *q)
{
    if (!q) Py_RETURN_NONE;
    return Py_BuildValue("(dis)", q->q.scale, (int)q->q.zero_point, tosac_quant_io_type_name(q->type));
}

/* [(name, tosa dtype name, shape, qparams or None)] of the inputs or outputs. */
static PyObject *tensors(ProgramObject *self, bool input)
{
    uint32_t n = input ? tosac_program_input_count(self->rt) : tosac_program_output_count(self->rt);
    PyObject *list = PyList_New(n);
    for (uint32_t k = 0; list && k < n; k++) {
        tosac_tensor_info info;
        if (input) tosac_program_input_info(self->rt, k, &info);
        else tosac_program_output_info(self->rt, k, &info);
        PyObject *shape = shape_tuple(&info);
        PyObject *t = shape ? Py_BuildValue("(ssNN)", info.name, tosac_dtype_name(info.dtype), shape,
                                            qparams_tuple(find_io(self->c, input, info.name)))
                            : NULL;
        if (!t) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, k, t);
    }
    return list;
}

static PyObject *program_inputs(ProgramObject *self, PyObject *unused)
{
    (void)unused;
    return tensors(self, true);
}

static PyObject *program_outputs(ProgramObject *self, PyObject *unused)
{
    (void)unused;
    return tensors(self, false);
}

static PyObject *program_save(ProgramObject *self, PyObject *args)
{
    PyObject *path;
    if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path)) return NULL;
    tosac_diag *d = tosac_diag_create();
    tosac_status s;
    Py_BEGIN_ALLOW_THREADS
    s = tosac_compiled_write(self->c, PyBytes_AS_STRING(path), d);
    Py_END_ALLOW_THREADS
    PyObject *r = s == TOSAC_OK ? Py_NewRef(Py_None) : raise_error(s, d, PyBytes_AS_STRING(path));
    tosac_diag_destroy(d);
    Py_DECREF(path);
    return r;
}

static PyObject *program_inspect(ProgramObject *self, PyObject *unused)
{
    (void)unused;
    char *text = tosac_inspect_json(tosac_compiled_program(self->c));
    if (!text) return PyErr_NoMemory();
    PyObject *r = PyUnicode_FromString(text);
    tosac_string_free(text);
    return r;
}

/* The compile report, the SQNR report and the stage times as a dict (empty for a loaded program). */
static PyObject *program_report(ProgramObject *self, PyObject *unused)
{
    (void)unused;
    const tosac_compile_report *r = tosac_compiled_report(self->c);
    const tosac_driver_times *t = tosac_compiled_times(self->c);
    PyObject *dict = PyDict_New();
    if (!dict || !r->n_steps) return dict;
    PyObject *steps = PyList_New(r->n_steps);
    for (uint32_t k = 0; steps && k < r->n_steps; k++) {
        PyObject *it = Py_BuildValue("{s:s,s:d,s:I,s:I}", "name", r->steps[k].name, "ms", r->steps[k].ms, "ops",
                                     r->steps[k].ops, "changes", r->steps[k].changes);
        if (!it) Py_CLEAR(steps);
        else PyList_SET_ITEM(steps, k, it);
    }
    PyObject *v = steps ? Py_BuildValue("{s:N,s:I,s:I,s:I,s:K,s:I,s:d,s:d,s:d}", "steps", steps, "transposes_imported",
                                        r->transposes_imported, "transposes_final", r->transposes_final, "consts_merged",
                                        r->consts_merged, "dedup_bytes_saved", (unsigned long long)r->dedup_bytes_saved,
                                        "identities_added", r->identities_added, "read_ms", t->read_ms, "compile_ms",
                                        t->compile_ms, "quantize_ms", t->quantize_ms)
                        : NULL;
    if (!v || PyDict_Update(dict, v) < 0) {
        Py_XDECREF(v);
        Py_DECREF(dict);
        return NULL;
    }
    Py_DECREF(v);
    const tosac_quant_report *q = tosac_compiled_quant_report(self->c);
    if (!q) return dict;
    PyObject *layers = PyList_New(q->n_layers);
    for (uint32_t k = 0; layers && k < q->n_layers; k++) {
        const tosac_quant_layer *L = &q->layers[k];
        PyObject *it = Py_BuildValue("{s:s,s:s,s:z,s:d,s:s,s:d,s:i}", "name", L->name, "op", L->op, "onnx_node",
                                     L->onnx_node, "sqnr_db", L->sqnr_db, "form", L->int32 ? "i32" : L->int16 ? "i16" : "i8",
                                     "scale", L->q.scale, "zero_point", (int)L->q.zero_point);
        if (!it) Py_CLEAR(layers);
        else PyList_SET_ITEM(layers, k, it);
    }
    PyObject *qd = layers ? Py_BuildValue("{s:I,s:d,s:N}", "samples", q->n_samples, "output_sqnr_db", q->output_sqnr_db,
                                          "layers", layers)
                          : NULL;
    if (!qd || PyDict_SetItemString(dict, "quantization", qd) < 0) {
        Py_XDECREF(qd);
        Py_DECREF(dict);
        return NULL;
    }
    Py_DECREF(qd);
    return dict;
}

/* A device target's partition report (the JSON of partition_report.json), or None. */
static PyObject *program_partition(ProgramObject *self, PyObject *unused)
{
    (void)unused;
    const tosac_artifact *a = tosac_compiled_artifact(self->c);
    if (!a) Py_RETURN_NONE;
    char *text = tosac_artifact_report_json(a);
    if (!text) return PyErr_NoMemory();
    PyObject *r = PyUnicode_FromString(text);
    tosac_string_free(text);
    return r;
}

/* Writes a device target's artifact directory (docs/TARGETS.md). */
static PyObject *program_save_artifact(ProgramObject *self, PyObject *args)
{
    PyObject *path;
    if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path)) return NULL;
    const tosac_artifact *a = tosac_compiled_artifact(self->c);
    if (!a) {
        Py_DECREF(path);
        return PyErr_Format(PyExc_ValueError, "the program was not compiled for an Ethos-U or Cortex-M target: it "
                                              "has no artifact");
    }
    tosac_diag *d = tosac_diag_create();
    tosac_status s;
    Py_BEGIN_ALLOW_THREADS
    s = tosac_artifact_write(a, PyBytes_AS_STRING(path), d);
    Py_END_ALLOW_THREADS
    PyObject *r = s == TOSAC_OK ? Py_NewRef(Py_None) : raise_error(s, d, PyBytes_AS_STRING(path));
    tosac_diag_destroy(d);
    Py_DECREF(path);
    return r;
}

/* set_threads(n): rebuilds the runtime on n threads (0: one per processor) unless it has that
   setting already. */
static PyObject *program_set_threads(ProgramObject *self, PyObject *args)
{
    unsigned int threads;
    if (!PyArg_ParseTuple(args, "I", &threads)) return NULL;
    if (threads > 64) return PyErr_Format(PyExc_ValueError, "threads: 0..64 expected, got %u", threads);
    if (threads != self->threads) {
        tosac_program *rt = runtime_new(self->c, threads, self->conv_direct, "run");
        if (!rt) return NULL;
        tosac_program *old;
        Py_BEGIN_ALLOW_THREADS
        PyThread_acquire_lock(self->lock, WAIT_LOCK);
        old = self->rt;
        self->rt = rt;
        self->threads = threads;
        PyThread_release_lock(self->lock);
        Py_END_ALLOW_THREADS
        tosac_program_destroy(old);
    }
    return PyLong_FromUnsignedLong(tosac_program_threads(self->rt));
}

static PyMethodDef program_methods[] = {
    {"set_threads", (PyCFunction)program_set_threads, METH_VARARGS,
     "set_threads(n) -> the threads the runtime got (rebuilt on n threads unless it has that setting)"},
    {"run", (PyCFunction)program_run, METH_O, "run([(descr, shape, buffer)...]) -> [(name, descr, shape, bytearray)]"},
    {"inputs", (PyCFunction)program_inputs, METH_NOARGS, "[(name, dtype, shape, qparams)]"},
    {"outputs", (PyCFunction)program_outputs, METH_NOARGS, "[(name, dtype, shape, qparams)]"},
    {"save", (PyCFunction)program_save, METH_VARARGS, "save(path): the .tosa file and its sidecar"},
    {"inspect", (PyCFunction)program_inspect, METH_NOARGS, "tosac_inspect_json of the program"},
    {"report", (PyCFunction)program_report, METH_NOARGS, "compile and quantization report"},
    {"partition", (PyCFunction)program_partition, METH_NOARGS, "a device target's partition report (JSON) or None"},
    {"save_artifact", (PyCFunction)program_save_artifact, METH_VARARGS, "save_artifact(dir): a device target's artifact"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ProgramType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tosac._tosac._Program",
    .tp_basicsize = sizeof(ProgramObject),
    .tp_dealloc = (destructor)program_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A compiled or loaded program with its runtime (see tosac.Program).",
    .tp_methods = program_methods,
};

/* ---- module functions ----------------------------------------------------------------------- */

/* compile(model: str path | bytes, name, options: dict) -> _Program */
static PyObject *mod_compile(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *model, *opts;
    const char *name;
    if (!PyArg_ParseTuple(args, "OsO", &model, &name, &opts)) return NULL;
    compile_args a;
    PyObject *path = NULL;
    Py_buffer bytes = {0};
    bool have_bytes = false;
    bool conv_direct = false; /* the returned program's, not the calibration's */
    if (!args_parse(opts, &a) || !opt_bool(opts, "conv_direct", &conv_direct)) {
        args_free(&a);
        return NULL;
    }
    if (PyUnicode_Check(model)) {
        if (!PyUnicode_FSConverter(model, &path)) {
            args_free(&a);
            return NULL;
        }
    } else if (!PyObject_CheckBuffer(model) || PyObject_GetBuffer(model, &bytes, PyBUF_SIMPLE) < 0) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "model: a path or the bytes of an ONNX model expected");
        args_free(&a);
        return NULL;
    } else {
        have_bytes = true;
    }
    tosac_diag *d = tosac_diag_create();
    tosac_compiled *c = NULL;
    tosac_status s;
    Py_BEGIN_ALLOW_THREADS
    s = path ? tosac_driver_compile_file(PyBytes_AS_STRING(path), &a.o, &c, d)
             : tosac_driver_compile_mem(bytes.buf, (size_t)bytes.len, name, &a.o, &c, d);
    Py_END_ALLOW_THREADS
    PyObject *r = s == TOSAC_OK ? program_new(c, name, a.o.threads, conv_direct) : raise_error(s, d, name);
    tosac_diag_destroy(d);
    if (have_bytes) PyBuffer_Release(&bytes);
    Py_XDECREF(path);
    args_free(&a);
    return r;
}

/* load(path, threads, conv_direct) -> _Program: PATH and PATH.quant.json when present */
static PyObject *mod_load(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *path;
    unsigned int threads = 0;
    int conv_direct = 0;
    if (!PyArg_ParseTuple(args, "O&|Ip", PyUnicode_FSConverter, &path, &threads, &conv_direct)) return NULL;
    tosac_diag *d = tosac_diag_create();
    tosac_compiled *c = NULL;
    tosac_status s;
    Py_BEGIN_ALLOW_THREADS
    s = tosac_compiled_read(PyBytes_AS_STRING(path), &c, d);
    Py_END_ALLOW_THREADS
    PyObject *r = s == TOSAC_OK ? program_new(c, PyBytes_AS_STRING(path), threads, conv_direct != 0) : raise_error(s, d, PyBytes_AS_STRING(path));
    tosac_diag_destroy(d);
    Py_DECREF(path);
    return r;
}

/* Reads a .tosa file for validate/inspect; NULL with tosac.Error raised. */
static tosac_graph *read_graph(const char *path)
{
    tosac_diag *d = tosac_diag_create();
    tosac_graph *g = NULL;
    tosac_status s;
    Py_BEGIN_ALLOW_THREADS
    s = tosac_tosa_read_file(path, NULL, &g, d);
    Py_END_ALLOW_THREADS
    if (s != TOSAC_OK) {
        raise_error(s, d, path);
        g = NULL;
    }
    tosac_diag_destroy(d);
    return g;
}

/* validate(path, profiles, extensions, level) -> (status name, [(kind, message)]) */
static PyObject *mod_validate(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *path;
    tosac_validate_opts o;
    unsigned level;
    if (!PyArg_ParseTuple(args, "O&III", PyUnicode_FSConverter, &path, &o.profiles, &o.extensions, &level)) return NULL;
    o.level = level ? TOSAC_LEVEL_8K : TOSAC_LEVEL_NONE;
    tosac_graph *g = read_graph(PyBytes_AS_STRING(path));
    Py_DECREF(path);
    if (!g) return NULL;
    tosac_diag *d = tosac_diag_create();
    tosac_status s;
    Py_BEGIN_ALLOW_THREADS
    s = tosac_validate(g, &o, d);
    Py_END_ALLOW_THREADS
    tosac_graph_destroy(g);
    size_t n = tosac_diag_count(d);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t k = 0; list && k < n; k++) {
        tosac_status code = TOSAC_OK;
        const char *m = tosac_diag_message(d, k, &code);
        const char *kind = code == TOSAC_OK ? "note" : code == TOSAC_ERR_UNPREDICTABLE ? "unpredictable" : "error";
        PyObject *t = Py_BuildValue("(ss)", kind, m);
        if (!t) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)k, t);
    }
    tosac_diag_destroy(d);
    return list ? Py_BuildValue("(sN)", s == TOSAC_OK ? "valid" : tosac_status_str(s), list) : NULL;
}

/* inspect(path) -> JSON text */
static PyObject *mod_inspect(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *path;
    if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path)) return NULL;
    tosac_graph *g = read_graph(PyBytes_AS_STRING(path));
    Py_DECREF(path);
    if (!g) return NULL;
    char *text = tosac_inspect_json(g);
    tosac_graph_destroy(g);
    if (!text) return PyErr_NoMemory();
    PyObject *r = PyUnicode_FromString(text);
    tosac_string_free(text);
    return r;
}

/* extension_bit(name) -> mask bit, 0 when unknown */
static PyObject *mod_extension_bit(PyObject *mod, PyObject *args)
{
    (void)mod;
    const char *name;
    if (!PyArg_ParseTuple(args, "s", &name)) return NULL;
    return PyLong_FromUnsignedLong(tosac_ext_from_name(name));
}

static PyMethodDef mod_methods[] = {
    {"compile", mod_compile, METH_VARARGS, "compile(model, name, options) -> _Program"},
    {"load", mod_load, METH_VARARGS, "load(path) -> _Program"},
    {"validate", mod_validate, METH_VARARGS, "validate(path, profiles, extensions, level) -> (status, findings)"},
    {"inspect", mod_inspect, METH_VARARGS, "inspect(path) -> JSON text"},
    {"extension_bit", mod_extension_bit, METH_VARARGS, "extension_bit(name) -> mask bit (0: unknown)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "tosac._tosac", "Binding of the tosac C API (use the tosac package).", -1, mod_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__tosac(void)
{
    if (PyType_Ready(&ProgramType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Error = PyErr_NewExceptionWithDoc("tosac.Error",
                                      "A tosac call failed; .messages holds tosac's diagnostics (file, node, reason), "
                                      ".status the kind of failure.",
                                      NULL, NULL);
    if (!Error || PyModule_AddObjectRef(m, "Error", Error) < 0 ||
        PyModule_AddObjectRef(m, "_Program", (PyObject *)&ProgramType) < 0 ||
        PyModule_AddIntConstant(m, "PROFILE_INT", TOSAC_PROFILE_INT) < 0 ||
        PyModule_AddIntConstant(m, "PROFILE_FP", TOSAC_PROFILE_FP) < 0 ||
        PyModule_AddIntConstant(m, "EXT_ALL", TOSAC_EXT_ALL) < 0 ||
        PyModule_AddIntConstant(m, "EXT_DYNAMIC", TOSAC_EXT_DYNAMIC) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
