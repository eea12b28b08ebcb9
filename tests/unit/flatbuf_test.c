/* Tests for the generic flatbuffers reader/builder (src/tosa/flatbuf.[ch]). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "harness/test.h"
#include "tosa/flatbuf.h"
#include "tosac/status.h"

/* ------------------------------------------------------------------------------------------- */
/* Helpers                                                                                     */

static void le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static void le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t mk_i32_vec(fb_builder *b, const int32_t *v, uint32_t n)
{
    uint8_t tmp[64 * 4];
    if (n > 64) return 0;
    for (uint32_t i = 0; i < n; i++) le32(tmp + 4 * i, (uint32_t)v[i]);
    return fb_create_vector(b, n ? tmp : NULL, n, 4, 0);
}

static uint32_t mk_str(fb_builder *b, const char *s) { return fb_create_string(b, s, strlen(s)); }

/* Copies into an exactly-sized heap block so that ASan catches any overread. */
static uint8_t *dup_exact(const uint8_t *p, size_t n)
{
    uint8_t *d = malloc(n ? n : 1);
    if (d && n) memcpy(d, p, n);
    return d;
}

static bool diag_contains(const tosac_diag *d, const char *needle)
{
    for (size_t i = 0; i < tosac_diag_count(d); i++) {
        const char *m = tosac_diag_message(d, i, NULL);
        if (m && strstr(m, needle)) return true;
    }
    return false;
}

/* ------------------------------------------------------------------------------------------- */
/* The sample buffer: a root table using every field kind, with nested children.               */
/*
 * Root: 0 u8, 1 bool, 2 i32, 3 u32, 4 u64, 5 string, 6 Child, 7 [Child], 8 [int32],
 *       9 [ubyte] (8-aligned), 10 [string], 11 i64, 12 u16, (13 absent), 14 bool false.
 * Child: 0 string, 1 i32, 2 [ubyte] (8-aligned).
 */

static uint32_t mk_child(fb_builder *b, const char *name, int32_t v, const uint8_t *bytes, uint32_t n)
{
    uint32_t s = mk_str(b, name);
    uint32_t d = fb_create_vector(b, bytes, n, 1, 8);
    fb_table_begin(b);
    fb_add_offset(b, 0, s);
    fb_add_i32(b, 1, v);
    fb_add_offset(b, 2, d);
    return fb_table_end(b);
}

static tosac_status build_sample(uint8_t **out, size_t *out_len)
{
    fb_builder b;
    fb_builder_init(&b);
    static const uint8_t a_bytes[] = {1, 2, 3}, b_bytes[] = {4, 5};
    static const uint8_t payload[] = {9, 8, 7, 6, 5};
    static const int32_t ints[] = {1, -2, 3};
    uint32_t ca = mk_child(&b, "alpha", 7, a_bytes, 3);
    uint32_t kids[2];
    kids[0] = mk_child(&b, "beta", 8, b_bytes, 2);
    kids[1] = mk_child(&b, "gamma", 9, NULL, 0);
    uint32_t kv = fb_create_offset_vector(&b, kids, 2);
    uint32_t iv = mk_i32_vec(&b, ints, 3);
    uint32_t pv = fb_create_vector(&b, payload, 5, 1, 8);
    uint32_t strs[3] = {mk_str(&b, "x"), mk_str(&b, "yz"), mk_str(&b, "")};
    uint32_t sv = fb_create_offset_vector(&b, strs, 3);
    uint32_t name = mk_str(&b, "hello");
    fb_table_begin(&b);
    fb_add_u8(&b, 0, 200);
    fb_add_bool(&b, 1, true);
    fb_add_i32(&b, 2, -123456);
    fb_add_u32(&b, 3, 0xDEADBEEFu);
    fb_add_u64(&b, 4, 0x0123456789ABCDEFull);
    fb_add_offset(&b, 5, name);
    fb_add_offset(&b, 6, ca);
    fb_add_offset(&b, 7, kv);
    fb_add_offset(&b, 8, iv);
    fb_add_offset(&b, 9, pv);
    fb_add_offset(&b, 10, sv);
    fb_add_i64(&b, 11, -5);
    fb_add_u16(&b, 12, 0xBEEF);
    fb_add_bool(&b, 14, false);
    uint32_t root = fb_table_end(&b);
    tosac_status st = fb_finish(&b, root, "TEST", out, out_len);
    fb_builder_free(&b);
    return st;
}

typedef struct child_vals {
    const char *name;
    int32_t v;
    uint32_t nbytes;
    uint8_t bytes[8];
    uint32_t bytes_pos;
} child_vals;

typedef struct sample_vals {
    uint8_t u8;
    bool b1, b14, p13, p14;
    int32_t i32;
    uint32_t u32;
    uint64_t u64;
    int64_t i64;
    uint16_t u16;
    const char *name;
    uint32_t name_len;
    child_vals child, kids[2];
    uint32_t nkids;
    int32_t ints[3];
    uint32_t nints;
    uint8_t payload[5];
    uint32_t npayload, payload_pos;
    const char *strs[3];
    uint32_t nstrs;
} sample_vals;

static tosac_status read_child(const fb_table *t, child_vals *c)
{
    tosac_status st;
    fb_vec v;
    if ((st = fb_get_string(t, 0, &c->name, NULL, "child.name")) != TOSAC_OK) return st;
    if ((st = fb_get_i32(t, 1, 0, &c->v, NULL, "child.v")) != TOSAC_OK) return st;
    if ((st = fb_get_vector(t, 2, 1, &v, "child.bytes")) != TOSAC_OK) return st;
    c->nbytes = v.count;
    c->bytes_pos = v.pos;
    for (uint32_t i = 0; i < v.count && i < 8; i++) c->bytes[i] = fb_vec_u8(&v, i);
    return TOSAC_OK;
}

/* Reads every field of the sample schema; returns the first error. */
static tosac_status read_sample(const fb_reader *r, const char *ident, sample_vals *s)
{
    tosac_status st;
    fb_table root, t;
    fb_vec v;
    bool present;
    memset(s, 0, sizeof(*s));
    if ((st = fb_root(r, ident, &root)) != TOSAC_OK) return st;
    if ((st = fb_get_u8(&root, 0, 0, &s->u8, NULL, "u8")) != TOSAC_OK) return st;
    if ((st = fb_get_bool(&root, 1, false, &s->b1, NULL, "b1")) != TOSAC_OK) return st;
    if ((st = fb_get_i32(&root, 2, 0, &s->i32, NULL, "i32")) != TOSAC_OK) return st;
    if ((st = fb_get_u32(&root, 3, 0, &s->u32, NULL, "u32")) != TOSAC_OK) return st;
    if ((st = fb_get_u64(&root, 4, 0, &s->u64, NULL, "u64")) != TOSAC_OK) return st;
    if ((st = fb_get_string(&root, 5, &s->name, &s->name_len, "name")) != TOSAC_OK) return st;
    if ((st = fb_get_table(&root, 6, &t, &present, "child")) != TOSAC_OK) return st;
    if (present && (st = read_child(&t, &s->child)) != TOSAC_OK) return st;
    if ((st = fb_get_vector(&root, 7, 4, &v, "kids")) != TOSAC_OK) return st;
    s->nkids = v.count;
    for (uint32_t i = 0; i < v.count; i++) {
        if ((st = fb_vec_table(&v, i, &t, "kids[]")) != TOSAC_OK) return st;
        if (i < 2 && (st = read_child(&t, &s->kids[i])) != TOSAC_OK) return st;
    }
    if ((st = fb_get_vector(&root, 8, 4, &v, "ints")) != TOSAC_OK) return st;
    s->nints = v.count;
    for (uint32_t i = 0; i < v.count && i < 3; i++) s->ints[i] = fb_vec_i32(&v, i);
    if ((st = fb_get_vector(&root, 9, 1, &v, "payload")) != TOSAC_OK) return st;
    s->npayload = v.count;
    s->payload_pos = v.pos;
    if (v.count <= 5) memcpy(s->payload, fb_vec_data(&v), v.count);
    if ((st = fb_get_vector(&root, 10, 4, &v, "strs")) != TOSAC_OK) return st;
    s->nstrs = v.count;
    for (uint32_t i = 0; i < v.count; i++) {
        const char *str;
        if ((st = fb_vec_string(&v, i, &str, NULL, "strs[]")) != TOSAC_OK) return st;
        if (i < 3) s->strs[i] = str;
    }
    if ((st = fb_get_i64(&root, 11, 0, &s->i64, NULL, "i64")) != TOSAC_OK) return st;
    if ((st = fb_get_u16(&root, 12, 0, &s->u16, NULL, "u16")) != TOSAC_OK) return st;
    uint8_t dummy;
    if ((st = fb_get_u8(&root, 13, 42, &dummy, &s->p13, "absent")) != TOSAC_OK) return st;
    if ((st = fb_get_bool(&root, 14, true, &s->b14, &s->p14, "b14")) != TOSAC_OK) return st;
    return TOSAC_OK;
}

