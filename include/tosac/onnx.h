/*
 * Reading ONNX models (.onnx protobuf files) into a validated, protobuf-free view.
 *
 * The reader decodes the file with protobuf-c, then checks and simplifies it: nodes in topological
 * order with names, initializers decoded into contiguous little-endian buffers (raw_data, the typed
 * repeated fields or external data files), value types with symbolic dimensions kept, subgraphs of
 * If/Loop/Scan attributes as nested graphs. Converters work on this view only.
 */
#ifndef TOSAC_ONNX_H
#define TOSAC_ONNX_H

#include <stddef.h>
#include <stdint.h>

#include "tosac/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** ONNX TensorProto.DataType numbers (elem_type). */
typedef enum tosac_onnx_elem {
    TOSAC_ONNX_UNDEFINED = 0,
    TOSAC_ONNX_FLOAT = 1,
    TOSAC_ONNX_UINT8 = 2,
    TOSAC_ONNX_INT8 = 3,
    TOSAC_ONNX_UINT16 = 4,
    TOSAC_ONNX_INT16 = 5,
    TOSAC_ONNX_INT32 = 6,
    TOSAC_ONNX_INT64 = 7,
    TOSAC_ONNX_STRING = 8,
    TOSAC_ONNX_BOOL = 9,
    TOSAC_ONNX_FLOAT16 = 10,
    TOSAC_ONNX_DOUBLE = 11,
    TOSAC_ONNX_UINT32 = 12,
    TOSAC_ONNX_UINT64 = 13,
    TOSAC_ONNX_COMPLEX64 = 14,
    TOSAC_ONNX_COMPLEX128 = 15,
    TOSAC_ONNX_BFLOAT16 = 16,
    TOSAC_ONNX_FLOAT8E4M3FN = 17,
    TOSAC_ONNX_FLOAT8E4M3FNUZ = 18,
    TOSAC_ONNX_FLOAT8E5M2 = 19,
    TOSAC_ONNX_FLOAT8E5M2FNUZ = 20,
    TOSAC_ONNX_UINT4 = 21,
    TOSAC_ONNX_INT4 = 22,
    TOSAC_ONNX_FLOAT4E2M1 = 23
} tosac_onnx_elem;

/** Name of an elem_type ("FLOAT", "INT64", ...); "?" for numbers outside the table. */
const char *tosac_onnx_elem_name(int32_t elem_type);
/**
 * Bytes per element of a numeric elem_type in the decoded buffers (FLOAT 4, COMPLEX64 8, ...);
 * 0 for STRING, UNDEFINED, the 4-bit types and unknown numbers.
 */
size_t tosac_onnx_elem_size(int32_t elem_type);

/** One dimension of a value's shape. */
typedef struct tosac_onnx_dim {
    int64_t value;     /**< >= 0, or -1 when symbolic or unknown */
    const char *param; /**< dim_param name when symbolic, else NULL */
} tosac_onnx_dim;

/** Kind of a value's type (TypeProto.value). */
typedef enum tosac_onnx_type_kind {
    TOSAC_ONNX_TYPE_NONE = 0, /**< no type given */
    TOSAC_ONNX_TYPE_TENSOR,
    TOSAC_ONNX_TYPE_SEQUENCE,
    TOSAC_ONNX_TYPE_MAP,
    TOSAC_ONNX_TYPE_OPTIONAL,
    TOSAC_ONNX_TYPE_SPARSE_TENSOR
} tosac_onnx_type_kind;

/**
 * Type of a value. For TENSOR and SPARSE_TENSOR: elem_type and, if has_shape, rank dims. For
 * SEQUENCE and OPTIONAL the element type (if a tensor) is described in elem_type/has_shape/dims;
 * MAP keeps only the key type in elem_type.
 */
typedef struct tosac_onnx_type {
    tosac_onnx_type_kind kind;
    int32_t elem_type;
    int has_shape; /**< 0: rank unknown */
    size_t rank;
    tosac_onnx_dim *dims;
} tosac_onnx_type;

/** A graph input, output or value_info entry. */
typedef struct tosac_onnx_value_info {
    const char *name;
    tosac_onnx_type type;
} tosac_onnx_value_info;

