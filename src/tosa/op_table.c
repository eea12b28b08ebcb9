/* Expands ops.def / attrs.def / types.def into the tables every other module reads. */
#include "tosa/op_table.h"

#include <string.h>
#include <strings.h>

#define TOSAC_UNPAREN(...) __VA_ARGS__

/* Operand counts and list flags as enum constants, expanded from the same operand lists with the
   operand macros redefined, so the whole op table below is a compile-time constant. */
#define IN_(n, tv) +1
#define CTC_(n, tv) +1
#define SHP_(n) +1
#define LST_(n, tv) +1
#define OUT_(n, tv) +1
#define OLST_(n, tv) +1
enum {
#define TOSAC_OP(E, num, A, chk, acc, ins, outs) k_nin_##E = 0 TOSAC_UNPAREN ins, k_nout_##E = 0 TOSAC_UNPAREN outs,
#include "tosac/ops.def"
#undef TOSAC_OP
};
#undef IN_
#undef CTC_
#undef SHP_
#undef LST_
#undef OUT_
#undef OLST_
#define IN_(n, tv) || 0
#define CTC_(n, tv) || 0
#define SHP_(n) || 0
#define LST_(n, tv) || 1
#define OUT_(n, tv) || 0
#define OLST_(n, tv) || 1
enum {
#define TOSAC_OP(E, num, A, chk, acc, ins, outs) k_lin_##E = 0 TOSAC_UNPAREN ins, k_lout_##E = 0 TOSAC_UNPAREN outs,
#include "tosac/ops.def"
#undef TOSAC_OP
};
#undef IN_
#undef CTC_
#undef SHP_
#undef LST_
#undef OUT_
#undef OLST_

#define IN_(n, tv) {#n, TOSAC_OPND_TENSOR, TOSAC_TV_##tv},
#define CTC_(n, tv) {#n, TOSAC_OPND_CTC, TOSAC_TV_##tv},
#define SHP_(n) {#n, TOSAC_OPND_SHAPE, TOSAC_TV_TANY},
#define LST_(n, tv) {#n, TOSAC_OPND_LIST, TOSAC_TV_##tv},
#define OUT_(n, tv) {#n, TOSAC_OPND_TENSOR, TOSAC_TV_##tv},
#define OLST_(n, tv) {#n, TOSAC_OPND_LIST, TOSAC_TV_##tv},

