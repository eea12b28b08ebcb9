/*
 * Family checks for CUSTOM, the control-flow operators and the variable operators.
 *
 * COND_IF / WHILE_LOOP: the operator-local rules live here (condition shape, loop-carried list
 * shapes, nesting level); resolving then/else/cond/body graphs, matching their input/output lists
 * and validating them recursively is done by validate.c, which owns the block traversal.
 *
 * Variables (EXT-VARIABLE). In the flatbuffer a variable is a TosaTensor with variable = true
 * (variable_name optional, data = optional initial value); the attribute tables of VARIABLE,
 * VARIABLE_WRITE and VARIABLE_READ are empty, so the operators name the variable through their
 * operand lists. The accepted conventions follow the reference model's serialization, where a
 * read is an operator [var] -> [value] and a write is [value] -> [var]:
 *   VARIABLE        inputs []          outputs [var]      (declaration; also accepted: [var] -> [])
 *   VARIABLE_WRITE  inputs [value]     outputs [var]      (also accepted: [var, value] -> [])
 *   VARIABLE_READ   inputs [var]       outputs [value]
 * (The reference model itself writes IDENTITY operators with the VariableRead/VariableWrite
 * attribute tags for these accesses; validate.c accepts that form too.)
 */
#include <stdio.h>

#include "tosa/check.h"

static void check_nesting(tosac_check_ctx *c)
{
    LEVEL_CHECK(c, c->nesting < c->lim.max_nesting,
                "control flow nested %d deep; this operator would exceed MAX_NESTING %lld", c->nesting + 1,
                (long long)c->lim.max_nesting);
}

void tosac_check_custom(tosac_check_ctx *c)
{
    /* CUSTOM is opaque: its operands are arbitrary tensor lists (checked generically) and its
       attributes are uninterpreted strings/bytes. */
    (void)c;
}

void tosac_check_cond_if(tosac_check_ctx *c)
{
    const tosac_value *cond = tosac_check_in(c, 0);
    if (cond) {
        int64_t n = tosac_check_nelem(cond);
        char a[192];
        ERROR_IF(c, n != 1, "condition '%s' %s must have exactly one element (has %lld)", tosac_nm(cond->name),
                 tosac_shape_str(cond, a, sizeof a), (long long)n);
    }
    check_nesting(c);
}

void tosac_check_while_loop(tosac_check_ctx *c)
{
    uint32_t ni = c->node->n_inputs, no = c->node->n_outputs;
    if (ni != no) {
        tosac_check_error(c, "has %u inputs but %u outputs (input_list and output_list must match)", (unsigned)ni,
                          (unsigned)no);
    } else {
        for (uint32_t i = 0; i < ni; i++) {
            const tosac_value *a = tosac_check_in(c, i), *b = tosac_check_out(c, i);
            if (!a || !b) continue;
            if (a->dtype != b->dtype || !tosac_same_shape(a, b)) {
                char x[192], y[192];
                tosac_check_error(
                    c, "output_list[%u] '%s' (%s %s) must have the type and shape of input_list[%u] '%s' (%s %s)",
                    (unsigned)i, tosac_nm(b->name), tosac_dtype_name(b->dtype), tosac_shape_str(b, x, sizeof x),
                    (unsigned)i, tosac_nm(a->name), tosac_dtype_name(a->dtype), tosac_shape_str(a, y, sizeof y));
            }
        }
    }
    check_nesting(c);
}

/* ------------------------------------------------------------------------------------------ */
/* Variables                                                                                     */