/**
 * A constant tensor (initializer or TENSOR attribute). Numeric data is one contiguous
 * little-endian buffer of numel * tosac_onnx_elem_size(elem_type) bytes (packed two per byte for
 * the 4-bit types); STRING tensors hold numel strings instead (data is NULL).
 */
typedef struct tosac_onnx_tensor {
    const char *name;
    int32_t elem_type;
    size_t rank;
    const int64_t *dims; /**< all >= 0 */
    uint64_t numel;
    size_t nbytes;
    const void *data;         /**< 16-byte aligned; NULL when nbytes == 0 or STRING */
    const char *const *strings; /**< STRING tensors: numel byte strings (NUL-terminated copies) */
    const size_t *string_lens;
    int external; /**< 1 when the bytes came from an external data file */
} tosac_onnx_tensor;

/** AttributeProto.AttributeType numbers. */
typedef enum tosac_onnx_attr_type {
    TOSAC_ONNX_ATTR_UNDEFINED = 0,
    TOSAC_ONNX_ATTR_FLOAT = 1,
    TOSAC_ONNX_ATTR_INT = 2,
    TOSAC_ONNX_ATTR_STRING = 3,
    TOSAC_ONNX_ATTR_TENSOR = 4,
    TOSAC_ONNX_ATTR_GRAPH = 5,
    TOSAC_ONNX_ATTR_FLOATS = 6,
    TOSAC_ONNX_ATTR_INTS = 7,
    TOSAC_ONNX_ATTR_STRINGS = 8,
    TOSAC_ONNX_ATTR_TENSORS = 9,
    TOSAC_ONNX_ATTR_GRAPHS = 10,
    TOSAC_ONNX_ATTR_SPARSE_TENSOR = 11,  /**< kept by type only (no value) */
    TOSAC_ONNX_ATTR_SPARSE_TENSORS = 12, /**< kept by type only */
    TOSAC_ONNX_ATTR_TYPE_PROTO = 13,     /**< kept by type only */
    TOSAC_ONNX_ATTR_TYPE_PROTOS = 14     /**< kept by type only */
} tosac_onnx_attr_type;

typedef struct tosac_onnx_graph tosac_onnx_graph;

/** One node attribute; only the members of its type are set. */
typedef struct tosac_onnx_attr {
    const char *name;
    tosac_onnx_attr_type type;
    const char *ref_attr_name; /**< inside functions; NULL otherwise */
    float f;                   /**< FLOAT */
    int64_t i;                 /**< INT */
    const char *s;             /**< STRING (NUL-terminated copy) */
    size_t s_len;
    const tosac_onnx_tensor *t; /**< TENSOR */
    const tosac_onnx_graph *g;  /**< GRAPH */
    size_t n;                   /**< element count of the list types */
    const float *floats;        /**< FLOATS */
    const int64_t *ints;        /**< INTS */
    const char *const *strings; /**< STRINGS */
    const size_t *string_lens;
    const tosac_onnx_tensor *tensors;        /**< TENSORS */
    const tosac_onnx_graph *const *graphs;   /**< GRAPHS */
} tosac_onnx_attr;

/** One node. Inputs "" are absent optional inputs; outputs "" are unused optional outputs. */
typedef struct tosac_onnx_node {
    const char *name;    /**< from the file, or "<op_type>_<index in file order>" when empty */
    const char *op_type;
    const char *domain;  /**< "" for the default domain (also for "ai.onnx") */
    size_t index;        /**< position in the file's node list */
    size_t n_inputs, n_outputs, n_attrs;
    const char *const *inputs;
    const char *const *outputs;
    const tosac_onnx_attr *attrs;
} tosac_onnx_node;

/** A graph (the main graph or an attribute subgraph). */
struct tosac_onnx_graph {
    const char *name;
    const tosac_onnx_graph *parent; /**< enclosing graph for subgraphs, NULL for the main graph */
    size_t n_nodes;
    const tosac_onnx_node *nodes; /**< topological order (file order when the file is sorted) */
    size_t n_initializers;
    const tosac_onnx_tensor *initializers;
    size_t n_inputs; /**< graph inputs that are not initializers */
    const tosac_onnx_value_info *inputs;
    size_t n_outputs;
    const tosac_onnx_value_info *outputs;
    size_t n_value_info;
    const tosac_onnx_value_info *value_info;
    size_t n_outer_refs; /**< names used here but defined in an enclosing graph */
    const char *const *outer_refs;
};

