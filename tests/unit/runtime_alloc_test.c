/*
 * Runtime allocation discipline: tosac_program_invoke never calls the allocator (a counting
 * allocator that fails every request is installed after create), and tosac_program_create fails
 * cleanly when any one of its allocations fails (fault injection over the Nth allocation, with a
 * live-block count proving that nothing leaks; the suite also runs under ASan).
 */
#include <stdlib.h>

#include "harness/test.h"
#include "ir/graph.h"
#include "tosac/alloc.h"
#include "tosac/runtime.h"
#include "tosac/validate.h"

/* Counting allocator: fails request number `fail_at` (1-based; 0 = never) and, when `fail_all`,
   every request. */
typedef struct counter {
    long calls, live, fail_at;
    bool fail_all;
} counter;

static void *c_alloc(void *ud, size_t size)
{
    counter *c = ud;
    c->calls++;
    if (c->fail_all || c->calls == c->fail_at) return NULL;
    void *p = malloc(size ? size : 1);
    if (p) c->live++;
    return p;
}

static void c_free(void *ud, void *p, size_t size)
{
    counter *c = ud;
    (void)size;
    if (p) c->live--;
    free(p);
}

static void install(counter *c)
{
    tosac_allocator a = {c, c_alloc, c_free};
    tosac_set_allocator(&a);
}

/* ------------------------------------------------------------------------------------------ */
/* A graph with most runtime features: constants, shape values, in-place ops, a WHILE_LOOP whose
   body runs a COND_IF and reads a main-block value, a variable.                                  */

static const int64_t k23[2] = {2, 3}, k1[1] = {1};

static tosac_value *const_i32(tosac_block *b, const char *name, int rank, const int64_t *dims, int32_t fill)
{
    uint8_t bytes[24];
    int64_t n = rank ? dims[0] * (rank > 1 ? dims[1] : 1) : 1;
    for (int64_t i = 0; i < n; i++)
        for (int k = 0; k < 4; k++) bytes[i * 4 + k] = (uint8_t)((uint32_t)fill >> (8 * k));
    return tosac_block_add_const(b, name, TOSAC_DTYPE_INT32, rank, dims, bytes, (size_t)n * 4);
}

static tosac_node *op2(tosac_block *b, tosac_op op, tosac_value *x, tosac_value *y, tosac_value *out)
{
    tosac_value *in[2] = {x, y};
    return tosac_block_add_node(b, op, 2, in, 1, &out);
}

/* main: t = x + 1; r = RESHAPE(t); (i, acc) = WHILE(0, r) { i < 3: acc = (i > 0) ? acc + r : acc - r; i++ };
   old = VARIABLE_READ(state); VARIABLE_WRITE(acc -> state); outputs acc, old. */
