/* TOSA 1.0 operators and attribute fields, expanded from ops.def and attrs.def. */
#ifndef TOSAC_OPS_H
#define TOSAC_OPS_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Operator numbers are the TOSA 1.0 final schema's Op enum values. */
typedef enum tosac_op {
    TOSAC_OP_UNKNOWN = 0,
#define TOSAC_OP(E, num, A, chk, acc, ins, outs) TOSAC_OP_##E = num,
#include "tosac/ops.def"
#undef TOSAC_OP
    TOSAC_OP_COUNT
} tosac_op;

/** Attribute field ids: TOSAC_ATTR_<OP>_<field> equals the flatbuffer field id in its table. */
enum tosac_attr_field {
#define TOSAC_ATTR(OP, f, id, kind) TOSAC_ATTR_##OP##_##f = id,
#include "tosac/attrs.def"
#undef TOSAC_ATTR
    TOSAC_ATTR_MAX_FIELDS = 8
};

/** How an attribute field is stored. */
typedef enum tosac_attr_kind {
    TOSAC_AK_NONE = 0,
    TOSAC_AK_I32,    /**< int32 */
    TOSAC_AK_BOOL,   /**< bool */
    TOSAC_AK_DTYPE,  /**< DType enum (uint32) */
    TOSAC_AK_NAN,    /**< NanPropagationMode (uint32): UNKNOWN 0, PROPAGATE 1, IGNORE 2 */
    TOSAC_AK_RESIZE, /**< ResizeMode (uint32): UNKNOWN 0, NEAREST 1, BILINEAR 2 */
    TOSAC_AK_ROUND,  /**< RoundingMode (uint32): UNKNOWN 0, SINGLE 1, INEXACT 2, DOUBLE 3 */
    TOSAC_AK_I32V,   /**< [int32] */
    TOSAC_AK_BYTES8, /**< [ubyte], payload 8-byte aligned in the file */
    TOSAC_AK_BYTES,  /**< [ubyte] */
    TOSAC_AK_STR     /**< string */
} tosac_attr_kind;

enum { TOSAC_NAN_UNKNOWN = 0, TOSAC_NAN_PROPAGATE = 1, TOSAC_NAN_IGNORE = 2 };
enum { TOSAC_RESIZE_UNKNOWN = 0, TOSAC_RESIZE_NEAREST = 1, TOSAC_RESIZE_BILINEAR = 2 };
enum { TOSAC_ROUND_UNKNOWN = 0, TOSAC_ROUND_SINGLE = 1, TOSAC_ROUND_INEXACT = 2, TOSAC_ROUND_DOUBLE = 3 };

/**
 * One attribute field of an operator (plain data, shared by the IR and the kernels): `present`
 * distinguishes an absent field (schema default) from a written one.
 */
typedef struct tosac_attr_val {
    bool present;
    int64_t i;        /**< I32, BOOL, DTYPE and enum kinds */
    const void *data; /**< I32V: int32_t[len]; BYTES/BYTES8: uint8_t[len]; STR: char[len + 1] */
    uint32_t len;
} tosac_attr_val;

/** True for 1..75. */
bool tosac_op_valid(uint32_t op);
/** "CONV2D"; "UNKNOWN" for invalid numbers. */
const char *tosac_op_name(uint32_t op);
/** Schema attribute table name without suffix ("Conv2d"), as used in flatc JSON ("Conv2dAttribute"). */
const char *tosac_op_attr_table(uint32_t op);
/** Parses an op name (case-insensitive). */
bool tosac_op_from_name(const char *name, tosac_op *out);
/** Number of fields of the op's attribute table; name/kind of field `id` (NULL/NONE if none). */
unsigned tosac_op_attr_count(uint32_t op);
const char *tosac_op_attr_name(uint32_t op, unsigned id);
tosac_attr_kind tosac_op_attr_kind(uint32_t op, unsigned id);

#ifdef __cplusplus
}
#endif
#endif
