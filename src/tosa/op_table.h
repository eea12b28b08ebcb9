/* Op metadata expanded from ops.def, attrs.def and types.def. */
#ifndef TOSAC_TOSA_OP_TABLE_H
#define TOSAC_TOSA_OP_TABLE_H

#include "tosac/dtype.h"
#include "tosac/ops.h"
#include "tosac/validate.h"

/* Operand kinds. */
typedef enum tosac_opnd_kind {
    TOSAC_OPND_TENSOR = 1, /* any tensor */
    TOSAC_OPND_CTC,        /* tensor produced by CONST (unless EXT-DYNAMIC) */
    TOSAC_OPND_SHAPE,      /* shape value produced by CONST_SHAPE */
    TOSAC_OPND_LIST        /* the rest of the operand list */
} tosac_opnd_kind;

/* Type variables: 0..3 index the type-support row; the rest are fixed rules. */
enum {
    TOSAC_TV_T0 = 0, TOSAC_TV_T1, TOSAC_TV_T2, TOSAC_TV_T3,
    TOSAC_TV_TB,   /* bool */
    TOSAC_TV_TI8,  /* int8 */
    TOSAC_TV_TI32, /* int32 */
    TOSAC_TV_TANY, /* not constrained by the row */
    TOSAC_TV_TMUL, /* RESCALE multiplier: INT32 if scale32 else INT16 */
    TOSAC_TV_NOACC = -1
};

typedef struct tosac_operand_desc {
    const char *name; /* NULL terminates a list */
    uint8_t kind;     /* tosac_opnd_kind */
    uint8_t tv;       /* TOSAC_TV_* */
} tosac_operand_desc;

typedef struct tosac_type_row {
    uint32_t op;
    uint32_t profiles;   /* TOSAC_PROFILE_* mask: available if any is selected */
    uint32_t extensions; /* TOSAC_EXT_* mask: all required */
    uint8_t t[4];        /* tosac_dtype per type variable; UNKNOWN = unused column */
} tosac_type_row;

typedef struct tosac_attr_desc {
    const char *name; /* NULL if the field id is unused */
    uint8_t kind;     /* tosac_attr_kind */
} tosac_attr_desc;

typedef struct tosac_op_info {
    const char *name;       /* "CONV2D" */
    const char *attr_table; /* "Conv2d" */
    const char *check;      /* validator family name */
    int8_t acc_tv;          /* type variable bound by the acc_type attribute, or TOSAC_TV_NOACC */
    const tosac_operand_desc *inputs, *outputs; /* NULL-name terminated */
    uint8_t n_inputs, n_outputs;                /* entries (a LIST counts as one) */
    bool input_list, output_list;               /* last entry is a list */
} tosac_op_info;

/* NULL for numbers outside 1..75. */
const tosac_op_info *tosac_op_info_get(uint32_t op);
/* Attribute field descriptor of (op, id); kind NONE if absent. */
const tosac_attr_desc *tosac_op_attr_desc(uint32_t op, unsigned id);
/* All type rows of `op` (contiguous in types.def); *n = count. */
const tosac_type_row *tosac_op_type_rows(uint32_t op, unsigned *n);

#endif