static tosac_graph *build(void)
{
    tosac_graph *g = tosac_graph_create();
    tosac_block *m = tosac_region_add_block(tosac_graph_add_region(g, "main"), "main");
    tosac_value *x = tosac_block_add_tensor(m, "x", TOSAC_DTYPE_INT32, 2, k23);
    tosac_block_add_input(m, x);
    tosac_value *t = tosac_block_add_tensor(m, "t", TOSAC_DTYPE_INT32, 2, k23);
    op2(m, TOSAC_OP_ADD, x, const_i32(m, "one", 2, k23, 1), t);
    static const int64_t shp[2] = {2, 3};
    tosac_value *r = tosac_block_add_tensor(m, "r", TOSAC_DTYPE_INT32, 2, k23);
    op2(m, TOSAC_OP_RESHAPE, t, tosac_block_add_const_shape(m, "shape", shp, 2), r);
    tosac_value *ins[2] = {const_i32(m, "i0", 1, k1, 0), r};
    tosac_value *outs[2] = {tosac_block_add_tensor(m, "i_out", TOSAC_DTYPE_INT32, 1, k1),
                            tosac_block_add_tensor(m, "acc", TOSAC_DTYPE_INT32, 2, k23)};
    tosac_node *w = tosac_block_add_node(m, TOSAC_OP_WHILE_LOOP, 2, ins, 2, outs);
    tosac_node_set_str(w, TOSAC_ATTR_WHILE_LOOP_cond_graph, "cond");
    tosac_node_set_str(w, TOSAC_ATTR_WHILE_LOOP_body_graph, "body");
    tosac_value *state = tosac_block_add_tensor(m, "state", TOSAC_DTYPE_INT32, 2, k23);
    state->variable = true;
    tosac_value *old = tosac_block_add_tensor(m, "old", TOSAC_DTYPE_INT32, 2, k23);
    tosac_value *rd = state;
    tosac_node *n = tosac_block_add_node(m, TOSAC_OP_IDENTITY, 1, &rd, 1, &old);
    n->attr_type = TOSAC_OP_VARIABLE_READ;
    tosac_value *wr = outs[1];
    n = tosac_block_add_node(m, TOSAC_OP_IDENTITY, 1, &wr, 1, &state);
    n->attr_type = TOSAC_OP_VARIABLE_WRITE;
    tosac_block_add_output(m, outs[1]);
    tosac_block_add_output(m, old);

    tosac_block *c = tosac_region_add_block(tosac_graph_add_region(g, "cond"), "cond_bb");
    tosac_value *ci = tosac_block_add_tensor(c, "i", TOSAC_DTYPE_INT32, 1, k1);
    tosac_block_add_input(c, ci);
    tosac_block_add_input(c, tosac_block_add_tensor(c, "acc", TOSAC_DTYPE_INT32, 2, k23));
    tosac_value *go = tosac_block_add_tensor(c, "go", TOSAC_DTYPE_BOOL, 1, k1);
    op2(c, TOSAC_OP_GREATER, const_i32(c, "three", 1, k1, 3), ci, go);
    tosac_block_add_output(c, go);

    tosac_block *b = tosac_region_add_block(tosac_graph_add_region(g, "body"), "body_bb");
    tosac_value *bi = tosac_block_add_tensor(b, "i", TOSAC_DTYPE_INT32, 1, k1);
    tosac_value *bacc = tosac_block_add_tensor(b, "acc", TOSAC_DTYPE_INT32, 2, k23);
    tosac_block_add_input(b, bi);
    tosac_block_add_input(b, bacc);
    tosac_value *pos = tosac_block_add_tensor(b, "pos", TOSAC_DTYPE_BOOL, 1, k1);
    op2(b, TOSAC_OP_GREATER, bi, const_i32(b, "zero", 1, k1, 0), pos);
    tosac_value *acc1 = tosac_block_add_tensor(b, "acc1", TOSAC_DTYPE_INT32, 2, k23);
    tosac_value *cin[3] = {pos, bacc, tosac_block_get_or_placeholder(b, "r")};
    tosac_node *ci_node = tosac_block_add_node(b, TOSAC_OP_COND_IF, 3, cin, 1, &acc1);
    tosac_node_set_str(ci_node, TOSAC_ATTR_COND_IF_then_graph, "plus");
    tosac_node_set_str(ci_node, TOSAC_ATTR_COND_IF_else_graph, "minus");
    tosac_value *i1 = tosac_block_add_tensor(b, "i1", TOSAC_DTYPE_INT32, 1, k1);
    op2(b, TOSAC_OP_ADD, bi, const_i32(b, "inc", 1, k1, 1), i1);
    tosac_block_add_output(b, i1);
    tosac_block_add_output(b, acc1);
    for (int k = 0; k < 2; k++) {
        tosac_block *s = tosac_region_add_block(tosac_graph_add_region(g, k ? "minus" : "plus"), "bb");
        tosac_value *p = tosac_block_add_tensor(s, "p", TOSAC_DTYPE_INT32, 2, k23);
        tosac_value *q = tosac_block_add_tensor(s, "q", TOSAC_DTYPE_INT32, 2, k23);
        tosac_block_add_input(s, p);
        tosac_block_add_input(s, q);
        tosac_value *o = tosac_block_add_tensor(s, "o", TOSAC_DTYPE_INT32, 2, k23);
        op2(s, k ? TOSAC_OP_SUB : TOSAC_OP_ADD, p, q, o);
        tosac_block_add_output(s, o);
    }
    return g;
}

