/*
 * INT8 post-training quantization: FP TOSA graph -> TOSA-1.0+INT graph (docs/QUANT.md).
 *
 * tosac_quantize() works on the FP32 program tosac_onnx_compile() produces (NHWC, BatchNorm
 * folded, softmax and norms decomposed) in steps, each its own file in src/quant/:
 *   calibrate.c  runs the FP program on tosac's runtime over the calibration samples and records
 *                the min/max of every FP value (an op callback observes each result while it is
 *                live); deterministic;
 *   qparams.c    chooses quantization parameters with PyTorch PT2E's rules: asymmetric int8
 *                activations, symmetric per-output-channel int8 weights, int32 bias at
 *                s_in*s_w[c], RESCALE multiplier/shift via frexp (ExecuTorch's Arm backend);
 *   table.c      builds the 256-entry TABLE of a single-input elementwise subgraph by running that
 *                FP subgraph through the runtime on the 256 dequantized int8 codes;
 *   lower.c      writes the integer graph with the ExecuTorch Arm backend's lowering rules;
 *   target.c     rewrites the integer graph into the forms a target asks for (TOSAC_LOWER_*);
 *   build.c      the builders every step shares (FP constants and attributes in, integer
 *                constants and RESCALEs out, validation); they call no step;
 *   report.c     (optional) runs the FP and the INT program on the calibration data and measures
 *                the SQNR of every quantized value (tosac_quantize_report).
 * The result passes tosac_validate for PRO-INT. What cannot be lowered is an error naming the
 * operator and its ONNX node; nothing falls back to floating point.
 */
#ifndef TOSAC_QUANT_H
#define TOSAC_QUANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tosac/graph.h"
#include "tosac/npy.h"
#include "tosac/runtime.h"
#include "tosac/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Affine int8 quantization: real = scale * (q - zero_point). */
typedef struct tosac_qparams {
    double scale;
    int32_t zero_point;
} tosac_qparams;

/** Smallest scale chosen for activations and weights (PT2E's eps for int8 configs). */
#define TOSAC_QUANT_EPS (1.0 / 65536.0)

/**
 * RESCALE multiplier/shift (scale32) for a positive real scale, as ExecuTorch's Arm backend
 * computes them: frexp(scale) = mant*2^exp, m = round_half_even(mant*2^31); m == 2^31 is halved
 * with exp+1; shift = 31 - exp; a shift above 62 shifts m right and is capped at 62.
 * @return false when scale is not a positive finite number or the shift is below 2 (scale >= 2^29).
 */
bool tosac_quant_multiplier(double scale, int32_t *multiplier, int32_t *shift);

/** Asymmetric int8 activation q-params from an observed range ([-128,127], PT2E minmax). */
tosac_qparams tosac_quant_choose_act(double min, double max);
/** Smallest int16 activation scale (--a16w8). ExecuTorch's a16w8 config uses 2^-12, which would
    make an int16 step coarser than an int8 one for ranges below ~8; this keeps int16 finer. */
#define TOSAC_QUANT_EPS16 (1.0 / 16777216.0)
/** Symmetric int16 activation q-params (--a16w8): zp 0, scale = max(|min|, |max|)/32767, codes
    [-32767, 32767] (ExecuTorch's get_symmetric_a16w8_quantization_config). */
tosac_qparams tosac_quant_choose_act16(double min, double max);
/**
 * RESCALE multiplier/shift for scale32 = false (a 16-bit multiplier, required for INT48 inputs):
 * frexp(scale) = mant*2^exp, m = round_half_even(mant*2^15); m == 2^15 is halved with exp+1;
 * shift = 15 - exp; a shift above 62 shifts m right and is capped at 62.
 * @return false when scale is not a positive finite number or the shift is below 2.
 */
bool tosac_quant_multiplier16(double scale, int32_t *multiplier, int32_t *shift);
/** Symmetric int8 weight scale from a channel's absolute maximum ([-127,127], zp 0). */
double tosac_quant_choose_weight(double absmax);
/** clamp(round_half_even(x / scale) + zp, lo, hi); NaN gives zp. */
int32_t tosac_quant_quantize(double x, tosac_qparams q, int32_t lo, int32_t hi);
/** scale * (q - zp). */
double tosac_quant_dequantize(int32_t q, tosac_qparams q_params);

