/*
 * Deployment targets (Ethos-U NPUs, Cortex-M CPUs, plain TOSA), their operator rules, the NPU/CPU
 * partitioner and the artifact it writes (docs/TARGETS.md).
 *
 *   quantized INT program ─► tosac_artifact_partition: every operator placed on the NPU or the
 *   CPU by the target's rule table (src/target/rules.def, each rule citing ETHOS_U.md), grouped
 *   into segments (NPU segments: PRO-INT 8K programs Vela accepts whole; CPU segments: programs
 *   for tosac's runtime) ─► tosac_artifact_write: DIR/manifest.json + one .tosa per segment +
 *   partition_report.{txt,json} ─► tosac_artifact_read / tosac_artifact_run (a hook per NPU
 *   segment; the default runs it on tosac's runtime as a functional stand-in for the NPU).
 */
#ifndef TOSAC_TARGET_H
#define TOSAC_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tosac/graph.h"
#include "tosac/quant.h"
#include "tosac/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Which operator rule set decides NPU placement. */
typedef enum tosac_rule_set {
    TOSAC_RULES_NONE = 0, /**< no NPU: everything runs on the CPU (Cortex-M) or nothing is partitioned (TOSA) */
    TOSAC_RULES_U55 = 1,  /**< Ethos-U55 and U65 (Vela's U55 constraint class) */
    TOSAC_RULES_U85 = 2,  /**< Ethos-U85 */
} tosac_rule_set;

/** One row of the target table (src/target/targets.def). */
typedef struct tosac_target_info {
    const char *name;          /**< "ethos-u55-128", "cortex-m55", or the TOSA spec string as given */
    const char *tosa_spec;     /**< as ExecuTorch derives it, e.g. "TOSA-1.0+INT+int16+int4+u55" */
    uint32_t profiles;         /**< TOSAC_PROFILE_* the program is built for */
    uint32_t extensions;       /**< TOSAC_EXT_* the program may use */
    tosac_rule_set rules;
    bool device;               /**< an Ethos-U or Cortex-M target: INT quantization, an artifact directory */
    uint32_t macs;             /**< NPU MACs per cycle (0: no NPU) */
    const char *accelerator;   /**< Vela --accelerator-config, or NULL */
    const char *system_config; /**< Vela --system-config default (ExecuTorch's), or NULL */
    const char *memory_mode;   /**< Vela --memory-mode default (ExecuTorch's), or NULL */
    uint32_t lowering;         /**< TOSAC_LOWER_* bits for tosac_quant_opts.lowering */
    const char *summary;
} tosac_target_info;

/** The rows of the target table, in table order. */
uint32_t tosac_target_count(void);
const tosac_target_info *tosac_target_at(uint32_t i);
/**
 * A target by name (case-insensitive), or a "TOSA-1.0+..." spec string (parsed as
 * tosac_target_parse does: no rules, not a device). TOSAC_ERR_INVALID_ARG naming the known targets.
 * `*out` points into static storage or, for spec strings, into `buf`.
 */
tosac_status tosac_target_lookup(const char *name, tosac_target_info *buf, const tosac_target_info **out,
                                 tosac_diag *d);

/* ---- operator rules ------------------------------------------------------------------------ */

/** Rules are numbered 0..tosac_rule_count()-1 in src/target/rules.def order; -1 (TOSAC_RULE_NONE)
    means the operator runs on the NPU. */
#define TOSAC_RULE_NONE (-1)
int tosac_rule_count(void);
/** The rule named `name` ("AVG_POOL_PAD_KERNEL"), or TOSAC_RULE_NONE. */
int tosac_rule_find(const char *name);
/** "AVG_POOL_PAD_KERNEL" and its text: where it comes from in ETHOS_U.md and what it says. */
const char *tosac_rule_name(int rule);
const char *tosac_rule_text(int rule);

/* ---- the artifact -------------------------------------------------------------------------- */