static void set_x(tosac_program *p, int32_t base)
{
    int32_t *x = tosac_program_input_ptr(p, 0);
    for (int i = 0; x && i < 6; i++) x[i] = base + i;
}

/* acc after the loop (i = 0: acc - r, then twice acc + r): 2 r = 2 (x + 1); `old` is the
   previous invocation's acc (the variable starts at zero). */
static void test_invoke_allocates_nothing(void)
{
    tosac_graph *g = build();
    tosac_diag *d = tosac_diag_create();
    tosac_program *p = NULL;
    EXPECT_EQ_I(tosac_program_create(g, NULL, &p, d), TOSAC_OK);
    for (size_t i = 0; i < tosac_diag_count(d); i++) fprintf(stderr, "  %s\n", tosac_diag_message(d, i, NULL));
    tosac_diag_destroy(d);
    if (!p) {
        tosac_graph_destroy(g);
        return;
    }
    counter c = {0, 0, 0, true};
    install(&c);
    for (int rep = 0; rep < 100; rep++) {
        set_x(p, rep);
        EXPECT_EQ_I(tosac_program_invoke(p, NULL), TOSAC_OK);
        const int32_t *acc = tosac_program_output_ptr(p, 0), *old = tosac_program_output_ptr(p, 1);
        for (int i = 0; acc && i < 6; i++) EXPECT_EQ_I(acc[i], 2 * (rep + i + 1));
        for (int i = 0; old && i < 6; i++) EXPECT_EQ_I(old[i], rep ? 2 * (rep + i) : 0);
    }
    /* bindings and a caller arena change nothing */
    int32_t y[6], o2[6];
    EXPECT_EQ_I(tosac_program_bind_output(p, 0, y), TOSAC_OK);
    EXPECT_EQ_I(tosac_program_bind_output(p, 1, o2), TOSAC_OK);
    size_t need = tosac_program_arena_size(p);
    static _Alignas(16) uint8_t arena[1 << 14];
    EXPECT(need <= sizeof arena);
    EXPECT_EQ_I(tosac_program_set_arena(p, arena, sizeof arena), TOSAC_OK);
    for (int rep = 0; rep < 10; rep++) {
        set_x(p, 7);
        EXPECT_EQ_I(tosac_program_invoke(p, NULL), TOSAC_OK);
        for (int i = 0; i < 6; i++) EXPECT_EQ_I(y[i], 2 * (8 + i));
    }
    EXPECT_EQ_I(c.calls, 0);
    tosac_set_allocator(NULL);
    tosac_program_destroy(p);
    tosac_graph_destroy(g);
}

/*
 * Fails allocation N of create for N = 1, 2, ... until create succeeds: every failure is clean (no
 * program, nothing leaked). Once validation is past (create validates first; the allocations it
 * makes are counted separately) the status must be TOSAC_ERR_NOMEM; inside the validator any
 * failure status is accepted (its handling of out-of-memory is the validator's business and is
 * only reported here).
 */