/* ------------------------------------------------------------------------------------------- */
/* Generic walker: interprets every field every possible way; must never crash.                */

static unsigned g_sink;

static void touch(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) g_sink += p[i];
}

static void walk_generic(const fb_table *t)
{
    unsigned nf = (t->vt_len - 4u) / 2u + 2u;
    for (unsigned id = 0; id < nf; id++) {
        uint8_t u8;
        bool bo;
        uint16_t u16;
        int32_t i32;
        uint32_t u32, len;
        int64_t i64;
        uint64_t u64;
        const char *s;
        fb_table sub;
        fb_vec v;
        if (fb_get_u8(t, id, 0, &u8, NULL, "g") == TOSAC_OK) g_sink += u8;
        if (fb_get_bool(t, id, 0, &bo, NULL, "g") == TOSAC_OK) g_sink += bo;
        if (fb_get_u16(t, id, 0, &u16, NULL, "g") == TOSAC_OK) g_sink += u16;
        if (fb_get_i32(t, id, 0, &i32, NULL, "g") == TOSAC_OK) g_sink += (unsigned)i32;
        if (fb_get_u32(t, id, 0, &u32, NULL, "g") == TOSAC_OK) g_sink += u32;
        if (fb_get_i64(t, id, 0, &i64, NULL, "g") == TOSAC_OK) g_sink += (unsigned)i64;
        if (fb_get_u64(t, id, 0, &u64, NULL, "g") == TOSAC_OK) g_sink += (unsigned)u64;
        if (fb_get_string(t, id, &s, &len, "g") == TOSAC_OK && s) touch((const uint8_t *)s, len + 1);
        bool present;
        if (fb_get_table(t, id, &sub, &present, "g") == TOSAC_OK && present) walk_generic(&sub);
        static const uint32_t sizes[] = {1, 2, 4, 8, 6};
        for (unsigned k = 0; k < 5; k++) {
            if (fb_get_vector(t, id, sizes[k], &v, "g") != TOSAC_OK) continue;
            touch(fb_vec_data(&v), (size_t)v.count * v.elem_size);
            if (sizes[k] == 4) {
                for (uint32_t i = 0; i < v.count && i < 16; i++) {
                    if (fb_vec_string(&v, i, &s, &len, "g") == TOSAC_OK) touch((const uint8_t *)s, len + 1);
                    if (fb_vec_table(&v, i, &sub, "g") == TOSAC_OK) walk_generic(&sub);
                }
                g_sink += (unsigned)fb_vec_i32(&v, 0) + fb_vec_u32(&v, v.count);
            }
            if (sizes[k] == 8) g_sink += (unsigned)fb_vec_i64(&v, 0);
        }
    }
}

/* Reads `buf` (copied to an exact-size block) both ways; returns the sample-walk status. */
static tosac_status hostile_read(const uint8_t *buf, size_t len, tosac_diag *d)
{
    uint8_t *copy = dup_exact(buf, len);
    size_t budget = 400;
    fb_reader r = {copy, len, d, "hostile", 8, &budget};
    sample_vals s;
    tosac_status st = read_sample(&r, NULL, &s);
    if (st == TOSAC_OK) {
        /* A successful read must yield NUL-terminated strings inside the buffer. */
        if (s.name) touch((const uint8_t *)s.name, s.name_len + 1);
    }
    fb_table root;
    budget = 400;
    if (fb_root(&r, NULL, &root) == TOSAC_OK) walk_generic(&root);
    if (d) tosac_diag_clear(d);
    free(copy);
    return st;
}

/* ------------------------------------------------------------------------------------------- */
/* Tests                                                                                       */

static void test_roundtrip(void)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    EXPECT_EQ_I(build_sample(&buf, &len), TOSAC_OK);
    if (!buf) return;
    tosac_diag *d = tosac_diag_create();
    fb_reader r = {buf, len, d, "sample", 0, NULL};
    sample_vals s;
    EXPECT_EQ_I(read_sample(&r, "TEST", &s), TOSAC_OK);
    EXPECT_EQ_I(tosac_diag_count(d), 0);
    EXPECT_EQ_I(s.u8, 200);
    EXPECT(s.b1);
    EXPECT_EQ_I(s.i32, -123456);
    EXPECT_EQ_I(s.u32, 0xDEADBEEFu);
    EXPECT(s.u64 == 0x0123456789ABCDEFull);
    EXPECT_EQ_I(s.i64, -5);
    EXPECT_EQ_I(s.u16, 0xBEEF);
    EXPECT_STREQ(s.name, "hello");
    EXPECT_EQ_I(s.name_len, 5);
    EXPECT_STREQ(s.child.name, "alpha");
    EXPECT_EQ_I(s.child.v, 7);
    EXPECT_EQ_I(s.child.nbytes, 3);
    EXPECT(s.child.bytes[0] == 1 && s.child.bytes[1] == 2 && s.child.bytes[2] == 3);
    EXPECT_EQ_I(s.nkids, 2);
    EXPECT_STREQ(s.kids[0].name, "beta");
    EXPECT_EQ_I(s.kids[0].v, 8);
    EXPECT_EQ_I(s.kids[0].nbytes, 2);
    EXPECT(s.kids[0].bytes[0] == 4 && s.kids[0].bytes[1] == 5);
    EXPECT_STREQ(s.kids[1].name, "gamma");
    EXPECT_EQ_I(s.kids[1].v, 9);
    EXPECT_EQ_I(s.kids[1].nbytes, 0);
    EXPECT_EQ_I(s.nints, 3);
    EXPECT(s.ints[0] == 1 && s.ints[1] == -2 && s.ints[2] == 3);
    EXPECT_EQ_I(s.npayload, 5);
    EXPECT(memcmp(s.payload, "\x09\x08\x07\x06\x05", 5) == 0);
    EXPECT_EQ_I(s.nstrs, 3);
    EXPECT_STREQ(s.strs[0], "x");
    EXPECT_STREQ(s.strs[1], "yz");
    EXPECT_STREQ(s.strs[2], "");
    EXPECT(!s.p13);
    EXPECT(s.p14);
    EXPECT(!s.b14);
    EXPECT(memcmp(buf + 4, "TEST", 4) == 0);
    tosac_diag_destroy(d);
    tosac_free(buf, len);
}

/* Field position in the buffer (0 if absent), read straight from the vtable. */
static uint32_t field_pos(const fb_table *t, unsigned id)
{
    if (4 + 2 * id + 2 > t->vt_len) return 0;
    uint16_t o = fb_le_u16(t->r->buf + t->vt + 4 + 2 * id);
    return o ? t->pos + o : 0;
}