/** A tensor crossing a segment boundary (or a model input/output). */
typedef struct tosac_artifact_tensor {
    const char *name;
    tosac_dtype dtype;
    int32_t rank;
    int64_t shape[6];
    bool has_q;              /**< q is known: real = scale * (code - zero_point) */
    bool has_zp;             /**< q.zero_point is known (always when has_q) */
    tosac_quant_io_type io;  /**< model I/O: what the codes are (int8, uint8, int16) */
    tosac_qparams q;
    int32_t from_segment;    /**< segment inputs and model outputs: producing segment, -1 = model input */
    uint32_t from_index;     /**< that segment's output index, or the model input index */
} tosac_artifact_tensor;

typedef struct tosac_artifact_segment {
    const char *file;      /**< "segment_0_npu.tosa" */
    bool npu;
    tosac_graph *graph;    /**< owned by the artifact */
    uint32_t n_inputs, n_outputs;
    tosac_artifact_tensor *inputs, *outputs;
    uint32_t n_ops;        /**< operators without CONST/CONST_SHAPE */
    uint64_t arena_bytes;  /**< tosac_program_arena_size of the segment */
    uint64_t const_bytes;  /**< tosac_program_const_bytes */
    bool has_estimate;     /**< NPU segment: Vela's summary (written by --vela) was found in the artifact */
    double est_ms;         /**< Vela's estimated inference time in milliseconds (its inference_time) */
    uint64_t est_cycles;   /**< Vela's estimated cycles (its cycles_total) */
} tosac_artifact_segment;

/** Where one operator of the partitioned INT program went (not kept by tosac_artifact_read). */
typedef struct tosac_artifact_op {
    uint32_t index;        /**< position in the INT program's main block */
    uint32_t op;           /**< tosac_op */
    const char *output;    /**< its first output tensor */
    const char *onnx_node; /**< the ONNX node it was lowered from (location), or NULL */
    int32_t segment;       /**< -1: a constant (copied into every segment that reads it) */
    bool npu;
    int rule;              /**< the first rule that kept it off the NPU, TOSAC_RULE_NONE on the NPU */
    const char *note;      /**< NPU RESCALE: how Vela handles it ("fused into its producer ...",
                                "standalone ..."); a two-sided broadcast on U55; or NULL */
} tosac_artifact_op;

typedef struct tosac_artifact tosac_artifact;

/**
 * Places every operator of the quantized program `g` (block "main" of the first region) on the
 * NPU or the CPU with the target's rules and cuts it into segments: maximal NPU segments with no
 * cycle through CPU segments, each a TOSA-1.0 PRO-INT level 8K program with int8/int16 boundary
 * tensors that passes tosac_validate and every rule. `io` (may be NULL) gives the model I/O
 * q-params. A target without rules gives one CPU segment.
 * TOSAC_ERR_INTERNAL when a produced NPU segment does not validate.
 */
tosac_status tosac_artifact_partition(const tosac_graph *g, const tosac_quant_iomap *io,
                                      const tosac_target_info *t, tosac_artifact **out, tosac_diag *d);
void tosac_artifact_destroy(tosac_artifact *a);

const tosac_target_info *tosac_artifact_target(const tosac_artifact *a);
uint32_t tosac_artifact_input_count(const tosac_artifact *a);
uint32_t tosac_artifact_output_count(const tosac_artifact *a);
const tosac_artifact_tensor *tosac_artifact_input(const tosac_artifact *a, uint32_t i);
const tosac_artifact_tensor *tosac_artifact_output(const tosac_artifact *a, uint32_t i);
uint32_t tosac_artifact_segment_count(const tosac_artifact *a);
const tosac_artifact_segment *tosac_artifact_segment_at(const tosac_artifact *a, uint32_t i);
/** Operators of the partitioned program (0 for an artifact read from disk). */
uint32_t tosac_artifact_op_count(const tosac_artifact *a);
const tosac_artifact_op *tosac_artifact_op_at(const tosac_artifact *a, uint32_t i);