/** What a quantized program's graph inputs and outputs hold (`--io`, docs/QUANT.md). */
typedef enum tosac_quant_io_type {
    TOSAC_QUANT_IO_INT8 = 0, /**< INT8 codes at q */
    TOSAC_QUANT_IO_UINT8,    /**< uint8 codes at q (zero point 0..255) in an INT8 tensor; the graph's first
                                  and last RESCALEs carry input_unsigned / output_unsigned */
    TOSAC_QUANT_IO_FLOAT32,  /**< FP32; the program quantizes / dequantizes at q with FP operators */
    TOSAC_QUANT_IO_INT16,    /**< INT16 codes at q, zero point 0 (--a16w8) */
    TOSAC_QUANT_IO_INT32,    /**< INT32 values as they are, not quantized (token ids: an integer input of the
                                  model stays integer; q is scale 1, zero point 0) */
} tosac_quant_io_type;

/** "int8", "uint8", "float32", "int16" or "int32" (the sidecar's dtype). */
const char *tosac_quant_io_type_name(tosac_quant_io_type t);
/** The codes of an I/O type: [-128, 127] (int8, and the int8 codes inside a float32 boundary),
    [0, 255] (uint8), [-32767, 32767] (int16, symmetric). */
void tosac_quant_io_range(tosac_quant_io_type t, int32_t *lo, int32_t *hi);
/** Quantizes `count` float32 (f64 false) or float64 values at `data` (little-endian, any
    alignment) to the codes of type `t` at q (round half to even, saturating; NaN gives the zero
    point), written little-endian into `out`: 1 byte a code, 2 for INT16. Returns how many were
    NaN. What `tosac run` and the Python package do with float inputs of a quantized program. */
size_t tosac_quant_io_quantize(tosac_quant_io_type t, tosac_qparams q, const void *data, bool f64, size_t count,
                               uint8_t *out);

/** One graph input or output of a quantized program: its float <-> integer mapping. */
typedef struct tosac_quant_io {
    const char *name;
    tosac_quant_io_type type;
    tosac_qparams q; /**< real = scale * (code - zero_point), codes of `type` (FP32: the int8 codes inside) */
    int32_t rank;
    int64_t shape[8];
} tosac_quant_io;

/** Whether a program tensor of type `t` holds the integer codes of its sidecar entry `q` (NULL: no
    entry; a FLOAT32 entry: the program quantizes itself). */
bool tosac_quant_io_holds_codes(const tosac_quant_io *q, tosac_dtype t);
/**
 * Converts `npy` into the TOSA encoding of the program input `info`, as `tosac run` reads a .npy
 * file: shapes equal up to size-1 dimensions; for an input holding the codes of sidecar entry `q`,
 * float32/float64 data is quantized with it (the count of NaNs, which became the zero point, added
 * to *nans) and int8/uint8 data of the entry's signedness is taken as codes; anything else goes
 * through tosac_npy_to_tosa. `label` names the data and the tensor in messages ("x.npy for input
 * 'x'", "the array for input 'x'"), `what` the kind of tensor ("input", "variable"). On success *bytes (free with tosac_free(*bytes,
 * *n)) holds *n bytes.
 */
tosac_status tosac_quant_input_bytes(const tosac_npy *npy, const tosac_tensor_info *info, const tosac_quant_io *q,
                                     const char *label, const char *what, uint8_t **bytes, size_t *n, size_t *nans,
                                     tosac_diag *d);