static void test_alignment(void)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    EXPECT_EQ_I(build_sample(&buf, &len), TOSAC_OK);
    if (!buf) return;
    fb_reader r = {buf, len, NULL, "sample", 0, NULL};
    fb_table root, t;
    fb_vec v;
    EXPECT_EQ_I(len % 8, 0);
    EXPECT_EQ_I(fb_root(&r, "TEST", &root), TOSAC_OK);
    EXPECT_EQ_I(root.pos % 4, 0);
    EXPECT_EQ_I(field_pos(&root, 2) % 4, 0);
    EXPECT_EQ_I(field_pos(&root, 3) % 4, 0);
    EXPECT_EQ_I(field_pos(&root, 4) % 8, 0);
    EXPECT_EQ_I(field_pos(&root, 11) % 8, 0);
    EXPECT_EQ_I(field_pos(&root, 12) % 2, 0);
    for (unsigned id = 5; id <= 10; id++) EXPECT_EQ_I(field_pos(&root, id) % 4, 0);
    EXPECT_EQ_I(fb_get_vector(&root, 9, 1, &v, "payload"), TOSAC_OK);
    EXPECT_EQ_I(v.pos % 8, 0);
    EXPECT_EQ_I(fb_get_vector(&root, 8, 4, &v, "ints"), TOSAC_OK);
    EXPECT_EQ_I(v.pos % 4, 0);
    EXPECT_EQ_I(fb_get_table(&root, 6, &t, NULL, "child"), TOSAC_OK);
    EXPECT_EQ_I(fb_get_vector(&t, 2, 1, &v, "child.bytes"), TOSAC_OK);
    EXPECT_EQ_I(v.pos % 8, 0);
    fb_vec kids;
    EXPECT_EQ_I(fb_get_vector(&root, 7, 4, &kids, "kids"), TOSAC_OK);
    uint32_t vt0 = t.vt;
    for (uint32_t i = 0; i < kids.count; i++) {
        EXPECT_EQ_I(fb_vec_table(&kids, i, &t, "kid"), TOSAC_OK);
        EXPECT_EQ_I(t.pos % 4, 0);
        EXPECT_EQ_I(t.depth, 1);
        EXPECT_EQ_I(t.vt, vt0); /* identical vtables are shared */
        EXPECT_EQ_I(fb_get_vector(&t, 2, 1, &v, "kid.bytes"), TOSAC_OK);
        EXPECT_EQ_I(v.pos % 8, 0);
    }
    tosac_free(buf, len);

    /* Many combinations of odd-sized objects before an 8-aligned payload and a u64 field. */
    for (unsigned pre = 0; pre < 24; pre++) {
        fb_builder b;
        fb_builder_init(&b);
        uint8_t bytes[24] = {0};
        uint32_t x = fb_create_vector(&b, bytes, pre, 1, 0);
        uint32_t y = fb_create_vector(&b, bytes, pre % 7 + 1, 1, 8);
        uint32_t s = fb_create_string(&b, "abc", pre % 4);
        fb_table_begin(&b);
        fb_add_u8(&b, 0, 1);
        fb_add_u64(&b, 1, 77);
        fb_add_offset(&b, 2, x);
        fb_add_offset(&b, 3, y);
        fb_add_u8(&b, 4, 2);
        fb_add_offset(&b, 5, s);
        uint32_t root2 = fb_table_end(&b);
        uint8_t *out = NULL;
        size_t out_len = 0;
        EXPECT_EQ_I(fb_finish(&b, root2, pre & 1 ? NULL : "ABCD", &out, &out_len), TOSAC_OK);
        fb_builder_free(&b);
        if (!out) continue;
        fb_reader r2 = {out, out_len, NULL, "align", 0, NULL};
        fb_table rt;
        uint64_t u64 = 0;
        const char *str = NULL;
        uint32_t slen = 99;
        EXPECT_EQ_I(fb_root(&r2, NULL, &rt), TOSAC_OK);
        EXPECT_EQ_I(fb_get_u64(&rt, 1, 0, &u64, NULL, "u64"), TOSAC_OK);
        EXPECT_EQ_I(u64, 77);
        EXPECT_EQ_I(field_pos(&rt, 1) % 8, 0);
        EXPECT_EQ_I(fb_get_vector(&rt, 3, 1, &v, "y"), TOSAC_OK);
        EXPECT_EQ_I(v.pos % 8, 0);
        EXPECT_EQ_I(v.count, pre % 7 + 1);
        EXPECT_EQ_I(fb_get_vector(&rt, 2, 1, &v, "x"), TOSAC_OK);
        EXPECT_EQ_I(v.count, pre);
        EXPECT_EQ_I((v.pos - 4) % 4, 0);
        EXPECT_EQ_I(fb_get_string(&rt, 5, &str, &slen, "s"), TOSAC_OK);
        EXPECT_EQ_I(slen, pre % 4);
        tosac_free(out, out_len);
    }
}

static void test_determinism(void)
{
    uint8_t *a = NULL, *b = NULL;
    size_t al = 0, bl = 0;
    EXPECT_EQ_I(build_sample(&a, &al), TOSAC_OK);
    EXPECT_EQ_I(build_sample(&b, &bl), TOSAC_OK);
    EXPECT(a && b && al == bl && memcmp(a, b, al) == 0);
    tosac_free(a, al);
    tosac_free(b, bl);

    /* reset reuses memory and gives the same bytes again */
    fb_builder bd;
    fb_builder_init(&bd);
    uint8_t *o1 = NULL, *o2 = NULL;
    size_t l1 = 0, l2 = 0;
    for (int pass = 0; pass < 2; pass++) {
        uint32_t s = mk_str(&bd, "same");
        fb_table_begin(&bd);
        fb_add_offset(&bd, 0, s);
        fb_add_i32(&bd, 3, 5);
        uint32_t t = fb_table_end(&bd);
        EXPECT_EQ_I(fb_finish(&bd, t, NULL, pass ? &o2 : &o1, pass ? &l2 : &l1), TOSAC_OK);
        fb_builder_reset(&bd);
    }
    EXPECT(o1 && o2 && l1 == l2 && memcmp(o1, o2, l1) == 0);
    fb_builder_free(&bd);
    tosac_free(o1, l1);
    tosac_free(o2, l2);
}

