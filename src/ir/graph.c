/* Graph IR construction: regions, blocks, values, operators, name lookup. */
#include "ir/graph.h"

#include <string.h>

#include "core/alloc.h"

bool tosac_arena_grow(tosac_arena *a, void **p, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap) return true;
    uint32_t ncap = *cap ? *cap : 4;
    while (ncap < need) {
        if (ncap > UINT32_MAX / 2) return false;
        ncap *= 2;
    }
    size_t bytes;
    if (!tosac_mul_size(ncap, elem, &bytes)) return false;
    void *np = tosac_arena_alloc(a, bytes);
    if (!np) return false;
    if (*p && *cap) memcpy(np, *p, (size_t)*cap * elem);
    *p = np;
    *cap = ncap;
    return true;
}

#define GROW(g, arr, n, cap) tosac_arena_grow(&(g)->arena, (void **)&(arr), &(cap), (n) + 1, sizeof(*(arr)))

tosac_graph *tosac_graph_create(void)
{
    tosac_graph *g = tosac_calloc(1, sizeof(*g));
    if (!g) return NULL;
    tosac_arena_init(&g->arena);
    g->ver_major = 1;
    g->ver_minor = 0;
    g->ver_patch = 0;
    g->ver_draft = false;
    return g;
}

void tosac_graph_destroy(tosac_graph *g)
{
    if (!g) return;
    tosac_arena_deinit(&g->arena);
    tosac_free(g, sizeof(*g));
}

void tosac_graph_set_version(tosac_graph *g, int32_t major, int32_t minor, int32_t patch, bool draft)
{
    g->ver_major = major;
    g->ver_minor = minor;
    g->ver_patch = patch;
    g->ver_draft = draft;
}

tosac_region *tosac_graph_add_region(tosac_graph *g, const char *name)
{
    if (!g || !name || !GROW(g, g->regions, g->n_regions, g->cap_regions)) return NULL;
    tosac_region *r = tosac_arena_alloc(&g->arena, sizeof(*r));
    if (!r || !(r->name = tosac_arena_strdup(&g->arena, name))) return NULL;
    r->graph = g;
    g->regions[g->n_regions++] = r;
    return r;
}

tosac_block *tosac_region_add_block(tosac_region *r, const char *name)
{
    if (!r || !name) return NULL;
    tosac_graph *g = r->graph;
    if (!GROW(g, r->blocks, r->n_blocks, r->cap_blocks)) return NULL;
    tosac_block *b = tosac_arena_alloc(&g->arena, sizeof(*b));
    if (!b || !(b->name = tosac_arena_strdup(&g->arena, name))) return NULL;
    b->region = r;
    b->graph = g;
    r->blocks[r->n_blocks++] = b;
    return b;
}

/*
 * Name hash with a per-block seed taken from the block's address: lookups never depend on the
 * seed's value (output stays deterministic), but a hostile file cannot precompute names that all
 * collide and turn reading into quadratic time.
 */
static uint32_t hash_str(const tosac_block *b, const char *s)
{
    uint64_t h = 14695981039346656037ull ^ (uint64_t)(uintptr_t)b;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ull;
    h ^= h >> 31; /* splitmix64 finalizer: every input bit reaches the low bits used as index */
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 31;
    return (uint32_t)h;
}

tosac_value *tosac_block_find(const tosac_block *b, const char *name)
{
    if (!b || !name || !b->hash_cap) return NULL;
    uint32_t mask = b->hash_cap - 1;
    for (uint32_t i = hash_str(b, name) & mask;; i = (i + 1) & mask) {
        tosac_value *v = b->hash[i];
        if (!v) return NULL;
        if (!strcmp(v->name, name)) return v;
    }
}