/** The I/O mapping of a quantized program (the `.quant.json` sidecar, docs/QUANT.md). */
typedef struct tosac_quant_iomap {
    uint32_t n_inputs, n_outputs;
    tosac_quant_io *inputs, *outputs;
    /** The program the mapping belongs to: size and FNV-1a 64 hash of its .tosa file (the
        sidecar's "program"; program_bytes 0: not recorded). `tosac run` refuses a mismatch. */
    uint64_t program_bytes, program_fnv1a64;
    /** In memory only (tosac_quantize fills it; the sidecar does not carry it): the q-params the
        quantizer chose for the int8/int16 tensors of the INT program that hold a quantized FP
        value, by tensor name (type INT8 or INT16, the program's own codes). The Ethos-U artifact
        states segment boundaries with them (docs/TARGETS.md). */
    uint32_t n_tensors;
    tosac_quant_io *tensors;
} tosac_quant_iomap;

void tosac_quant_iomap_free(tosac_quant_iomap *m);
/** Writes the sidecar JSON. */
tosac_status tosac_quant_iomap_write(const tosac_quant_iomap *m, const char *path, tosac_diag *d);
/** Reads a sidecar written by tosac_quant_iomap_write (TOSAC_ERR_IO when the file is missing). */
tosac_status tosac_quant_iomap_read(const char *path, tosac_quant_iomap **out, tosac_diag *d);

/** How an activation's range is chosen from what calibration observed (docs/QUANT.md). */
typedef enum tosac_quant_calib_method {
    TOSAC_QUANT_CALIB_MINMAX = 0, /**< the observed min/max (PT2E MinMaxObserver) */
    TOSAC_QUANT_CALIB_PERCENTILE, /**< the 0.01th / 99.99th percentiles of every observed value */
    TOSAC_QUANT_CALIB_MSE,        /**< the range minimising the quantization MSE over the histogram */
} tosac_quant_calib_method;

/** Parses "minmax", "percentile" or "mse"; false for anything else. */
bool tosac_quant_calib_method_parse(const char *s, tosac_quant_calib_method *out);
const char *tosac_quant_calib_method_name(tosac_quant_calib_method m);

/*
 * The calibration histogram of one value (percentile and mse): bins on a log scale, 32 per
 * octave for |x| in [2^-24, 2^24) on each side of zero (|x| below 2^-24 counts as 0, above as the
 * last bin), ascending in value: bin TOSAC_QUANT_HIST_ZERO holds 0, bins above it x > 0, below
 * it x < 0. A log scale needs no range known in advance (one calibration pass) and keeps a
 * relative resolution of 1/32 of an octave (about 2%) wherever the clipping point lands.
 */
#define TOSAC_QUANT_HIST_SUB 32
#define TOSAC_QUANT_HIST_OCTAVES 48
#define TOSAC_QUANT_HIST_SIDE (TOSAC_QUANT_HIST_SUB * TOSAC_QUANT_HIST_OCTAVES)
#define TOSAC_QUANT_HIST_ZERO TOSAC_QUANT_HIST_SIDE
#define TOSAC_QUANT_HIST_BINS (2 * TOSAC_QUANT_HIST_SIDE + 1)
/** The bin of x (NaN: TOSAC_QUANT_HIST_BINS, i.e. none). */
uint32_t tosac_quant_hist_bin(float x);
/** The value interval [*lo, *hi) of a bin (the zero bin: [0, 0]; negative bins: lo < hi < 0). */
void tosac_quant_hist_edges(uint32_t bin, double *lo, double *hi);
/**
 * The clipping range [*lo, *hi] a method picks from a histogram (TOSAC_QUANT_HIST_BINS counts)
 * and the exact observed min/max (the result stays inside them; minmax returns them):
 *   percentile: the values at ranks 0.0001*N and 0.9999*N, interpolated linearly in their bin;
 *   mse: the pair of bin edges minimising E = sum over bins of count * e(center), e = (center -
 *        clamp(center))^2 outside the range, ((hi-lo)/255)^2/12 inside (0 for the zero bin: zero
 *        is exact), by coordinate descent from (min, max) (alternately the best hi for the current
 *        lo and the best lo for that hi, until neither moves). Deterministic.
 */
void tosac_quant_hist_range(const uint64_t *hist, tosac_quant_calib_method m, double min, double max, double *lo,
                            double *hi);