static void test_absent_and_defaults(void)
{
    fb_builder b;
    fb_builder_init(&b);
    fb_table_begin(&b);
    uint32_t t = fb_table_end(&b);
    uint8_t *buf = NULL;
    size_t len = 0;
    EXPECT_EQ_I(fb_finish(&b, t, NULL, &buf, &len), TOSAC_OK);
    fb_builder_free(&b);
    if (!buf) return;
    fb_reader r = {buf, len, NULL, NULL, 0, NULL};
    fb_table root, sub;
    EXPECT_EQ_I(fb_root(&r, NULL, &root), TOSAC_OK);
    EXPECT_EQ_I(root.vt_len, 4);
    uint8_t u8 = 0;
    bool bo = false, present = true;
    int32_t i32 = 0;
    uint32_t u32 = 0, slen = 9;
    uint64_t u64 = 0;
    const char *s = "x";
    fb_vec v;
    EXPECT_EQ_I(fb_get_u8(&root, 0, 17, &u8, &present, "u8"), TOSAC_OK);
    EXPECT_EQ_I(u8, 17);
    EXPECT(!present);
    EXPECT_EQ_I(fb_get_bool(&root, 3, true, &bo, NULL, "bool"), TOSAC_OK);
    EXPECT(bo);
    EXPECT_EQ_I(fb_get_i32(&root, 1000, -1, &i32, NULL, "i32"), TOSAC_OK);
    EXPECT_EQ_I(i32, -1);
    EXPECT_EQ_I(fb_get_u32(&root, 0xFFFFFFFFu, 5, &u32, NULL, "u32"), TOSAC_OK);
    EXPECT_EQ_I(u32, 5);
    EXPECT_EQ_I(fb_get_u64(&root, 2, 99, &u64, NULL, "u64"), TOSAC_OK);
    EXPECT_EQ_I(u64, 99);
    EXPECT_EQ_I(fb_get_string(&root, 0, &s, &slen, "s"), TOSAC_OK);
    EXPECT(s == NULL);
    EXPECT_EQ_I(slen, 0);
    present = true;
    EXPECT_EQ_I(fb_get_table(&root, 1, &sub, &present, "t"), TOSAC_OK);
    EXPECT(!present);
    EXPECT_EQ_I(fb_get_vector(&root, 2, 4, &v, "v"), TOSAC_OK);
    EXPECT_EQ_I(v.count, 0);
    EXPECT(fb_vec_data(&v) != NULL);
    EXPECT_EQ_I(fb_vec_i32(&v, 0), 0);
    EXPECT(!fb_has_field(&root, 0));
    EXPECT_EQ_I(fb_get_vector(&root, 2, 0, &v, "v"), TOSAC_ERR_INVALID_ARG);
    tosac_free(buf, len);

    /* 20 fields (> 16), read back by id, plus unknown trailing ids */
    fb_builder_init(&b);
    fb_table_begin(&b);
    for (unsigned id = 0; id < 20; id++) fb_add_i32(&b, id, (int32_t)(id * 3));
    fb_add_u8(&b, FB_MAX_FIELDS - 1, 9);
    t = fb_table_end(&b);
    EXPECT_EQ_I(fb_finish(&b, t, NULL, &buf, &len), TOSAC_OK);
    fb_builder_free(&b);
    if (!buf) return;
    fb_reader r2 = {buf, len, NULL, NULL, 0, NULL};
    EXPECT_EQ_I(fb_root(&r2, NULL, &root), TOSAC_OK);
    for (unsigned id = 0; id < 20; id++) {
        EXPECT_EQ_I(fb_get_i32(&root, id, -1, &i32, &present, "f"), TOSAC_OK);
        EXPECT_EQ_I(i32, id * 3);
        EXPECT(present);
    }
    EXPECT_EQ_I(fb_get_u8(&root, FB_MAX_FIELDS - 1, 0, &u8, NULL, "last"), TOSAC_OK);
    EXPECT_EQ_I(u8, 9);
    EXPECT_EQ_I(fb_get_u8(&root, 40, 3, &u8, &present, "gap"), TOSAC_OK);
    EXPECT(!present && u8 == 3);
    tosac_free(buf, len);

    /* a table holding one u8 is 8 bytes (u8 at offset 7); reading it as a u64 runs past the end */
    fb_builder_init(&b);
    fb_table_begin(&b);
    fb_add_u8(&b, 0, 9);
    t = fb_table_end(&b);
    EXPECT_EQ_I(fb_finish(&b, t, NULL, &buf, &len), TOSAC_OK);
    fb_builder_free(&b);
    if (!buf) return;
    tosac_diag *d = tosac_diag_create();
    fb_reader r3 = {buf, len, d, "one", 0, NULL};
    EXPECT_EQ_I(fb_root(&r3, NULL, &root), TOSAC_OK);
    EXPECT_EQ_I(root.tbl_len, 8);
    EXPECT_EQ_I(fb_get_u8(&root, 0, 0, &u8, NULL, "narrow"), TOSAC_OK);
    EXPECT_EQ_I(u8, 9);
    EXPECT_EQ_I(fb_get_u64(&root, 0, 0, &u64, NULL, "wide"), TOSAC_ERR_FORMAT);
    EXPECT(diag_contains(d, "wide: field offset outside its table"));
    tosac_diag_destroy(d);
    tosac_free(buf, len);
}

static void test_header_errors(void)
{
    tosac_diag *d = tosac_diag_create();
    uint8_t *buf = NULL;
    size_t len = 0;
    fb_table root;
    EXPECT_EQ_I(build_sample(&buf, &len), TOSAC_OK);
    if (!buf) return;
    fb_reader r = {buf, len, d, "file.tosa", 0, NULL};
    EXPECT_EQ_I(fb_root(&r, "TOSA", &root), TOSAC_ERR_FORMAT);
    EXPECT(diag_contains(d, "file.tosa: byte 4: header: wrong file identifier"));
    EXPECT_EQ_I(fb_root(&r, NULL, &root), TOSAC_OK);
    EXPECT_EQ_I(fb_root(&r, "TEST", &root), TOSAC_OK);
    r.len = 7;
    EXPECT_EQ_I(fb_root(&r, NULL, &root), TOSAC_ERR_FORMAT);
    r.len = (size_t)FB_MAX_BUFFER_SIZE + 1; /* never dereferenced past the header */
    EXPECT_EQ_I(fb_root(&r, NULL, &root), TOSAC_ERR_FORMAT);
    tosac_free(buf, len);

    /* hand-made buffers */
    uint8_t m[64];
    memset(m, 0, sizeof(m));
    fb_reader rm = {m, sizeof(m), d, "m", 0, NULL};
    le32(m, 60); /* root at 60, 4 bytes: soffset only */
    le32(m + 60, (uint32_t)-4); /* vtable at 64: outside */
    tosac_diag_clear(d);
    EXPECT_EQ_I(fb_root(&rm, NULL, &root), TOSAC_ERR_FORMAT);
    EXPECT(diag_contains(d, "byte 60: root table"));
    le32(m, 64);
    EXPECT_EQ_I(fb_root(&rm, NULL, &root), TOSAC_ERR_FORMAT);
    le32(m, 0);
    EXPECT_EQ_I(fb_root(&rm, NULL, &root), TOSAC_ERR_FORMAT);

    /* table at 16, vtable at 8: vt_len 6, tbl_len 8, field 0 at +4 = string offset */
    memset(m, 0, sizeof(m));
    le32(m, 16);
    m[8] = 6, m[10] = 8, m[12] = 4;
    le32(m + 16, 8);  /* soffset: vtable = 16 - 8 */
    le32(m + 20, 12); /* string at 32 */
    le32(m + 32, 3);
    memcpy(m + 36, "abc", 4);
    const char *s = NULL;
    uint32_t sl = 0;
    EXPECT_EQ_I(fb_root(&rm, NULL, &root), TOSAC_OK);
    EXPECT_EQ_I(fb_get_string(&root, 0, &s, &sl, "str"), TOSAC_OK);
    EXPECT_STREQ(s, "abc");
    m[39] = 'd'; /* no NUL */
    tosac_diag_clear(d);
    EXPECT_EQ_I(fb_get_string(&root, 0, &s, &sl, "str"), TOSAC_ERR_FORMAT);
    EXPECT(diag_contains(d, "byte 39: str: string not NUL-terminated"));
    m[39] = 0;
    le32(m + 32, 0xFFFFFFFFu); /* huge length */
    EXPECT_EQ_I(fb_get_string(&root, 0, &s, &sl, "str"), TOSAC_ERR_FORMAT);
    fb_vec v;
    EXPECT_EQ_I(fb_get_vector(&root, 0, 8, &v, "vec"), TOSAC_ERR_FORMAT);
    le32(m + 32, 3);
    EXPECT_EQ_I(fb_get_vector(&root, 0, 8, &v, "vec"), TOSAC_OK); /* 36 + 3*8 = 60 <= 64 */
    EXPECT_EQ_I(fb_get_vector(&root, 0, 10, &v, "vec"), TOSAC_ERR_FORMAT); /* 36 + 30 > 64 */
    le32(m + 20, 0); /* null offset */
    EXPECT_EQ_I(fb_get_string(&root, 0, &s, &sl, "str"), TOSAC_ERR_FORMAT);
    le32(m + 20, 12);
    m[12] = 6; /* field at +6: 4 bytes past tbl_len 8 */
    EXPECT_EQ_I(fb_get_string(&root, 0, &s, &sl, "str"), TOSAC_ERR_FORMAT);
    m[12] = 2; /* overlaps the soffset */
    EXPECT_EQ_I(fb_get_string(&root, 0, &s, &sl, "str"), TOSAC_ERR_FORMAT);
    m[12] = 4;
    m[8] = 5; /* odd vtable size */
    EXPECT_EQ_I(fb_root(&rm, NULL, &root), TOSAC_ERR_FORMAT);
    m[8] = 2; /* too small */
    EXPECT_EQ_I(fb_root(&rm, NULL, &root), TOSAC_ERR_FORMAT);
    m[8] = 6;
    m[10] = 50; /* table past the end */
    EXPECT_EQ_I(fb_root(&rm, NULL, &root), TOSAC_ERR_FORMAT);
    m[10] = 2;
    EXPECT_EQ_I(fb_root(&rm, NULL, &root), TOSAC_ERR_FORMAT);
    m[10] = 8;
    le32(m + 16, (uint32_t)-100); /* vtable far past the end */
    EXPECT_EQ_I(fb_root(&rm, NULL, &root), TOSAC_ERR_FORMAT);
    le32(m + 16, 100); /* vtable before the start */
    EXPECT_EQ_I(fb_root(&rm, NULL, &root), TOSAC_ERR_FORMAT);
    le32(m + 16, 8);
    EXPECT_EQ_I(fb_root(&rm, NULL, &root), TOSAC_OK);

    /* offset vector errors: index out of range, wrong element size */
    le32(m + 32, 1);
    le32(m + 36, 4); /* element -> 40 */
    EXPECT_EQ_I(fb_get_vector(&root, 0, 4, &v, "vec"), TOSAC_OK);
    EXPECT_EQ_I(v.count, 1);
    EXPECT_EQ_I(fb_vec_table(&v, 1, &root, "vec"), TOSAC_ERR_INVALID_ARG);
    EXPECT_EQ_I(fb_get_vector(&root, 0, 1, &v, "vec"), TOSAC_OK);
    EXPECT_EQ_I(fb_vec_string(&v, 0, &s, &sl, "vec"), TOSAC_ERR_INVALID_ARG);
    tosac_diag_destroy(d);
}