static bool hash_insert(tosac_block *b, tosac_value *v)
{
    if ((b->hash_n + 1) * 2 > b->hash_cap) {
        uint32_t ncap = b->hash_cap ? b->hash_cap * 2 : 64;
        size_t bytes;
        if (ncap < b->hash_cap || !tosac_mul_size(ncap, sizeof(*b->hash), &bytes)) return false;
        tosac_value **nh = tosac_arena_alloc(&b->graph->arena, bytes);
        if (!nh) return false;
        for (uint32_t i = 0; i < b->hash_cap; i++) {
            tosac_value *w = b->hash[i];
            if (!w) continue;
            uint32_t j = hash_str(b, w->name) & (ncap - 1);
            while (nh[j]) j = (j + 1) & (ncap - 1);
            nh[j] = w;
        }
        b->hash = nh;
        b->hash_cap = ncap;
    }
    uint32_t mask = b->hash_cap - 1;
    uint32_t i = hash_str(b, v->name) & mask;
    while (b->hash[i]) {
        /* duplicates are kept in the lists (the validator reports them) but only the first is found */
        if (!strcmp(b->hash[i]->name, v->name)) return true;
        i = (i + 1) & mask;
    }
    b->hash[i] = v;
    b->hash_n++;
    return true;
}

bool tosac_block_rehash(tosac_block *b)
{
    if (b->hash_cap) memset(b->hash, 0, (size_t)b->hash_cap * sizeof(*b->hash));
    b->hash_n = 0;
    for (uint32_t i = 0; i < b->n_tensors; i++)
        if (!hash_insert(b, b->tensors[i])) return false;
    for (uint32_t i = 0; i < b->n_shapes; i++)
        if (!hash_insert(b, b->shapes[i])) return false;
    for (uint32_t i = 0; i < b->n_undeclared; i++)
        if (!hash_insert(b, b->undeclared[i])) return false;
    return true;
}

static tosac_value *new_value(tosac_block *b, const char *name, tosac_dtype t, int rank, const int64_t *shape)
{
    if (!b || !name || rank < 0 || rank > TOSAC_MAX_RANK) return NULL;
    tosac_arena *a = &b->graph->arena;
    tosac_value *v = tosac_arena_alloc(a, sizeof(*v));
    if (!v || !(v->name = tosac_arena_strdup(a, name))) return NULL;
    v->block = b;
    v->dtype = t;
    v->rank = rank;
    v->declared = true;
    if (rank > 0) {
        v->shape = tosac_arena_alloc(a, (size_t)rank * sizeof(int64_t));
        if (!v->shape) return NULL;
        if (shape) memcpy(v->shape, shape, (size_t)rank * sizeof(int64_t));
    }
    return v;
}

tosac_value *tosac_block_add_tensor(tosac_block *b, const char *name, tosac_dtype t, int rank, const int64_t *shape)
{
    tosac_value *v = new_value(b, name, t, rank, shape);
    if (!v || !GROW(b->graph, b->tensors, b->n_tensors, b->cap_tensors) || !hash_insert(b, v)) return NULL;
    v->index = b->n_tensors;
    b->tensors[b->n_tensors++] = v;
    return v;
}

tosac_value *tosac_block_add_shape(tosac_block *b, const char *name, uint32_t count)
{
    int64_t dim = count;
    tosac_value *v = new_value(b, name, TOSAC_DTYPE_SHAPE, 1, &dim);
    if (!v || !GROW(b->graph, b->shapes, b->n_shapes, b->cap_shapes) || !hash_insert(b, v)) return NULL;
    v->is_shape = true;
    v->index = b->n_shapes;
    b->shapes[b->n_shapes++] = v;
    return v;
}

tosac_value *tosac_block_get_or_placeholder(tosac_block *b, const char *name)
{
    tosac_value *v = tosac_block_find(b, name);
    if (v) return v;
    v = new_value(b, name, TOSAC_DTYPE_UNKNOWN, 0, NULL);
    if (!v || !GROW(b->graph, b->undeclared, b->n_undeclared, b->cap_undeclared) || !hash_insert(b, v))
        return NULL;
    v->declared = false;
    v->index = b->n_undeclared;
    b->undeclared[b->n_undeclared++] = v;
    return v;
}