/* The variable's element type must be one of the op's type rows, available under the options. */
static void check_variable_type(tosac_check_ctx *c, const tosac_value *var)
{
    unsigned nrows = 0;
    const tosac_type_row *rows = tosac_op_type_rows(c->node->op, &nrows);
    const tosac_type_row *match = NULL;
    for (unsigned r = 0; rows && r < nrows; r++) {
        if (rows[r].t[0] != var->dtype) continue;
        if (!match) match = &rows[r];
        if (tosac_row_available(&rows[r], c->opts)) {
            c->row = &rows[r];
            return;
        }
    }
    if (!match) {
        char list[128];
        size_t len = 0;
        list[0] = '\0';
        for (unsigned r = 0; rows && r < nrows && len + 16 < sizeof list; r++)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", r ? ", " : "",
                                    tosac_dtype_name((tosac_dtype)rows[r].t[0]));
        tosac_check_error(c, "variable '%s' has element type %s; no type-support row of %s accepts it (rows: %s)",
                          tosac_nm(var->name), tosac_dtype_name(var->dtype), tosac_op_name(c->node->op), list);
        return;
    }
    bool prof_missing = !(match->profiles & c->opts->profiles);
    bool ext_missing = (match->extensions & ~c->opts->extensions) != 0;
    tosac_check_error(c, "%s with (%s) requires %s%s%s, which %s not enabled", tosac_op_name(c->node->op),
                      tosac_dtype_name(var->dtype),
                      prof_missing ? ((match->profiles & TOSAC_PROFILE_INT) ? "PRO-INT" : "PRO-FP") : "",
                      prof_missing && ext_missing ? " and " : "", ext_missing ? "EXT-VARIABLE" : "",
                      prof_missing && ext_missing ? "are" : "is");
}

static void check_initial_value(tosac_check_ctx *c, const tosac_value *var)
{
    if (!var->data) return;
    int64_t n = tosac_check_nelem(var);
    size_t need;
    if (n < 0 || !tosac_dtype_storage_bytes(var->dtype, n, &need)) return;
    size_t have = var->data_len;
    bool ok = have == need || (have > need && have - need < 8 && have % 8 == 0);
    char a[192];
    ERROR_IF(c, !ok, "initial value of variable '%s' has %zu bytes but %s %s encodes to %zu bytes", tosac_nm(var->name),
             have, tosac_dtype_name(var->dtype), tosac_shape_str(var, a, sizeof a), need);
}

void tosac_check_variable(tosac_check_ctx *c)
{
    uint32_t op = c->node->op, ni = c->node->n_inputs, no = c->node->n_outputs;
    const tosac_value *var = NULL, *val = NULL;
    const char *val_role = "";
    switch (op) {
    case TOSAC_OP_VARIABLE:
        if (ni == 0 && no == 1) var = tosac_check_out(c, 0);
        else if (ni == 1 && no == 0) var = tosac_check_in(c, 0);
        else {
            tosac_check_error(c, "has %u inputs and %u outputs; VARIABLE declares one variable tensor as its only output",
                              (unsigned)ni, (unsigned)no);
            return;
        }
        break;
    case TOSAC_OP_VARIABLE_WRITE:
        if (ni == 1 && no == 1) {
            val = tosac_check_in(c, 0);
            var = tosac_check_out(c, 0);
        } else if (ni == 2 && no == 0) {
            var = tosac_check_in(c, 0);
            val = tosac_check_in(c, 1);
        } else {
            tosac_check_error(c, "has %u inputs and %u outputs; VARIABLE_WRITE takes the value as its input and the variable tensor as its output",
                              (unsigned)ni, (unsigned)no);
            return;
        }
        val_role = "input1";
        break;
    default: /* VARIABLE_READ */
        if (ni == 1 && no == 1) {
            var = tosac_check_in(c, 0);
            val = tosac_check_out(c, 0);
        } else {
            tosac_check_error(c, "has %u inputs and %u outputs; VARIABLE_READ takes the variable tensor as its input and has one output",
                              (unsigned)ni, (unsigned)no);
            return;
        }
        val_role = "output1";
        break;
    }
    if (!var) return;
    if (!var->variable) {
        tosac_check_error(c, "'%s' is not a variable tensor (TosaTensor.variable is not set)", tosac_nm(var->name));
        return;
    }
    check_variable_type(c, var);
    if (op == TOSAC_OP_VARIABLE) {
        check_initial_value(c, var);
        return;
    }
    if (!val) return;
    if (val->variable) {
        tosac_check_error(c, "%s '%s' must be an ordinary tensor, not another variable", val_role, tosac_nm(val->name));
        return;
    }
    if (val->dtype != var->dtype || !tosac_same_shape(val, var)) {
        char a[192], b[192];
        tosac_check_error(c, "%s '%s' (%s %s) must have the type and shape of variable '%s' (%s %s)", val_role,
                          tosac_nm(val->name), tosac_dtype_name(val->dtype), tosac_shape_str(val, a, sizeof a),
                          tosac_nm(var->name), tosac_dtype_name(var->dtype), tosac_shape_str(var, b, sizeof b));
    }
}