static void test_create_fault_injection(void)
{
    tosac_graph *g = build();
    counter v = {0, 0, 0, false};
    install(&v);
    tosac_validate_opts vo = tosac_program_opts_default().validate;
    EXPECT_EQ_I(tosac_validate(g, &vo, NULL), TOSAC_OK);
    tosac_set_allocator(NULL);
    long n;
    int failures = 0, validator_other = 0;
    for (n = 1; n < 100000; n++) {
        counter c = {0, 0, n, false};
        install(&c);
        tosac_program *p = NULL;
        tosac_status s = tosac_program_create(g, NULL, &p, NULL);
        if (s == TOSAC_OK) {
            EXPECT(p != NULL);
            /* the created program works with the allocator now failing everything */
            c.fail_all = true;
            long before = c.calls;
            set_x(p, 1);
            EXPECT_EQ_I(tosac_program_invoke(p, NULL), TOSAC_OK);
            EXPECT_EQ_I(c.calls, before);
            tosac_program_destroy(p);
            EXPECT_EQ_I(c.live, 0);
            tosac_set_allocator(NULL);
            break;
        }
        failures++;
        EXPECT(p == NULL);
        if (n > v.calls)
            EXPECT_EQ_I(s, TOSAC_ERR_NOMEM);
        else if (s != TOSAC_ERR_NOMEM)
            validator_other++;
        if (c.live != 0) fprintf(stderr, "  allocation %ld failed: %ld blocks leaked\n", n, c.live);
        EXPECT_EQ_I(c.live, 0);
        tosac_set_allocator(NULL);
    }
    printf("create: %d injected allocation failures (%ld in validation), all clean; succeeds from allocation %ld on\n",
           failures, v.calls, n);
    if (validator_other)
        printf("note: %d allocation failures inside tosac_validate were reported as another status than NOMEM\n",
               validator_other);
    EXPECT(failures > 10 && n > v.calls);
    tosac_graph_destroy(g);
}

/* The same with a diagnostics sink: messages may be dropped, nothing leaks once it is freed. */
static void test_create_fault_injection_with_diag(void)
{
    tosac_graph *g = build();
    for (long n = 1; n < 100000; n++) {
        counter c = {0, 0, n, false};
        install(&c);
        tosac_diag *d = tosac_diag_create();
        tosac_program *p = NULL;
        tosac_status s = tosac_program_create(g, NULL, &p, d);
        tosac_program_destroy(p);
        tosac_diag_destroy(d);
        EXPECT_EQ_I(c.live, 0);
        tosac_set_allocator(NULL);
        if (s == TOSAC_OK) break;
    }
    tosac_graph_destroy(g);
}

/* Bytes held through the allocator. */
static size_t g_bytes;
static void *b_alloc(void *ud, size_t size)
{
    (void)ud;
    void *p = malloc(size ? size : 1);
    if (p) g_bytes += size;
    return p;
}
static void b_free(void *ud, void *p, size_t size)
{
    (void)ud;
    if (p) g_bytes -= size;
    free(p);
}

/* tosac_program_memory_needs: `heap` is exactly what the program holds from the allocator (a
   byte-counting allocator around create and destroy), the rest are the plan's figures. */
static void test_memory_needs(void)
{
    tosac_allocator a = {NULL, b_alloc, b_free};
    tosac_set_allocator(&a);
    tosac_graph *g = build();
    size_t before = g_bytes;
    tosac_program *p = NULL;
    EXPECT_EQ_I(tosac_program_create(g, NULL, &p, NULL), TOSAC_OK);
    size_t held = g_bytes - before;
    tosac_program_memory m;
    EXPECT_EQ_I(tosac_program_memory_needs(p, &m), TOSAC_OK);
    EXPECT_EQ_I(m.heap, held);
    EXPECT(m.bookkeeping > 0 && m.bookkeeping < m.heap);
    EXPECT_EQ_I(m.arena, tosac_program_arena_size(p));
    EXPECT_EQ_I(m.arena_lower_bound, tosac_program_arena_lower_bound(p));
    EXPECT_EQ_I(m.constants, tosac_program_const_bytes(p));
    EXPECT_EQ_I(m.variables, tosac_program_variable_bytes(p));
    EXPECT_EQ_I(m.prepared, tosac_program_prepared_size(p));
    EXPECT_EQ_I(tosac_program_memory_needs(NULL, &m), TOSAC_ERR_INVALID_ARG);
    EXPECT_EQ_I(tosac_program_memory_needs(p, NULL), TOSAC_ERR_INVALID_ARG);
    tosac_program_destroy(p);
    EXPECT_EQ_I(g_bytes, before);
    tosac_graph_destroy(g);
    tosac_set_allocator(NULL);
}

int main(void)
{
    RUN(test_memory_needs);
    RUN(test_invoke_allocates_nothing);
    RUN(test_create_fault_injection);
    RUN(test_create_fault_injection_with_diag);
    return test_summary();
}