/** The partition report: text, JSON, and a DOT graph colouring NPU and CPU segments (free with
    tosac_string_free; NULL when out of memory). */
char *tosac_artifact_report_text(const tosac_artifact *a);
char *tosac_artifact_report_json(const tosac_artifact *a);
char *tosac_artifact_report_dot(const tosac_artifact *a);

/** The manifest (manifest.json's text; free with tosac_string_free). */
char *tosac_artifact_manifest_json(const tosac_artifact *a);
/**
 * Writes the artifact directory `dir`: manifest.json, the segments' .tosa files and
 * partition_report.{txt,json} (written after `finish`, with the estimates of the Vela summaries it
 * left in the directory). Written into a temporary directory next to `dir` and renamed when
 * complete; an existing `dir` is replaced only when it holds a previous artifact (a manifest.json
 * of this format), anything else is refused with TOSAC_ERR_INVALID_ARG.
 */
tosac_status tosac_artifact_write(const tosac_artifact *a, const char *dir, tosac_diag *d);
/** Called by tosac_artifact_write_with on the complete temporary directory before it is renamed
    into place (e.g. to add Vela's command streams); a failure leaves nothing behind. */
typedef tosac_status (*tosac_artifact_finish_fn)(void *user, const tosac_artifact *a, const char *tmp_dir,
                                                  tosac_diag *d);
tosac_status tosac_artifact_write_with(const tosac_artifact *a, const char *dir, tosac_artifact_finish_fn finish,
                                       void *user, tosac_diag *d);
/** True when `path` is a directory holding a manifest.json. */
bool tosac_artifact_is_dir(const char *path);
/** Reads DIR/manifest.json and its segments (every reference checked), and the estimate of every NPU
    segment whose Vela summary (SEGMENT_summary_SYSTEMCONFIG.csv) is in DIR. */
tosac_status tosac_artifact_read(const char *dir, tosac_artifact **out, tosac_diag *d);

/**
 * Checks an artifact: every NPU segment validates as PRO-INT (target extensions) level 8K and
 * every operator passes the target's rules; CPU segments validate as programs; every segment
 * input names an earlier output of the same type and shape. TOSAC_ERR_TOSA_ERROR when not.
 */
tosac_status tosac_artifact_validate(const tosac_artifact *a, tosac_diag *d);

/**
 * Runs one segment: in[k] holds its input k and out[k] receives its output k, in the TOSA data
 * encoding (tosac_program_set_input_tosa), in_n / out_n bytes.
 */
typedef tosac_status (*tosac_segment_fn)(void *user, const tosac_artifact *a, uint32_t segment,
                                         const void *const *in, const size_t *in_n, void *const *out,
                                         const size_t *out_n, tosac_diag *d);
/** The default segment runner: tosac's runtime (for CPU segments always; for NPU segments the
    functional stand-in for the NPU). */
tosac_status tosac_artifact_run_segment(void *user, const tosac_artifact *a, uint32_t segment,
                                        const void *const *in, const size_t *in_n, void *const *out,
                                        const size_t *out_n, tosac_diag *d);
/** Bytes of a tensor in the TOSA data encoding. */
size_t tosac_artifact_tensor_bytes(const tosac_artifact_tensor *t);
/**
 * Runs every segment in order, chaining outputs to inputs: model input k from inputs[k] (in_n[k]
 * bytes, TOSA encoding), model output k into outputs[k]. NPU segments go to `npu` (NULL: the
 * default runner), CPU segments to `cpu` (NULL: the default runner).
 */
tosac_status tosac_artifact_run(const tosac_artifact *a, const void *const *inputs, const size_t *in_n,
                                void *const *outputs, const size_t *out_n, tosac_segment_fn npu, tosac_segment_fn cpu,
                                void *user, tosac_diag *d);

#ifdef __cplusplus
}
#endif
#endif
