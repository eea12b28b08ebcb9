/*
 * One library call for everything `tosac compile` does: ONNX import, the pass pipeline,
 * calibration-data loading, quantization with the I/O options, and writing the program with its
 * sidecar. The `tosac` command, C applications and the Python package (python/, docs/PYTHON.md)
 * share this path.
 *
 *   tosac_driver_opts o = tosac_driver_opts_default();
 *   o.target = "TOSA-1.0+INT";
 *   o.n_calib_sources = 1; o.calib_sources = (const char *[]){"imgs/"};
 *   tosac_compiled *c;
 *   if (tosac_driver_compile_file("model.onnx", &o, &c, d) == TOSAC_OK) {
 *       tosac_compiled_write(c, "model.tosa", d);   // model.tosa + model.tosa.quant.json
 *       tosac_compiled_destroy(c);
 *   }
 *
 * Targets are looked up with tosac_target_lookup: TOSA-1.0+... strings and devices (ethos-u55-128,
 * cortex-m55, ...; `tosac targets`). A device target quantizes with its lowering choices and
 * partitions the program into NPU and CPU segments (tosac_compiled_artifact, docs/TARGETS.md).
 * TOSA-1.0+INT (no +FP) always quantizes; +INT+FP
 * quantizes when calibration data is given (with float I/O inside the program unless io is INT8 /
 * UINT8 or preserve_io is set); otherwise the result is the FP program. A QDQ model brings its
 * own scales and needs no calibration data.
 */
#ifndef TOSAC_DRIVER_H
#define TOSAC_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tosac/compile.h"
#include "tosac/graph.h"
#include "tosac/onnx.h"
#include "tosac/quant.h"
#include "tosac/status.h"
#include "tosac/target.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The I/O of a quantized program (`tosac compile --io`). */
typedef enum tosac_driver_io {
    TOSAC_DRIVER_IO_FLOAT = 0, /**< float32 I/O: inside the program on an INT+FP target, else INT8 tensors
                                    with the float mapping in the sidecar */
    TOSAC_DRIVER_IO_INT8,      /**< INT8 tensors, the float mapping in the sidecar */
    TOSAC_DRIVER_IO_UINT8,     /**< INT8 tensors holding uint8 codes (docs/QUANT.md) */
} tosac_driver_io;

/**
 * Calibration samples of one graph input held in memory: `count` floats, a positive multiple of
 * the input's element count (one sample after another, each in C order and in the FP program's
 * input layout, NHWC with io_nhwc). Several arrays for one input append samples in order.
 */
typedef struct tosac_driver_calib_array {
    const char *input; /**< graph input name; NULL for the only input of a one-input model */
    const float *data;
    size_t count;
} tosac_driver_calib_array;

typedef struct tosac_driver_opts {
    /** "TOSA-1.0+FP" (NULL), "TOSA-1.0+INT", "TOSA-1.0+INT+int16", ... (tosac_target_parse). */
    const char *target;
    size_t n_shapes;
    const tosac_compile_shape *shapes; /**< static input shapes (`--input-shape`) */
    size_t n_bindings;
    const tosac_compile_binding *bindings; /**< inputs made constants (`--bind`) */
    /** Values the caller holds for graph inputs (`tosac run`'s -i files). An input the model leaves
        symbolic dims for (and no shape names) takes them from its value; an input the compile
        needs as a constant (a shape, axes, weights, pads...: what a "--bind" hint names) is bound
        to its value and the model compiled again. The others stay program inputs
        (tosac_compiled_bound tells which were bound). Values of other names are an error. */
    size_t n_feeds;
    const tosac_compile_binding *feeds;
    bool io_nhwc;                          /**< rank-4 graph inputs/outputs in NHWC (`--io-layout nhwc`) */
    bool verify_each;                      /**< validate after every pass (`--verify-each`) */
    const char *dump_after;                /**< `--dump-after` step name or "all"; needs dump */
    tosac_compile_dump_fn dump;
    void *dump_ctx;

    /* Calibration data (quantized targets): arrays, .npy sources and random samples. Samples pair
       up by position across inputs (sample s is the s-th of every input), so every input needs
       the same number. Non-finite values are an error naming their source. */
    size_t n_calib_arrays;
    const tosac_driver_calib_array *calib_arrays;
    /** .npy files (one sample each, or a batch with a leading sample dimension; float32) and
        directories of .npy files (taken in name order); NAME=SOURCE for one input of a
        multi-input model (a one-input model also takes plain paths). */
    size_t n_calib_sources;
    const char *const *calib_sources;
    /** This many seeded standard-normal samples instead of data (`--calibrate random`). */
    uint32_t calib_random;
    /** At most this many samples per input from arrays and sources (0: no cap). */
    uint32_t calib_samples;
    tosac_quant_calib_method calib_method; /**< default (opts_default): percentile */
    bool per_tensor;                       /**< one weight scale per tensor */
    bool a16w8;                            /**< int16 activations (needs +int16 in the target) */
    tosac_driver_io io;
    bool preserve_io; /**< INT+FP with float io: keep the I/O quantization out of the program */
    /** TOSAC_LOWER_* bits when lowering_given; otherwise the target's own (none for TOSA-1.0+INT,
        the Vela-ready set for Ethos-U targets: tosac targets). */
    uint32_t lowering;
    bool lowering_given;
    const char *emit_qdq; /**< also write the quantized FP graph as QDQ ONNX to this file */
    bool report;          /**< measure the per-layer SQNR report (one more FP and INT run per sample) */
    /** Threads of the calibration runs (tosac_quant_opts.threads; 0 = the online processors):
        the same program for every count. */
    uint32_t threads;
    tosac_quant_progress_fn progress; /**< calibration progress, optional */
    void *progress_user;
    /** Called with every file the compile reads besides the model (external data, calibration
        files), before it is read: `tosac compile` refuses to write over any of them. Optional;
        an error status stops the compile. */
    tosac_status (*on_input)(void *user, const char *path, tosac_diag *d);
    void *on_input_user;
} tosac_driver_opts;