/** tosac_quant_hist_range for int16 (--a16w8) when int16 is set: percentile cuts the
    TOSAC_QUANT_PERCENTILE_TAIL16 tails instead of 0.0001 (a 256x finer step makes clipping the
    dearer side of the trade; the value was picked from the zoo measurements in docs/QUANT.md),
    and mse's in-range error uses the symmetric int16 step max(-lo, hi)/32767 instead of
    (hi-lo)/255. */
#define TOSAC_QUANT_PERCENTILE_TAIL16 3e-5
void tosac_quant_hist_range16(const uint64_t *hist, tosac_quant_calib_method m, bool int16, double min, double max,
                              double *lo, double *hi);
/** The error E above of the range [lo, hi] (exposed for the tests). */
double tosac_quant_hist_mse(const uint64_t *hist, double lo, double hi);

/**
 * Lowering choices a target asks for (src/target/ sets them per target; TOSA-1.0+INT sets none;
 * `tosac compile --lowering LIST` sets them by name). Each keeps the integer results of the
 * default lowering unless its line says otherwise (docs/QUANT.md, "Target lowering"). Where a bit
 * is set but its pattern does not match, the default lowering stays.
 * X(NAME, bit, "cli-name", "what it produces")
 */
#define TOSAC_QUANT_LOWERINGS(X)                                                                                      \
    X(FC_AS_CONV2D, 0, "fc-as-conv2d", "Gemm/MatMul with constant weights: CONV2D 1x1 between RESHAPEs, not MATMUL")  \
    X(GAP_AS_POOL, 1, "gap-as-pool",                                                                                   \
      "global average pool: one DEPTHWISE_CONV2D of ones (AVG_POOL2D where the kernel exceeds ky 64 or kx*ky 4096), "  \
      "not REDUCE_SUM over H then W")                                                                                  \
    X(CONCAT_DIRECT, 2, "concat-direct",                                                                               \
      "CONCAT inputs quantized straight to the CONCAT's q-params; RESCALE chains folded where exact")                 \
    X(RESIZE_HALF_PIXEL, 3, "resize-half-pixel", "RESIZE nearest in the half-pixel encoding (offset -(n/2-1))")       \
    X(NO_INT16_MATMUL, 4, "no-int16-matmul", "int16 MATMUL with constant weights as CONV2D 1x1 (i16 x i8 -> i48)")    \
    X(GATHER_CONST_AS_SLICE, 5, "gather-const-as-slice", "GATHER with constant indices: SLICEs (and a CONCAT)")       \
    X(DILATED_CENTER, 6, "dilated-center", "a dilated convolution whose every tap but one reads padding: the 1x1")    \
    X(UPSAMPLE_1X1_BROADCAST, 7, "upsample-1x1-broadcast", "RESIZE of a 1x1 map: TILE (nearest), RESCALE+ADD (bilinear)") \
    X(ADD_FUSABLE_SCALES, 8, "add-fusable-scales",                                                                     \
      "ADD/SUB of two inputs at the same scale: widened by 1, the common 2^19 in the output RESCALE's shift")          \
    X(ADD16_SHIFT14, 9, "add16-shift14",                                                                               \
      "int16 ADD/SUB: the larger input scale widened by exactly 2^14 (U55's advanced input scaling), not 2^11")

typedef enum tosac_quant_lowering {
#define TOSAC_QUANT_LOWER_ENUM_(name, bit, cli, what) TOSAC_LOWER_##name = 1u << (bit),
    TOSAC_QUANT_LOWERINGS(TOSAC_QUANT_LOWER_ENUM_)
#undef TOSAC_QUANT_LOWER_ENUM_
} tosac_quant_lowering;

/** Every TOSAC_LOWER_* bit. */
#define TOSAC_QUANT_LOWER_OR_(name, bit, cli, what) | (1u << (bit))
#define TOSAC_LOWER_ALL (0u TOSAC_QUANT_LOWERINGS(TOSAC_QUANT_LOWER_OR_))

/** The CLI name of one TOSAC_LOWER_* bit ("fc-as-conv2d"), or NULL. */
const char *tosac_quant_lowering_name(uint32_t bit);
/** What one bit produces (the table's last column), or NULL. */
const char *tosac_quant_lowering_what(uint32_t bit);
/** Parses a comma-separated list of names, "all" and "none" (left to right: "all,none" is none).
    False with *bad pointing at the first unknown name (its length in *bad_len). */