typedef struct tosac_onnx_opset {
    const char *domain; /**< "" for the default domain */
    int64_t version;
} tosac_onnx_opset;

typedef struct tosac_onnx_model {
    int64_t ir_version;
    int64_t opset;  /**< version of the default ("" / "ai.onnx") domain; 0 when not imported (then no node uses it) */
    size_t n_opsets;
    const tosac_onnx_opset *opsets;
    const char *producer_name; /**< "" when absent */
    const char *producer_version;
    const char *domain;
    int64_t model_version;
    size_t n_functions; /**< model-local functions (not decoded) */
    const tosac_onnx_graph *graph;
    size_t total_nodes; /**< nodes in all graphs */
} tosac_onnx_model;

/** Limits for the reader; a zero field selects its default. */
typedef struct tosac_onnx_read_opts {
    uint64_t max_file_bytes;     /**< largest .onnx accepted (0 = 2 GiB) */
    uint64_t max_external_bytes; /**< total bytes read from external data files (0 = 16 GiB) */
    size_t max_nodes;            /**< nodes in all graphs together (0 = 1,000,000) */
    /** Memory protobuf-c may use while decoding (0 = 64 * file size + 64 MiB). */
    uint64_t max_decode_bytes;
    size_t max_depth; /**< message nesting depth (0 = 100; subgraphs take 3 levels each) */
    /** Called with the path of each external data file before it is opened (NULL: not called);
        anything but TOSAC_OK stops the read with that status (the callback adds its message to
        `d`). `tosac compile` uses it so that no output is one of the model's data files. */
    tosac_status (*on_external_file)(void *user, const char *path, tosac_diag *d);
    void *user;
} tosac_onnx_read_opts;

/**
 * Decodes and validates an ONNX model held in memory.
 *
 * Accepts IR versions 3 to 10 and default-domain opset versions 1 to 21 (whether an operator of that
 * version can be lowered is decided per operator by the converter table, see docs/ONNX.md).
 * Checks: every node input is defined (graph input, initializer, node output or, in subgraphs, an
 * enclosing graph's value), no value is produced twice, the nodes form no cycle, initializer sizes
 * match their dims, dimensions are non-negative, total node count and all sizes are bounded before
 * allocation.
 * Every error appends one message "<name>: <where>: <reason>" and returns TOSAC_ERR_FORMAT
 * (malformed or inconsistent), TOSAC_ERR_UNSUPPORTED (versions, data encodings), TOSAC_ERR_NOMEM
 * (a limit or an allocation) or TOSAC_ERR_IO (external data files).
 *
 * @param buf       the file bytes (not kept after the call)
 * @param name      label for messages (NULL = "<memory>")
 * @param base_dir  directory for relative external data paths (NULL: external data is an error)
 * @param opts      limits, or NULL for the defaults
 * @param out       the new model (free with tosac_onnx_model_destroy); untouched on failure
 * @param d         diagnostics sink, or NULL
 */
tosac_status tosac_onnx_read_mem(const void *buf, size_t len, const char *name, const char *base_dir,
                                 const tosac_onnx_read_opts *opts, tosac_onnx_model **out, tosac_diag *d);

/** Reads the file at `path` (size checked before it is loaded); external data is looked up
 *  relative to the file's directory. */
tosac_status tosac_onnx_read_file(const char *path, const tosac_onnx_read_opts *opts, tosac_onnx_model **out,
                                  tosac_diag *d);

/** Frees a model (NULL is allowed). */
void tosac_onnx_model_destroy(tosac_onnx_model *m);

/** Initializer of `g` named `name` (this graph only), or NULL. */
const tosac_onnx_tensor *tosac_onnx_find_initializer(const tosac_onnx_graph *g, const char *name);
/** Attribute of `n` named `name`, or NULL. */
const tosac_onnx_attr *tosac_onnx_find_attr(const tosac_onnx_node *n, const char *name);

#ifdef __cplusplus
}
#endif
#endif