tosac_node *tosac_block_add_node(tosac_block *b, tosac_op op, uint32_t n_in, tosac_value *const *in, uint32_t n_out,
                                 tosac_value *const *out)
{
    if (!b || (n_in && !in) || (n_out && !out)) return NULL;
    /* every operand present: the validator, the writer and the passes index them without checks */
    for (uint32_t k = 0; k < n_in; k++)
        if (!in[k]) return NULL;
    for (uint32_t k = 0; k < n_out; k++)
        if (!out[k]) return NULL;
    tosac_arena *a = &b->graph->arena;
    if (!GROW(b->graph, b->nodes, b->n_nodes, b->cap_nodes)) return NULL;
    tosac_node *n = tosac_arena_alloc(a, sizeof(*n));
    if (!n) return NULL;
    n->op = (uint32_t)op;
    n->attr_type = (uint8_t)(tosac_op_valid((uint32_t)op) ? op : 0);
    n->n_inputs = n_in;
    n->n_outputs = n_out;
    if (n_in && !(n->inputs = tosac_arena_memdup(a, in, n_in * sizeof(*in)))) return NULL;
    if (n_out && !(n->outputs = tosac_arena_memdup(a, out, n_out * sizeof(*out)))) return NULL;
    n->block = b;
    n->index = b->n_nodes;
    b->nodes[b->n_nodes++] = n;
    return n;
}

static tosac_value *add_const(tosac_block *b, const char *name, tosac_dtype t, int rank, const int64_t *shape,
                              const void *data, size_t nbytes, bool copy)
{
    tosac_value *v = tosac_block_add_tensor(b, name, t, rank, shape);
    if (!v) return NULL;
    /* zero bytes is "no data", as the file format cannot tell the two apart */
    if (nbytes && !(v->data = copy ? tosac_arena_memdup(&b->graph->arena, data, nbytes) : data)) return NULL;
    v->data_len = nbytes;
    if (!tosac_block_add_node(b, TOSAC_OP_CONST, 0, NULL, 1, &v)) return NULL;
    v->producer = b->nodes[b->n_nodes - 1];
    return v;
}

tosac_value *tosac_block_add_const(tosac_block *b, const char *name, tosac_dtype t, int rank, const int64_t *shape,
                                   const void *data, size_t nbytes)
{
    return add_const(b, name, t, rank, shape, data, nbytes, true);
}

tosac_value *tosac_block_add_const_adopt(tosac_block *b, const char *name, tosac_dtype t, int rank,
                                         const int64_t *shape, const void *data, size_t nbytes)
{
    return add_const(b, name, t, rank, shape, data, nbytes, false);
}

tosac_value *tosac_block_add_const_shape(tosac_block *b, const char *name, const int64_t *values, uint32_t count)
{
    tosac_value *v = tosac_block_add_shape(b, name, count);
    if (!v) return NULL;
    if (count) {
        uint8_t *d = tosac_arena_alloc(&b->graph->arena, (size_t)count * 8);
        if (!d) return NULL;
        for (uint32_t i = 0; i < count; i++) {
            uint64_t u = (uint64_t)values[i];
            for (int k = 0; k < 8; k++) d[i * 8 + (uint32_t)k] = (uint8_t)(u >> (8 * k));
        }
        v->data = d;
        v->data_len = (size_t)count * 8;
    }
    if (!tosac_block_add_node(b, TOSAC_OP_CONST_SHAPE, 0, NULL, 1, &v)) return NULL;
    v->producer = b->nodes[b->n_nodes - 1];
    return v;
}

tosac_status tosac_block_add_input(tosac_block *b, tosac_value *v)
{
    if (!b || !v) return TOSAC_ERR_INVALID_ARG;
    if (!GROW(b->graph, b->inputs, b->n_inputs, b->cap_inputs)) return TOSAC_ERR_NOMEM;
    b->inputs[b->n_inputs++] = v;
    return TOSAC_OK;
}

tosac_status tosac_block_add_output(tosac_block *b, tosac_value *v)
{
    if (!b || !v) return TOSAC_ERR_INVALID_ARG;
    if (!GROW(b->graph, b->outputs, b->n_outputs, b->cap_outputs)) return TOSAC_ERR_NOMEM;
    b->outputs[b->n_outputs++] = v;
    return TOSAC_OK;
}

static tosac_status check_attr(const tosac_node *n, unsigned id, tosac_attr_kind want1, tosac_attr_kind want2)
{
    if (!n || id >= TOSAC_ATTR_MAX_FIELDS) return TOSAC_ERR_INVALID_ARG;
    tosac_attr_kind k = tosac_op_attr_kind(n->op, id);
    if (k == TOSAC_AK_NONE) return TOSAC_ERR_INVALID_ARG;
    if (want1 != TOSAC_AK_NONE && k != want1 && k != want2) return TOSAC_ERR_INVALID_ARG;
    return TOSAC_OK;
}