/* A chain of nested tables: each has field 0 = the next one. */
static void build_chain(unsigned n, uint8_t **out, size_t *out_len)
{
    fb_builder b;
    fb_builder_init(&b);
    uint32_t prev = 0;
    for (unsigned i = 0; i < n; i++) {
        fb_table_begin(&b);
        fb_add_offset(&b, 0, prev);
        fb_add_u32(&b, 1, i);
        prev = fb_table_end(&b);
    }
    EXPECT_EQ_I(fb_finish(&b, prev, NULL, out, out_len), TOSAC_OK);
    fb_builder_free(&b);
}

static unsigned chain_depth(const fb_reader *r, tosac_status *st)
{
    fb_table t, next;
    bool present = true;
    unsigned n = 0;
    *st = fb_root(r, NULL, &t);
    if (*st != TOSAC_OK) return 0;
    for (n = 1;; n++) {
        *st = fb_get_table(&t, 0, &next, &present, "chain");
        if (*st != TOSAC_OK || !present) break;
        t = next;
    }
    return n;
}

static void test_depth_and_budget(void)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    tosac_status st;
    build_chain(100, &buf, &len);
    if (!buf) return;
    tosac_diag *d = tosac_diag_create();
    fb_reader r = {buf, len, d, "chain", 0, NULL};
    EXPECT_EQ_I(chain_depth(&r, &st), FB_DEFAULT_MAX_DEPTH + 1);
    EXPECT_EQ_I(st, TOSAC_ERR_FORMAT);
    EXPECT(diag_contains(d, "nested too deeply"));
    r.max_depth = 99;
    EXPECT_EQ_I(chain_depth(&r, &st), 100);
    EXPECT_EQ_I(st, TOSAC_OK);
    r.max_depth = 98;
    chain_depth(&r, &st);
    EXPECT_EQ_I(st, TOSAC_ERR_FORMAT);
    size_t budget = 100;
    r.max_depth = 1000;
    r.budget = &budget;
    EXPECT_EQ_I(chain_depth(&r, &st), 100);
    EXPECT_EQ_I(st, TOSAC_OK);
    EXPECT_EQ_I(budget, 0);
    budget = 50;
    tosac_diag_clear(d);
    chain_depth(&r, &st);
    EXPECT_EQ_I(st, TOSAC_ERR_NOMEM);
    EXPECT(diag_contains(d, "budget"));
    tosac_free(buf, len);

    /* wide: vector of 1000 tiny tables that all share one table; budget counts each visit */
    fb_builder b;
    fb_builder_init(&b);
    fb_table_begin(&b);
    fb_add_u8(&b, 0, 1);
    uint32_t one = fb_table_end(&b);
    static uint32_t hs[1000];
    for (int i = 0; i < 1000; i++) hs[i] = one;
    uint32_t vec = fb_create_offset_vector(&b, hs, 1000);
    fb_table_begin(&b);
    fb_add_offset(&b, 0, vec);
    uint32_t root = fb_table_end(&b);
    EXPECT_EQ_I(fb_finish(&b, root, NULL, &buf, &len), TOSAC_OK);
    fb_builder_free(&b);
    if (!buf) {
        tosac_diag_destroy(d);
        return;
    }
    fb_reader rw = {buf, len, d, "wide", 0, &budget};
    fb_table rt, t;
    fb_vec v;
    budget = 1002;
    EXPECT_EQ_I(fb_root(&rw, NULL, &rt), TOSAC_OK);
    EXPECT_EQ_I(fb_get_vector(&rt, 0, 4, &v, "v"), TOSAC_OK);
    EXPECT_EQ_I(v.count, 1000);
    st = TOSAC_OK;
    for (uint32_t i = 0; i < v.count && st == TOSAC_OK; i++) st = fb_vec_table(&v, i, &t, "v[]");
    EXPECT_EQ_I(st, TOSAC_OK);
    EXPECT_EQ_I(budget, 0);
    budget = 500;
    EXPECT_EQ_I(fb_root(&rw, NULL, &rt), TOSAC_OK);
    EXPECT_EQ_I(fb_get_vector(&rt, 0, 4, &v, "v"), TOSAC_OK);
    uint32_t ok = 0;
    st = TOSAC_OK;
    for (uint32_t i = 0; i < v.count && st == TOSAC_OK; i++) {
        st = fb_vec_table(&v, i, &t, "v[]");
        if (st == TOSAC_OK) ok++;
    }
    EXPECT_EQ_I(st, TOSAC_ERR_NOMEM);
    EXPECT_EQ_I(ok, 498);
    tosac_free(buf, len);
    tosac_diag_destroy(d);
}

static void test_truncation(void)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    EXPECT_EQ_I(build_sample(&buf, &len), TOSAC_OK);
    if (!buf) return;
    tosac_diag *d = tosac_diag_create();
    int errors = 0;
    for (size_t n = 0; n < len; n++) {
        tosac_status st = hostile_read(buf, n, d);
        if (st != TOSAC_OK) errors++;
        /* Only the alignment padding of the first object written (the buffer's last < 8 bytes)
         * may be cut off unnoticed; anything shorter loses data the sample reader visits. */
        if (n + 8 <= len) EXPECT_EQ_I(st, TOSAC_ERR_FORMAT);
    }
    fprintf(stderr, "  truncations: %d of %zu rejected\n", errors, len);
    EXPECT_EQ_I(hostile_read(buf, len, d), TOSAC_OK);
    tosac_diag_destroy(d);
    tosac_free(buf, len);
}

