/* The op table agrees with the TOSA 1.0 final schema numbers and is internally consistent. */
#include "harness/test.h"
#include "tosa/op_table.h"

static void numbers_match_schema(void)
{
    /* Spot values from TOSA.md §A.4 (independent of ops.def). */
    EXPECT_EQ_I(TOSAC_OP_ARGMAX, 1);
    EXPECT_EQ_I(TOSAC_OP_CONV2D, 3);
    EXPECT_EQ_I(TOSAC_OP_TABLE, 31);
    EXPECT_EQ_I(TOSAC_OP_SELECT, 45);
    EXPECT_EQ_I(TOSAC_OP_CONCAT, 55);
    EXPECT_EQ_I(TOSAC_OP_RESCALE, 66);
    EXPECT_EQ_I(TOSAC_OP_CONST, 67);
    EXPECT_EQ_I(TOSAC_OP_VARIABLE, 72);
    EXPECT_EQ_I(TOSAC_OP_CONST_SHAPE, 75);
    EXPECT_EQ_I(TOSAC_OP_COUNT, 76);
    EXPECT_STREQ(tosac_op_name(46), "EQUAL");
    EXPECT_STREQ(tosac_op_attr_table(10), "TransposeConv2d");
    EXPECT_EQ_I(TOSAC_ATTR_RESCALE_output_unsigned, 4);
    EXPECT_EQ_I(TOSAC_ATTR_CONV2D_acc_type, 4);
    EXPECT_EQ_I(TOSAC_ATTR_TRANSPOSE_CONV2D_acc_type, 3);
    EXPECT_EQ_I(tosac_op_attr_kind(TOSAC_OP_CLAMP, 1), TOSAC_AK_BYTES8);
    EXPECT_EQ_I(tosac_op_attr_count(TOSAC_OP_ADD), 0);
    EXPECT_EQ_I(tosac_op_attr_count(TOSAC_OP_RESCALE), 5);
}

static void every_op_complete(void)
{
    unsigned n_ops = 0;
    for (uint32_t op = 1; op < TOSAC_OP_COUNT; op++) {
        const tosac_op_info *info = tosac_op_info_get(op);
        EXPECT(info != NULL);
        if (!info) continue;
        n_ops++;
        unsigned nrows = 0;
        const tosac_type_row *rows = tosac_op_type_rows(op, &nrows);
        if (nrows == 0) fprintf(stderr, "op %s has no type rows\n", info->name);
        EXPECT(rows != NULL && nrows > 0);
        /* every type variable an operand uses is bound by every row */
        for (unsigned r = 0; r < nrows; r++) {
            for (const tosac_operand_desc *o = info->inputs; o->name; o++)
                if (o->tv <= TOSAC_TV_T3) EXPECT(rows[r].t[o->tv] != TOSAC_DTYPE_UNKNOWN);
            for (const tosac_operand_desc *o = info->outputs; o->name; o++)
                if (o->tv <= TOSAC_TV_T3) EXPECT(rows[r].t[o->tv] != TOSAC_DTYPE_UNKNOWN);
            if (info->acc_tv >= 0) EXPECT(rows[r].t[info->acc_tv] != TOSAC_DTYPE_UNKNOWN);
        }
    }
    EXPECT_EQ_I(n_ops, 75);
    /* rows of one op are contiguous: count all rows two ways */
    unsigned total = 0;
    for (uint32_t op = 1; op < TOSAC_OP_COUNT; op++) {
        unsigned n;
        tosac_op_type_rows(op, &n);
        total += n;
    }
    unsigned n_all = 0;
#define TOSAC_TYPES(OP, p, e, a, b, c, d) n_all++;
    {
#include "tosac/types.def"
    }
#undef TOSAC_TYPES
    EXPECT_EQ_I(total, n_all);
}

static void operand_lists(void)
{
    const tosac_op_info *c = tosac_op_info_get(TOSAC_OP_CONV2D);
    EXPECT_EQ_I(c->n_inputs, 5);
    EXPECT_EQ_I(c->n_outputs, 1);
    EXPECT_STREQ(c->inputs[3].name, "input_zp");
    EXPECT_EQ_I(c->inputs[3].kind, TOSAC_OPND_CTC);
    const tosac_op_info *k = tosac_op_info_get(TOSAC_OP_CONST);
    EXPECT_EQ_I(k->n_inputs, 0);
    const tosac_op_info *cc = tosac_op_info_get(TOSAC_OP_CONCAT);
    EXPECT(cc->input_list);
    const tosac_op_info *s = tosac_op_info_get(TOSAC_OP_SLICE);
    EXPECT_EQ_I(s->inputs[1].kind, TOSAC_OPND_SHAPE);
}

int main(void)
{
    RUN(numbers_match_schema);
    RUN(every_op_complete);
    RUN(operand_lists);
    return test_summary();
}