static const tosac_op_info k_ops[TOSAC_OP_COUNT] = {
#define TOSAC_OP(E, num, A, chk, acc, ins, outs)                                          \
    [num] = {#E, #A, #chk, TOSAC_TV_##acc,                                                \
             (const tosac_operand_desc[]){TOSAC_UNPAREN ins{NULL, 0, 0}},                 \
             (const tosac_operand_desc[]){TOSAC_UNPAREN outs{NULL, 0, 0}},                \
             k_nin_##E, k_nout_##E, k_lin_##E, k_lout_##E},
#include "tosac/ops.def"
#undef TOSAC_OP
};

static const tosac_attr_desc k_attrs[TOSAC_OP_COUNT][TOSAC_ATTR_MAX_FIELDS] = {
#define TOSAC_ATTR(OP, f, id, kind) [TOSAC_OP_##OP][id] = {#f, TOSAC_AK_##kind},
#include "tosac/attrs.def"
#undef TOSAC_ATTR
};

#define P_INT TOSAC_PROFILE_INT
#define P_FP TOSAC_PROFILE_FP
#define E_INT16 TOSAC_EXT_INT16
#define E_INT4 TOSAC_EXT_INT4
#define E_BF16 TOSAC_EXT_BF16
#define E_FP8E4M3 TOSAC_EXT_FP8E4M3
#define E_FP8E5M2 TOSAC_EXT_FP8E5M2
#define E_FFT TOSAC_EXT_FFT
#define E_VARIABLE TOSAC_EXT_VARIABLE
#define E_CONTROLFLOW TOSAC_EXT_CONTROLFLOW
#define DT_NO TOSAC_DTYPE_UNKNOWN
#define DT_BOOL TOSAC_DTYPE_BOOL
#define DT_I4 TOSAC_DTYPE_INT4
#define DT_I8 TOSAC_DTYPE_INT8
#define DT_I16 TOSAC_DTYPE_INT16
#define DT_I32 TOSAC_DTYPE_INT32
#define DT_I48 TOSAC_DTYPE_INT48
#define DT_FP16 TOSAC_DTYPE_FP16
#define DT_FP32 TOSAC_DTYPE_FP32
#define DT_BF16 TOSAC_DTYPE_BF16
#define DT_E4M3 TOSAC_DTYPE_FP8E4M3
#define DT_E5M2 TOSAC_DTYPE_FP8E5M2

static const tosac_type_row k_rows[] = {
#define TOSAC_TYPES(OP, prof, ext, a, b, c, d) {TOSAC_OP_##OP, prof, ext, {DT_##a, DT_##b, DT_##c, DT_##d}},
#include "tosac/types.def"
#undef TOSAC_TYPES
};

const tosac_op_info *tosac_op_info_get(uint32_t op) { return tosac_op_valid(op) ? &k_ops[op] : NULL; }

bool tosac_op_valid(uint32_t op) { return op >= 1 && op < TOSAC_OP_COUNT && k_ops[op].name; }

const char *tosac_op_name(uint32_t op) { return tosac_op_valid(op) ? k_ops[op].name : "UNKNOWN"; }

const char *tosac_op_attr_table(uint32_t op) { return tosac_op_valid(op) ? k_ops[op].attr_table : "NONE"; }

bool tosac_op_from_name(const char *name, tosac_op *out)
{
    for (unsigned op = 1; op < TOSAC_OP_COUNT; op++) {
        if (k_ops[op].name && !strcasecmp(name, k_ops[op].name)) {
            *out = (tosac_op)op;
            return true;
        }
    }
    return false;
}

const tosac_attr_desc *tosac_op_attr_desc(uint32_t op, unsigned id)
{
    static const tosac_attr_desc none = {NULL, TOSAC_AK_NONE};
    if (!tosac_op_valid(op) || id >= TOSAC_ATTR_MAX_FIELDS || !k_attrs[op][id].name) return &none;
    return &k_attrs[op][id];
}

unsigned tosac_op_attr_count(uint32_t op)
{
    unsigned n = 0;
    while (n < TOSAC_ATTR_MAX_FIELDS && tosac_op_attr_desc(op, n)->name) n++;
    return n;
}

const char *tosac_op_attr_name(uint32_t op, unsigned id) { return tosac_op_attr_desc(op, id)->name; }

tosac_attr_kind tosac_op_attr_kind(uint32_t op, unsigned id) { return (tosac_attr_kind)tosac_op_attr_desc(op, id)->kind; }

const tosac_type_row *tosac_op_type_rows(uint32_t op, unsigned *n)
{
    const size_t total = sizeof(k_rows) / sizeof(k_rows[0]);
    size_t i = 0;
    while (i < total && k_rows[i].op != op) i++;
    size_t j = i;
    while (j < total && k_rows[j].op == op) j++;
    *n = (unsigned)(j - i);
    return i < total ? &k_rows[i] : NULL;
}

const char *tosac_ext_name(unsigned bit)
{
    static const char *names[] = {
#define TOSAC_X(E, s) s,
        TOSAC_EXTENSIONS(TOSAC_X)
#undef TOSAC_X
    };
    return bit < TOSAC_EXT_COUNT ? names[bit] : "?";
}

uint32_t tosac_ext_from_name(const char *name)
{
    if (!strncasecmp(name, "EXT-", 4)) name += 4;
    for (unsigned b = 0; b < TOSAC_EXT_COUNT; b++)
        if (!strcasecmp(name, tosac_ext_name(b))) return 1u << b;
    return 0;
}