tosac_status tosac_node_set_int(tosac_node *n, unsigned id, int64_t v)
{
    tosac_status s = check_attr(n, id, TOSAC_AK_NONE, TOSAC_AK_NONE);
    if (s) return s;
    tosac_attr_kind k = tosac_op_attr_kind(n->op, id);
    if (k == TOSAC_AK_I32V || k == TOSAC_AK_BYTES || k == TOSAC_AK_BYTES8 || k == TOSAC_AK_STR)
        return TOSAC_ERR_INVALID_ARG;
    n->attr[id].present = true;
    n->attr[id].i = v;
    return TOSAC_OK;
}

tosac_status tosac_node_set_ints(tosac_node *n, unsigned id, const int32_t *v, uint32_t count)
{
    tosac_status s = check_attr(n, id, TOSAC_AK_I32V, TOSAC_AK_I32V);
    if (s) return s;
    void *d = count ? tosac_arena_memdup(&n->block->graph->arena, v, count * sizeof(int32_t)) : NULL;
    if (count && !d) return TOSAC_ERR_NOMEM;
    n->attr[id] = (tosac_attr_val){true, 0, d, count};
    return TOSAC_OK;
}

tosac_status tosac_node_set_bytes(tosac_node *n, unsigned id, const void *v, uint32_t len)
{
    tosac_status s = check_attr(n, id, TOSAC_AK_BYTES, TOSAC_AK_BYTES8);
    if (s) return s;
    void *d = len ? tosac_arena_memdup(&n->block->graph->arena, v, len) : NULL;
    if (len && !d) return TOSAC_ERR_NOMEM;
    n->attr[id] = (tosac_attr_val){true, 0, d, len};
    return TOSAC_OK;
}

tosac_status tosac_node_set_str(tosac_node *n, unsigned id, const char *str)
{
    tosac_status s = check_attr(n, id, TOSAC_AK_STR, TOSAC_AK_STR);
    if (s) return s;
    char *d = tosac_arena_strdup(&n->block->graph->arena, str);
    if (!d) return TOSAC_ERR_NOMEM;
    n->attr[id] = (tosac_attr_val){true, 0, d, (uint32_t)strlen(str)};
    return TOSAC_OK;
}

tosac_status tosac_node_set_location(tosac_node *n, const char *text)
{
    if (!n || !text) return TOSAC_ERR_INVALID_ARG;
    if (!(n->location = tosac_arena_strdup(&n->block->graph->arena, text))) return TOSAC_ERR_NOMEM;
    return TOSAC_OK;
}

tosac_region *tosac_graph_find_region(const tosac_graph *g, const char *name)
{
    for (uint32_t i = 0; g && name && i < g->n_regions; i++)
        if (!strcmp(g->regions[i]->name, name)) return g->regions[i];
    return NULL;
}

tosac_block *tosac_region_find_block(const tosac_region *r, const char *name)
{
    for (uint32_t i = 0; r && name && i < r->n_blocks; i++)
        if (!strcmp(r->blocks[i]->name, name)) return r->blocks[i];
    return NULL;
}

void tosac_graph_link(tosac_graph *g)
{
    for (uint32_t r = 0; r < g->n_regions; r++)
        for (uint32_t bi = 0; bi < g->regions[r]->n_blocks; bi++) {
            tosac_block *b = g->regions[r]->blocks[bi];
            for (uint32_t i = 0; i < b->n_nodes; i++)
                for (uint32_t o = 0; o < b->nodes[i]->n_outputs; o++)
                    if (!b->nodes[i]->outputs[o]->producer) b->nodes[i]->outputs[o]->producer = b->nodes[i];
        }
}

int64_t tosac_value_nelem(const tosac_value *v)
{
    int64_t n = 1;
    for (int32_t i = 0; i < v->rank; i++) {
        int64_t d = v->shape[i];
        if (d < 0 || (d != 0 && n > INT64_MAX / d)) return -1;
        n *= d;
    }
    return n;
}

void tosac_string_free(char *s)
{
    if (s) tosac_free(s, strlen(s) + 1);
}