/** Everything off, target NULL (FP), calib_method percentile (the best on the zoo, docs/QUANT.md). */
tosac_driver_opts tosac_driver_opts_default(void);

/** The result of a compilation: the program and what produced it. */
typedef struct tosac_compiled tosac_compiled;

/**
 * Compiles the ONNX model at `path` (external data relative to its directory) as
 * `tosac compile` does. Options are checked before the model is read; every error adds a
 * message naming the file, input, node or option and the reason.
 * @return TOSAC_OK with *out set; TOSAC_ERR_INVALID_ARG for contradicting options or unusable
 *         calibration data; the reader's, compiler's or quantizer's status otherwise.
 */
tosac_status tosac_driver_compile_file(const char *path, const tosac_driver_opts *o, tosac_compiled **out,
                                       tosac_diag *d);
/** The same for an ONNX model held in memory (`name` labels messages; no external data). */
tosac_status tosac_driver_compile_mem(const void *onnx, size_t len, const char *name, const tosac_driver_opts *o,
                                      tosac_compiled **out, tosac_diag *d);

/** The program to run or write (the quantized one, or the FP one when nothing was quantized). */
const tosac_graph *tosac_compiled_program(const tosac_compiled *c);
/** The FP program quantization started from (the program itself when not quantized; NULL for a
    program read with tosac_compiled_read). */
const tosac_graph *tosac_compiled_fp_graph(const tosac_compiled *c);
/** The float <-> integer mapping of the program's I/O (the sidecar); NULL when not quantized. */
const tosac_quant_iomap *tosac_compiled_iomap(const tosac_compiled *c);
/** The per-layer SQNR report; NULL unless opts.report was set and the model was quantized. */
const tosac_quant_report *tosac_compiled_quant_report(const tosac_compiled *c);
/** What the pass pipeline did (op counts, steps and their times). */
const tosac_compile_report *tosac_compiled_report(const tosac_compiled *c);
/** The ONNX model that was compiled (NULL for a program read with tosac_compiled_read). */
const tosac_onnx_model *tosac_compiled_onnx_model(const tosac_compiled *c);

/** The device target's partitioned program (NPU and CPU segments, manifest, partition report:
    include/tosac/target.h); NULL for TOSA-1.0+... targets. Owned by `c`. */
const tosac_artifact *tosac_compiled_artifact(const tosac_compiled *c);
/** The device the program was compiled for; NULL for TOSA-1.0+... targets. */
const tosac_target_info *tosac_compiled_device(const tosac_compiled *c);

/** True when graph input `name` was bound to its value in tosac_driver_opts.feeds (it is no
    input of the program). */
bool tosac_compiled_bound(const tosac_compiled *c, const char *name);

/** Wall times of the stages, milliseconds. */
typedef struct tosac_driver_times {
    double read_ms, compile_ms, quantize_ms;
} tosac_driver_times;
const tosac_driver_times *tosac_compiled_times(const tosac_compiled *c);

/**
 * Writes the program to `path` and, for a quantized program, its sidecar PATH.quant.json (a device
 * target's artifact is written with tosac_artifact_write, this writes its unpartitioned program); for an
 * FP program a PATH.quant.json left there by an earlier quantized one is removed (it describes
 * another program). The .tosa is written through a temporary file; when the sidecar cannot be
 * written the .tosa is removed again, so no half of the pair is left.
 */
tosac_status tosac_compiled_write(const tosac_compiled *c, const char *path, tosac_diag *d);

/**
 * A program written before: reads PATH (a .tosa file) and PATH.quant.json when it exists. The
 * result has no FP graph, ONNX model or reports (those accessors give NULL, or an empty compile
 * report and zero times).
 */
tosac_status tosac_compiled_read(const char *path, tosac_compiled **out, tosac_diag *d);

void tosac_compiled_destroy(tosac_compiled *c);

#ifdef __cplusplus
}
#endif
#endif