bool tosac_quant_lowering_parse(const char *list, uint32_t *bits, const char **bad, size_t *bad_len);

/** Calibration progress: called on the calling thread after a sample; when samples run side by side
    on several threads (tosac_quant_opts.threads) the counts may skip values, the last is the total. */
typedef void (*tosac_quant_progress_fn)(void *user, uint32_t done, uint32_t total);

typedef struct tosac_quant_opts {
    /** Calibration samples: data[s * n_inputs + i] holds the FP32 values (C order, the FP graph
        input's shape) of graph input i in sample s. */
    uint32_t n_samples;
    const float *const *data;
    /** Instead of data: this many seeded pseudo-random samples (standard normal). */
    uint32_t n_random;
    uint64_t seed;
    tosac_quant_progress_fn progress; /**< optional */
    void *progress_user;
    /** Activation ranges: minmax (0) unless set. */
    tosac_quant_calib_method method;
    /** One weight scale per tensor (absmax over the whole tensor) instead of per output channel. */
    bool per_tensor;
    /** Graph input/output tensors: INT8 (default, the float mapping in the sidecar), UINT8 (INT8
        tensors holding uint8 codes, converted by RESCALEs with the unsigned flags) or FLOAT32 (the
        quantize and dequantize inside the program as FP operators: needs an INT+FP target). */
    tosac_quant_io_type io;
    /** When set: also write the FP program with the chosen q-params as QuantizeLinear/
        DequantizeLinear nodes to this ONNX file (docs/QUANT.md, --emit-qdq). */
    const char *emit_qdq;
    /** int16 symmetric activations, int8 weights, INT48 accumulators: the result needs EXT-INT16
        (TOSA-1.0+INT+int16) and is validated with it. */
    bool a16w8;
    /** TOSAC_LOWER_* bits: lowering choices of the target (0: the default lowering). */
    uint32_t lowering;
    /** The SQNR report runs on at most this many of the samples (0: all of them). */
    uint32_t report_samples;
    /** Threads of the calibration and report runs and of the statistics
        (tosac_program_opts.threads: 0 = the online processors). The program is the same bytes
        for every count. */
    uint32_t threads;
    /** Bytes the calibration may keep of the FP values of the report's first samples, so that the
        report need not run the FP program on them again (0: 256 MB). The report is the same for
        every bound. */
    size_t report_keep_bytes;
} tosac_quant_opts;

/** One quantized value of the FP graph in the SQNR report. */
typedef struct tosac_quant_layer {
    const char *name;      /**< the FP value (tensor) name */
    const char *op;        /**< the FP operator that produces it (TOSA name) */
    const char *onnx_node; /**< its ONNX node, or NULL */
    uint32_t index;        /**< its position among the FP graph's tensors (graph order) */
    bool int32;            /**< compared in its int32 (or INT48) form (it has no int8 form: consumed wider) */
    bool int16;            /**< its activation form is INT16 (--a16w8) */
    tosac_qparams q;       /**< int8 q-params (int32 form: the real scale of channel 0, zp 0) */
    uint64_t n;            /**< elements compared over all samples */
    double signal, noise;  /**< sum of fp^2 and of (fp - dequantized int)^2 over all samples */
    double sqnr_db;        /**< tosac_quant_sqnr_db(signal, noise) */
} tosac_quant_layer;

/** One graph output of the quantized program as users see it (dequantized), against the FP one. */
typedef struct tosac_quant_output {
    const char *name;
    double sqnr_db;
    bool int_constant; /**< the INT program gave one value for every element of every sample */
    bool fp_constant;  /**< so did the FP program (then a constant INT output is no loss) */
    double int_value;  /**< that value, when int_constant */
} tosac_quant_output;