static void test_bitflips(void)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    EXPECT_EQ_I(build_sample(&buf, &len), TOSAC_OK);
    if (!buf) return;
    tosac_diag *d = tosac_diag_create();
    uint8_t *m = malloc(len);
    int errors = 0, oks = 0;
    for (size_t bit = 0; m && bit < len * 8; bit++) {
        memcpy(m, buf, len);
        m[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        if (hostile_read(m, len, d) == TOSAC_OK)
            oks++;
        else
            errors++;
    }
    EXPECT(errors > 0);
    EXPECT(oks > 0); /* flipped data bytes still read fine */
    fprintf(stderr, "  bit flips: %d rejected, %d accepted of %zu\n", errors, oks, len * 8);
    free(m);
    tosac_diag_destroy(d);
    tosac_free(buf, len);
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

static void test_garbage(void)
{
    uint8_t g[512];
    /* pure garbage, with a plausible root offset half the time */
    for (int iter = 0; iter < 20000; iter++) {
        size_t n = rnd() % sizeof(g);
        for (size_t i = 0; i < n; i++) g[i] = (uint8_t)rnd();
        if (n >= 8 && (iter & 1)) le32(g, rnd() % (uint32_t)n);
        hostile_read(g, n, NULL);
    }
    /* structured mutations of a valid buffer */
    uint8_t *buf = NULL;
    size_t len = 0;
    EXPECT_EQ_I(build_sample(&buf, &len), TOSAC_OK);
    if (!buf || len > sizeof(g)) return;
    static const uint8_t interesting[] = {0, 1, 2, 3, 4, 0x7F, 0x80, 0xFE, 0xFF};
    for (int iter = 0; iter < 20000; iter++) {
        memcpy(g, buf, len);
        unsigned k = rnd() % 6 + 1;
        for (unsigned j = 0; j < k; j++) {
            size_t at = rnd() % len;
            g[at] = (rnd() & 1) ? interesting[rnd() % sizeof(interesting)] : (uint8_t)rnd();
        }
        hostile_read(g, len, NULL);
    }
    tosac_free(buf, len);
    EXPECT(1);
}

static void test_builder_misuse(void)
{
    fb_builder b;
    uint8_t *out = NULL;
    size_t out_len = 0;
    uint32_t t;

    fb_builder_init(&b);
    fb_table_begin(&b);
    fb_table_begin(&b); /* nested */
    t = fb_table_end(&b);
    EXPECT_EQ_I(fb_finish(&b, t, NULL, &out, &out_len), TOSAC_ERR_INVALID_ARG);
    fb_builder_free(&b);

    fb_builder_init(&b);
    fb_table_begin(&b);
    fb_add_u8(&b, FB_MAX_FIELDS, 1); /* id too big */
    t = fb_table_end(&b);
    EXPECT(b.misuse);
    EXPECT_EQ_I(fb_finish(&b, t, NULL, &out, &out_len), TOSAC_ERR_INVALID_ARG);
    fb_builder_free(&b);

    fb_builder_init(&b);
    fb_table_begin(&b);
    fb_add_u8(&b, 2, 1);
    fb_add_u32(&b, 2, 1); /* duplicate id */
    t = fb_table_end(&b);
    EXPECT_EQ_I(fb_finish(&b, t, NULL, &out, &out_len), TOSAC_ERR_INVALID_ARG);
    fb_builder_free(&b);

    fb_builder_init(&b);
    fb_table_begin(&b);
    EXPECT_EQ_I(mk_str(&b, "inside"), 0); /* objects may not be created inside a table */
    fb_add_offset(&b, 0, 12345);          /* bogus handle */
    t = fb_table_end(&b);
    EXPECT_EQ_I(fb_finish(&b, t, NULL, &out, &out_len), TOSAC_ERR_INVALID_ARG);
    fb_builder_free(&b);

    fb_builder_init(&b);
    fb_table_begin(&b);
    fb_add_offset(&b, 0, 0); /* handle 0: field omitted, not an error */
    t = fb_table_end(&b);
    EXPECT(!b.misuse);
    EXPECT_EQ_I(fb_finish(&b, t, "TOOLONG", &out, &out_len), TOSAC_ERR_INVALID_ARG);
    EXPECT_EQ_I(fb_finish(&b, 0, NULL, &out, &out_len), TOSAC_ERR_INVALID_ARG);
    EXPECT_EQ_I(fb_finish(&b, t, NULL, &out, &out_len), TOSAC_OK);
    EXPECT_EQ_I(fb_finish(&b, t, NULL, &out, &out_len), TOSAC_ERR_INVALID_ARG); /* only once */
    tosac_free(out, out_len);
    fb_builder_free(&b);

    fb_builder_init(&b);
    EXPECT_EQ_I(fb_create_vector(&b, "ab", 2, 1, 3), 0); /* align not a power of two */
    EXPECT_EQ_I(fb_create_vector(&b, "ab", 2, 0, 0), 0);
    uint32_t zero = 0;
    EXPECT_EQ_I(fb_create_offset_vector(&b, &zero, 1), 0);
    EXPECT(b.misuse);
    fb_builder_free(&b);

    /* a table over 64 KiB of inline data cannot be described by 16-bit vtable offsets */
    fb_builder_init(&b);
    fb_table_begin(&b);
    for (unsigned id = 0; id < FB_MAX_FIELDS; id++) fb_add_u64(&b, id, id);
    t = fb_table_end(&b);
    EXPECT(!b.misuse); /* 512 bytes is fine */
    fb_builder_free(&b);
}

/* Allocator that fails after a set number of allocations. */
static long g_alloc_left;
static size_t g_live;
static void *fail_alloc(void *ud, size_t n)
{
    (void)ud;
    if (g_alloc_left <= 0) return NULL;
    g_alloc_left--;
    g_live++;
    return malloc(n ? n : 1);
}
static void fail_free(void *ud, void *p, size_t n)
{
    (void)ud;
    (void)n;
    if (p) g_live--;
    free(p);
}

static void test_nomem(void)
{
    uint8_t *ref = NULL;
    size_t ref_len = 0;
    EXPECT_EQ_I(build_sample(&ref, &ref_len), TOSAC_OK);
    tosac_allocator a = {NULL, fail_alloc, fail_free};
    int nomem = 0, ok = 0;
    for (long limit = 0; limit < 64; limit++) {
        tosac_set_allocator(&a);
        g_alloc_left = limit;
        g_live = 0;
        uint8_t *out = NULL;
        size_t out_len = 0;
        tosac_status st = build_sample(&out, &out_len);
        if (st == TOSAC_OK) {
            ok++;
            EXPECT(ref && out_len == ref_len && memcmp(out, ref, ref_len) == 0);
            tosac_free(out, out_len);
        } else {
            nomem++;
            EXPECT_EQ_I(st, TOSAC_ERR_NOMEM);
        }
        EXPECT_EQ_I(g_live, 0);
        tosac_set_allocator(NULL);
    }
    EXPECT(nomem > 0 && ok > 0);
    tosac_free(ref, ref_len);

    /* sticky: after a failure every call is a no-op returning 0 */
    tosac_set_allocator(&a);
    g_alloc_left = 0;
    fb_builder b;
    fb_builder_init(&b);
    EXPECT_EQ_I(mk_str(&b, "x"), 0);
    EXPECT(b.failed);
    g_alloc_left = 100;
    EXPECT_EQ_I(mk_str(&b, "x"), 0);
    fb_table_begin(&b);
    EXPECT_EQ_I(fb_table_end(&b), 0);
    uint8_t *out = NULL;
    size_t out_len = 0;
    EXPECT_EQ_I(fb_finish(&b, 4, NULL, &out, &out_len), TOSAC_ERR_NOMEM);
    fb_builder_free(&b);
    tosac_set_allocator(NULL);
}

/* ------------------------------------------------------------------------------------------- */
/* TOSA-shaped buffers cross-checked with flatc                                                */

enum { TOSA_INT8 = 3, TOSA_OP_CLAMP = 11, TOSA_ATTR_CLAMP = 11 };

static uint32_t mk_str_vec(fb_builder *b, const char *s)
{
    uint32_t h = mk_str(b, s);
    return fb_create_offset_vector(b, &h, 1);
}

static tosac_status build_tosa(uint8_t **out, size_t *out_len)
{
    fb_builder b;
    fb_builder_init(&b);
    /* Version 1.0.0 final: all four fields written explicitly. */
    fb_table_begin(&b);
    fb_add_i32(&b, 0, 1);
    fb_add_i32(&b, 1, 0);
    fb_add_i32(&b, 2, 0);
    fb_add_bool(&b, 3, false);
    uint32_t version = fb_table_end(&b);

    /* CLAMP operator with a ClampAttribute union value (tag 11 at id 1, table at id 2). */
    uint8_t lo = 0x80, hi = 0x7F;
    uint32_t minv = fb_create_vector(&b, &lo, 1, 1, 8);
    uint32_t maxv = fb_create_vector(&b, &hi, 1, 1, 8);
    fb_table_begin(&b);
    fb_add_offset(&b, 0, minv);
    fb_add_offset(&b, 1, maxv);
    fb_add_u32(&b, 2, 1); /* PROPAGATE */
    uint32_t attr = fb_table_end(&b);
    uint32_t oin = mk_str_vec(&b, "a"), oout = mk_str_vec(&b, "b");
    fb_table_begin(&b);
    fb_add_u32(&b, 0, TOSA_OP_CLAMP);
    fb_add_u8(&b, 1, TOSA_ATTR_CLAMP);
    fb_add_offset(&b, 2, attr);
    fb_add_offset(&b, 3, oin);
    fb_add_offset(&b, 4, oout);
    uint32_t op = fb_table_end(&b);
    uint32_t ops = fb_create_offset_vector(&b, &op, 1);

    /* tensors a (with 8 bytes of data) and b */
    static const int32_t shape[] = {1, 2};
    static const uint8_t data[8] = {1, 2, 0, 0, 0, 0, 0, 0};
    uint32_t tens[2];
    for (int i = 0; i < 2; i++) {
        uint32_t nm = mk_str(&b, i ? "b" : "a");
        uint32_t sh = mk_i32_vec(&b, shape, 2);
        uint32_t dv = i ? 0 : fb_create_vector(&b, data, 8, 1, 8);
        fb_table_begin(&b);
        fb_add_offset(&b, 0, nm);
        fb_add_offset(&b, 1, sh);
        fb_add_u32(&b, 2, TOSA_INT8);
        fb_add_offset(&b, 3, dv);
        tens[i] = fb_table_end(&b);
    }
    uint32_t tv = fb_create_offset_vector(&b, tens, 2);

    /* shape value s = [2] */
    uint8_t sd[8];
    le64(sd, 2);
    uint32_t snm = mk_str(&b, "s");
    uint32_t sdv = fb_create_vector(&b, sd, 8, 1, 8);
    fb_table_begin(&b);
    fb_add_offset(&b, 0, snm);
    fb_add_u32(&b, 1, 1);
    fb_add_offset(&b, 2, sdv);
    uint32_t shp = fb_table_end(&b);
    uint32_t shv = fb_create_offset_vector(&b, &shp, 1);

    uint32_t bin = mk_str_vec(&b, "a"), bout = mk_str_vec(&b, "b");
    uint32_t bname = mk_str(&b, "main");
    fb_table_begin(&b);
    fb_add_offset(&b, 0, bname);
    fb_add_offset(&b, 1, ops);
    fb_add_offset(&b, 2, tv);
    fb_add_offset(&b, 3, bin);
    fb_add_offset(&b, 4, bout);
    fb_add_offset(&b, 5, shv);
    uint32_t block = fb_table_end(&b);
    uint32_t blocks = fb_create_offset_vector(&b, &block, 1);
    uint32_t rname = mk_str(&b, "main");
    fb_table_begin(&b);
    fb_add_offset(&b, 0, rname);
    fb_add_offset(&b, 1, blocks);
    uint32_t region = fb_table_end(&b);
    uint32_t regions = fb_create_offset_vector(&b, &region, 1);
    fb_table_begin(&b);
    fb_add_offset(&b, 0, version);
    fb_add_offset(&b, 1, regions);
    uint32_t graph = fb_table_end(&b);
    tosac_status st = fb_finish(&b, graph, "TOSA", out, out_len);
    fb_builder_free(&b);
    return st;
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *s = malloc(cap + 1);
    while (s) {
        size_t got = fread(s + n, 1, cap - n, f);
        n += got;
        if (n < cap) break;
        char *ns = realloc(s, cap * 2 + 1);
        if (!ns) {
            free(s);
            s = NULL;
            break;
        }
        s = ns;
        cap *= 2;
    }
    fclose(f);
    if (s) s[n] = 0;
    if (len) *len = n;
    return s;
}

static bool write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    bool ok = fwrite(p, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

static void test_tosa_shaped_and_flatc(void)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    EXPECT_EQ_I(build_tosa(&buf, &len), TOSAC_OK);
    if (!buf) return;

    /* Our own reader sees it as a TOSA graph. */
    fb_reader r = {buf, len, NULL, "graph.tosa", 0, NULL};
    fb_table g, ver, reg, blk, ten, op, attr;
    fb_vec regs, blks, tens, data, ops;
    int32_t maj = -1, min = -1, pat = -1;
    bool draft = true, present = false;
    const char *name = NULL;
    uint8_t tag = 0;
    EXPECT_EQ_I(fb_root(&r, "TOSA", &g), TOSAC_OK);
    EXPECT_EQ_I(fb_get_table(&g, 0, &ver, &present, "version"), TOSAC_OK);
    EXPECT(present);
    EXPECT_EQ_I(fb_get_i32(&ver, 0, -1, &maj, NULL, "major"), TOSAC_OK);
    EXPECT_EQ_I(fb_get_i32(&ver, 1, -1, &min, NULL, "minor"), TOSAC_OK);
    EXPECT_EQ_I(fb_get_i32(&ver, 2, -1, &pat, NULL, "patch"), TOSAC_OK);
    EXPECT_EQ_I(fb_get_bool(&ver, 3, true, &draft, NULL, "draft"), TOSAC_OK);
    EXPECT(maj == 1 && min == 0 && pat == 0 && !draft);
    EXPECT_EQ_I(fb_get_vector(&g, 1, 4, &regs, "regions"), TOSAC_OK);
    EXPECT_EQ_I(regs.count, 1);
    EXPECT_EQ_I(fb_vec_table(&regs, 0, &reg, "region"), TOSAC_OK);
    EXPECT_EQ_I(fb_get_string(&reg, 0, &name, NULL, "region.name"), TOSAC_OK);
    EXPECT_STREQ(name, "main");
    EXPECT_EQ_I(fb_get_vector(&reg, 1, 4, &blks, "blocks"), TOSAC_OK);
    EXPECT_EQ_I(fb_vec_table(&blks, 0, &blk, "block"), TOSAC_OK);
    EXPECT_EQ_I(blk.depth, 2);
    EXPECT_EQ_I(fb_get_vector(&blk, 2, 4, &tens, "tensors"), TOSAC_OK);
    EXPECT_EQ_I(tens.count, 2);
    EXPECT_EQ_I(fb_vec_table(&tens, 0, &ten, "tensor"), TOSAC_OK);
    EXPECT_EQ_I(fb_get_vector(&ten, 3, 1, &data, "tensor.data"), TOSAC_OK);
    EXPECT_EQ_I(data.count, 8);
    EXPECT_EQ_I(data.pos % 8, 0);
    EXPECT_EQ_I(fb_get_vector(&blk, 1, 4, &ops, "operators"), TOSAC_OK);
    EXPECT_EQ_I(fb_vec_table(&ops, 0, &op, "op"), TOSAC_OK);
    EXPECT_EQ_I(fb_get_u8(&op, 1, 0, &tag, NULL, "attribute_type"), TOSAC_OK);
    EXPECT_EQ_I(tag, TOSA_ATTR_CLAMP);
    EXPECT_EQ_I(fb_get_table(&op, 2, &attr, &present, "attribute"), TOSAC_OK);
    EXPECT_EQ_I(fb_get_vector(&attr, 0, 1, &data, "min_val"), TOSAC_OK);
    EXPECT_EQ_I(data.pos % 8, 0);
    EXPECT_EQ_I(fb_vec_u8(&data, 0), 0x80);
    EXPECT_EQ_I(fb_get_vector(&attr, 1, 1, &data, "max_val"), TOSAC_OK);
    EXPECT_EQ_I(data.pos % 8, 0);
    EXPECT_EQ_I(fb_vec_u8(&data, 0), 0x7F);

    if (system("flatc --version >/dev/null 2>&1") != 0) {
        /* the independent decoder is part of the suite: its absence is a failure, not a skip */
        fprintf(stderr, "  flatc not found: install flatbuffers-compiler (scripts/install-deps.sh)\n");
        EXPECT(!"flatc available");
        tosac_free(buf, len);
        return;
    }
    const char *src = getenv("TOSAC_SOURCE_DIR");
    if (!src || !*src) src = "..";
    char schema[1024], dir[256], path[1400], cmd[4096];
    snprintf(schema, sizeof(schema), "%s/schema/tosa.fbs", src);
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof(dir), "%s/tosac_fb_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "mkdtemp failed\n");
        EXPECT(false);
        tosac_free(buf, len);
        return;
    }
    snprintf(path, sizeof(path), "%s/graph.tosa", dir);
    EXPECT(write_file(path, buf, len));
    snprintf(cmd, sizeof(cmd), "flatc --json --strict-json --raw-binary -o '%s' '%s' -- '%s'", dir,
             schema, path);
    EXPECT_EQ_I(system(cmd), 0);
    snprintf(path, sizeof(path), "%s/graph.json", dir);
    char *json = read_file(path, NULL);
    EXPECT(json != NULL);
    if (json) {
        EXPECT(strstr(json, "\"_major\": 1") != NULL);
        EXPECT(strstr(json, "\"_minor\": 0") != NULL);
        EXPECT(strstr(json, "\"_patch\": 0") != NULL);
        EXPECT(strstr(json, "\"_draft\": false") != NULL);
        EXPECT(strstr(json, "\"name\": \"main\"") != NULL);
        EXPECT(strstr(json, "\"op\": \"CLAMP\"") != NULL);
        EXPECT(strstr(json, "\"attribute_type\": \"ClampAttribute\"") != NULL);
        EXPECT(strstr(json, "\"nan_mode\": \"PROPAGATE\"") != NULL);
        EXPECT(strstr(json, "\"type\": \"INT8\"") != NULL);
        EXPECT(strstr(json, "\"rank\": 1") != NULL);
        if (t_failures) fprintf(stderr, "%s\n", json);
        free(json);
    }
    remove(path);
    snprintf(path, sizeof(path), "%s/graph.tosa", dir);
    remove(path);

    /* The other direction: flatc encodes JSON, our reader decodes it. */
    static const char in_json[] =
        "{\"version\":{\"_major\":1,\"_minor\":0,\"_patch\":2,\"_draft\":false},"
        "\"regions\":[{\"name\":\"main\",\"blocks\":[{\"name\":\"main\","
        "\"operators\":[{\"op\":\"RESCALE\",\"attribute_type\":\"RescaleAttribute\","
        "\"attribute\":{\"scale32\":true,\"rounding_mode\":\"DOUBLE_ROUND\"},"
        "\"inputs\":[\"x\",\"m\"],\"outputs\":[\"y\"],\"location\":{\"text\":\"here\"}}],"
        "\"tensors\":[{\"name\":\"x\",\"shape\":[3],\"type\":\"INT16\",\"data\":[1,0,2,0,3,0,0,0],"
        "\"offset\":12345678901,\"size\":7}]}]}]}";
    snprintf(path, sizeof(path), "%s/in.json", dir);
    EXPECT(write_file(path, in_json, sizeof(in_json) - 1));
    snprintf(cmd, sizeof(cmd), "flatc -b -o '%s' '%s' '%s'", dir, schema, path);
    EXPECT_EQ_I(system(cmd), 0);
    remove(path);
    snprintf(path, sizeof(path), "%s/in.tosa", dir);
    size_t blen = 0;
    char *bin = read_file(path, &blen);
    EXPECT(bin != NULL);
    remove(path);
    rmdir(dir);
    if (!bin) {
        tosac_free(buf, len);
        return;
    }
    fb_reader rb = {(const uint8_t *)bin, blen, NULL, "in.tosa", 0, NULL};
    EXPECT_EQ_I(fb_root(&rb, "TOSA", &g), TOSAC_OK);
    EXPECT_EQ_I(fb_get_table(&g, 0, &ver, &present, "version"), TOSAC_OK);
    EXPECT_EQ_I(fb_get_i32(&ver, 2, -1, &pat, NULL, "patch"), TOSAC_OK);
    EXPECT_EQ_I(pat, 2);
    EXPECT_EQ_I(fb_get_bool(&ver, 3, true, &draft, &present, "draft"), TOSAC_OK);
    EXPECT(!draft && present);
    EXPECT_EQ_I(fb_get_vector(&g, 1, 4, &regs, "regions"), TOSAC_OK);
    EXPECT_EQ_I(fb_vec_table(&regs, 0, &reg, "region"), TOSAC_OK);
    EXPECT_EQ_I(fb_get_vector(&reg, 1, 4, &blks, "blocks"), TOSAC_OK);
    EXPECT_EQ_I(fb_vec_table(&blks, 0, &blk, "block"), TOSAC_OK);
    EXPECT_EQ_I(fb_get_vector(&blk, 1, 4, &ops, "operators"), TOSAC_OK);
    EXPECT_EQ_I(fb_vec_table(&ops, 0, &op, "op"), TOSAC_OK);
    uint32_t opnum = 0, rmode = 0;
    EXPECT_EQ_I(fb_get_u32(&op, 0, 0, &opnum, NULL, "op"), TOSAC_OK);
    EXPECT_EQ_I(opnum, 66);
    EXPECT_EQ_I(fb_get_u8(&op, 1, 0, &tag, NULL, "attribute_type"), TOSAC_OK);
    EXPECT_EQ_I(tag, 66);
    EXPECT_EQ_I(fb_get_table(&op, 2, &attr, &present, "attribute"), TOSAC_OK);
    EXPECT_EQ_I(fb_get_bool(&attr, 0, false, &draft, NULL, "scale32"), TOSAC_OK);
    EXPECT(draft);
    EXPECT_EQ_I(fb_get_u32(&attr, 1, 0, &rmode, NULL, "rounding_mode"), TOSAC_OK);
    EXPECT_EQ_I(rmode, 3);
    fb_vec ins;
    const char *in1 = NULL;
    EXPECT_EQ_I(fb_get_vector(&op, 3, 4, &ins, "inputs"), TOSAC_OK);
    EXPECT_EQ_I(ins.count, 2);
    EXPECT_EQ_I(fb_vec_string(&ins, 1, &in1, NULL, "inputs[]"), TOSAC_OK);
    EXPECT_STREQ(in1, "m");
    fb_table loc;
    EXPECT_EQ_I(fb_get_table(&op, 5, &loc, &present, "location"), TOSAC_OK);
    EXPECT_EQ_I(fb_get_string(&loc, 0, &name, NULL, "location.text"), TOSAC_OK);
    EXPECT_STREQ(name, "here");
    EXPECT_EQ_I(fb_get_vector(&blk, 2, 4, &tens, "tensors"), TOSAC_OK);
    EXPECT_EQ_I(fb_vec_table(&tens, 0, &ten, "tensor"), TOSAC_OK);
    uint32_t dt = 0;
    uint64_t off = 0, size = 0;
    fb_vec shp;
    EXPECT_EQ_I(fb_get_u32(&ten, 2, 0, &dt, NULL, "type"), TOSAC_OK);
    EXPECT_EQ_I(dt, 4);
    EXPECT_EQ_I(fb_get_vector(&ten, 1, 4, &shp, "shape"), TOSAC_OK);
    EXPECT_EQ_I(shp.count, 1);
    EXPECT_EQ_I(fb_vec_i32(&shp, 0), 3);
    EXPECT_EQ_I(fb_get_vector(&ten, 3, 1, &data, "data"), TOSAC_OK);
    EXPECT_EQ_I(data.count, 8);
    EXPECT_EQ_I(fb_vec_u8(&data, 4), 3);
    EXPECT_EQ_I(fb_get_u64(&ten, 7, 0, &off, NULL, "offset"), TOSAC_OK);
    EXPECT_EQ_I(fb_get_u64(&ten, 8, 0, &size, NULL, "size"), TOSAC_OK);
    EXPECT(off == 12345678901ull && size == 7);
    free(bin);
    tosac_free(buf, len);
}

int main(void)
{
    RUN(test_roundtrip);
    RUN(test_alignment);
    RUN(test_determinism);
    RUN(test_absent_and_defaults);
    RUN(test_header_errors);
    RUN(test_depth_and_budget);
    RUN(test_truncation);
    RUN(test_bitflips);
    RUN(test_garbage);
    RUN(test_builder_misuse);
    RUN(test_nomem);
    RUN(test_tosa_shaped_and_flatc);
    return test_summary();
}