/** Per-layer SQNR between FP and INT execution on the calibration data, worst layer first. */
typedef struct tosac_quant_report {
    uint32_t n_samples;
    uint32_t n_layers;
    tosac_quant_layer *layers;
    double output_sqnr_db; /**< over all graph outputs together */
    uint32_t n_outputs;    /**< the FP32 outputs compared, in program order */
    tosac_quant_output *outputs;
} tosac_quant_report;

/** 10*log10(signal/noise); +INFINITY when noise is 0 (and signal > 0), 0 when both are 0. */
double tosac_quant_sqnr_db(double signal, double noise);
void tosac_quant_report_free(tosac_quant_report *r);
/** Writes the report as JSON (format in docs/QUANT.md); an infinite SQNR is written as null. */
tosac_status tosac_quant_report_write_json(const tosac_quant_report *r, const char *path, tosac_diag *d);

/**
 * Quantizes the FP graph `fp` (block "main" of its first region, FP32 values) into a new INT8
 * graph `*out` valid for TOSA-1.0+INT (+FP with o->io FLOAT32), and the mapping of its inputs and
 * outputs `*io`.
 * @return TOSAC_OK; TOSAC_ERR_UNSUPPORTED naming the operator and its ONNX node for what cannot
 *         be lowered; TOSAC_ERR_INVALID_ARG for missing calibration data; TOSAC_ERR_NOMEM;
 *         TOSAC_ERR_INTERNAL when the produced graph does not validate.
 */
tosac_status tosac_quantize(const tosac_graph *fp, const tosac_quant_opts *o, tosac_graph **out,
                            tosac_quant_iomap **io, tosac_diag *d);
/**
 * True when the FP graph holds QuantizeLinear/DequantizeLinear pairs of a pre-quantized (QDQ)
 * model: tosac_quantize then takes their scales and zero points and needs no calibration data
 * (values they leave open are calibrated when data is given, else refused by name).
 */
bool tosac_quant_has_qdq(const tosac_graph *fp);

/**
 * tosac_quantize, then (report != NULL) the SQNR report: the FP and the INT program run on the
 * same calibration samples (the INT one on them quantized with the input q-params) and every FP
 * value with an integer form in the INT graph (except pure data movement, which adds no error) is
 * compared with that form dequantized. Costs one more FP and one INT inference per sample, and
 * memory for the integer values of one inference.
 */
tosac_status tosac_quantize_report(const tosac_graph *fp, const tosac_quant_opts *o, tosac_graph **out,
                                   tosac_quant_iomap **io, tosac_quant_report **report, tosac_diag *d);

/**
 * The int8 TABLE of y = f(x) for a single-input elementwise subgraph: entry[q + 128] =
 * quantize(f(dequantize(q, in)), out) for q in -128..127, with f evaluated by `eval` on the 256
 * dequantized values (in order). Used by the lowering and the unit tests.
 */
typedef tosac_status (*tosac_quant_eval_fn)(void *user, const float *x, float *y, uint32_t n, tosac_diag *d);
tosac_status tosac_quant_table_int8(tosac_qparams in, tosac_qparams out, tosac_quant_eval_fn eval, void *user,
                                    int8_t table[256], tosac_diag *d);
/**
 * The int16 TABLE (513 entries, EXT-INT16) of y = f(x): entry[i + 256] = clamp(round_half_even(
 * f(clamp(dequantize(128 * i, in), lo, hi)) / out.scale), -32768, 32767) for i in -256..256 (the
 * last entry samples the input code 32768, one past the int16 range: TOSA interpolates towards
 * it). [lo, hi] is the calibrated input range: the symmetric int16 codes also cover values never
 * seen (a reciprocal's negative inputs), and holding f constant there keeps it free of the jumps
 * TOSA's slope limit forbids. TABLE then gives an int32 at out.scale / 128. *ok is false when two
 * neighbours differ by more than 32767 (the slope REQUIRE): the caller retries with a coarser
 * out.scale.
 */
tosac_status tosac_quant_table_int16(tosac_qparams in, tosac_qparams out, double lo, double hi,
                                     tosac_quant_eval_fn eval, void *user, int16_t table[513], bool *ok,
                                     tosac_diag *d);

#ifdef __cplusplus
}
#endif
#endif
