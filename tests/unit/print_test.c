/* String buffer, text printer and inspect (text + JSON): exact output, escaping, allocation failures. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/fp.h"
#include "core/strbuf.h"
#include "harness/test.h"
#include "ir/graph.h"
#include "ir/print.h"
#include "tosac/alloc.h"
#include "tosac/inspect.h"

/* ------------------------------------------------------------------------------------------- */
/* A counting allocator with failure injection.                                                  */

static long long g_live_bytes, g_live_blocks;
static long g_fail_after = -1; /* >= 0: that many more allocations succeed, then all fail */

static void *count_alloc(void *ud, size_t size)
{
    (void)ud;
    if (g_fail_after == 0) return NULL;
    if (g_fail_after > 0) g_fail_after--;
    void *p = malloc(size ? size : 1);
    if (p) {
        g_live_bytes += (long long)size;
        g_live_blocks++;
    }
    return p;
}

static void count_free(void *ud, void *p, size_t size)
{
    (void)ud;
    g_live_bytes -= (long long)size; /* a wrong size given back shows up as a non-zero balance */
    g_live_blocks--;
    free(p);
}

static const tosac_allocator k_counting = {NULL, count_alloc, count_free};

/* ------------------------------------------------------------------------------------------- */
/* String buffer                                                                                 */

static void test_strbuf(void)
{
    tosac_strbuf sb;
    tosac_strbuf_init(&sb);
    char *s = tosac_strbuf_take(&sb);
    EXPECT_STREQ(s, "");
    tosac_string_free(s);

    tosac_strbuf_append(&sb, "ab");
    tosac_strbuf_appendc(&sb, 'c');
    tosac_strbuf_appendf(&sb, "[%d|%s]", 42, "x");
    tosac_strbuf_pad(&sb, '.', 3);
    tosac_strbuf_appendn(&sb, "de\0fg", 5); /* stops at the NUL */
    EXPECT_STREQ(sb.data, "abc[42|x]...de");
    tosac_strbuf_truncate(&sb, 3);
    EXPECT_STREQ(sb.data, "abc");
    tosac_strbuf_truncate(&sb, 10);
    EXPECT_EQ_I(sb.len, 3);
    for (int i = 0; i < 1000; i++) tosac_strbuf_append(&sb, "0123456789");
    EXPECT_EQ_I(sb.len, 10003);
    s = tosac_strbuf_take(&sb);
    EXPECT(s && strlen(s) == 10003);
    EXPECT(sb.data == NULL && sb.len == 0);
    tosac_string_free(s);
}

static void test_json_escape(void)
{
    tosac_strbuf sb;
    tosac_strbuf_init(&sb);
    tosac_strbuf_append_json_str(&sb, "a\"b\\c\n\t\r\b\f\x01\x1f\x7f");
    EXPECT_STREQ(sb.data, "\"a\\\"b\\\\c\\n\\t\\r\\b\\f\\u0001\\u001f\x7f\"");
    tosac_strbuf_truncate(&sb, 0);
    /* valid UTF-8 is kept: 2-, 3- and 4-byte sequences */
    tosac_strbuf_append_json_str(&sb, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    EXPECT_STREQ(sb.data, "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
    tosac_strbuf_truncate(&sb, 0);
    /* invalid: stray continuation, overlong, surrogate, above U+10FFFF, truncated at the end */
    tosac_strbuf_append_json_str(&sb, "\x80|\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|\xe2\x82");
    EXPECT_STREQ(sb.data, "\"\\ufffd|\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd\\ufffd|\\ufffd\\ufffd\"");
    tosac_strbuf_truncate(&sb, 0);
    tosac_strbuf_append_json_str(&sb, NULL);
    EXPECT_STREQ(sb.data, "null");
    tosac_strbuf_free(&sb);
}

/* ------------------------------------------------------------------------------------------- */
/* A graph exercising every formatting path.                                                    */

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static tosac_graph *build_graph(void)
{
    tosac_graph *g = tosac_graph_create();
    if (!g) return NULL;
    tosac_graph_set_version(g, 1, 0, 0, true);
    tosac_region *r = tosac_graph_add_region(g, "main");
    tosac_block *b = r ? tosac_region_add_block(r, "main") : NULL;
    if (!b) goto fail;
    const int64_t s22[] = {2, 2}, s1[] = {1}, s2[] = {2}, s3[] = {3}, s17[] = {17};
    tosac_value *x = tosac_block_add_tensor(b, "x", TOSAC_DTYPE_INT8, 2, s22);
    tosac_value *xf = tosac_block_add_tensor(b, "xf", TOSAC_DTYPE_FP16, 2, s22);
    if (!x || !xf || tosac_block_add_input(b, x) || tosac_block_add_input(b, xf)) goto fail;
    if (!tosac_block_add_tensor(b, "orphan", TOSAC_DTYPE_FP32, 1, s1)) goto fail;
    if (!tosac_block_add_shape(b, "sh", 2)) goto fail;

    const uint8_t i4[2] = {0xE1, 0x07}; /* 1, -2, 7 */
    uint8_t h[6], bf[2], i48[12] = {0xFB, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F};
    put16(h, tosac_fp32_to_fp16(1.5f));
    put16(h + 2, 0xFC00); /* -inf */
    put16(h + 4, 0x7E00); /* NaN */
    put16(bf, tosac_fp32_to_bf16(0.1f));
    const uint8_t bo[2] = {1, 0};
    const uint8_t zeros[34] = {0};
    if (!tosac_block_add_const(b, "c4", TOSAC_DTYPE_INT4, 1, s3, i4, 2) ||
        !tosac_block_add_const(b, "h", TOSAC_DTYPE_FP16, 1, s3, h, 6) ||
        !tosac_block_add_const(b, "bf", TOSAC_DTYPE_BF16, 1, s1, bf, 2) ||
        !tosac_block_add_const(b, "bo", TOSAC_DTYPE_BOOL, 1, s2, bo, 2) ||
        !tosac_block_add_const(b, "i48", TOSAC_DTYPE_INT48, 1, s2, i48, 12) ||
        !tosac_block_add_const(b, "big", TOSAC_DTYPE_INT16, 1, s17, zeros, 34) ||
        !tosac_block_add_const(b, "short", TOSAC_DTYPE_INT32, 1, s2, zeros, 4))
        goto fail;

    tosac_value *y = tosac_block_add_tensor(b, "y", TOSAC_DTYPE_FP16, 2, s22);
    tosac_node *clamp = y ? tosac_block_add_node(b, TOSAC_OP_CLAMP, 1, &xf, 1, &y) : NULL;
    uint8_t lo[2], hi[2];
    put16(lo, tosac_fp32_to_fp16(-1.0f));
    put16(hi, 0x7BFF); /* 65504 */
    if (!clamp || tosac_node_set_bytes(clamp, TOSAC_ATTR_CLAMP_min_val, lo, 2) ||
        tosac_node_set_bytes(clamp, TOSAC_ATTR_CLAMP_max_val, hi, 2) ||
        tosac_node_set_int(clamp, TOSAC_ATTR_CLAMP_nan_mode, TOSAC_NAN_IGNORE) ||
        tosac_node_set_location(clamp, "a \"b\"") || tosac_block_add_output(b, y))
        goto fail;

    tosac_value *sc = tosac_block_get_or_placeholder(b, "sc");
    tosac_value *z = tosac_block_add_tensor(b, "z", TOSAC_DTYPE_FP16, 2, s22);
    tosac_value *rin[] = {xf, sc};
    tosac_node *rs = sc && z ? tosac_block_add_node(b, TOSAC_OP_RESIZE, 2, rin, 1, &z) : NULL;
    if (!rs || tosac_node_set_int(rs, TOSAC_ATTR_RESIZE_mode, 7)) goto fail;

    tosac_value *u = tosac_block_add_tensor(b, "u", TOSAC_DTYPE_INT8, 2, s22);
    if (!u || !tosac_block_add_node(b, (tosac_op)99, 1, &x, 1, &u)) goto fail;
    return g;
fail:
    tosac_graph_destroy(g);
    return NULL;
}

static const char k_expected_print[] =
    "tosa 1.0.0 (draft)\n"
    "region \"main\" {\n"
    "  block \"main\"(%x: INT8[2,2], %xf: FP16[2,2]) -> (%y) {\n"
    "    %orphan : FP32[1]  // not produced by any operator\n"
    "    %sh : shape[2]  // not produced by any operator\n"
    "    %c4 = CONST : INT4[3] = [1,-2,7]\n"
    "    %h = CONST : FP16[3] = [1.5,-inf,nan]\n"
    "    %bf = CONST : BF16[1] = [0.1001]\n"
    "    %bo = CONST : BOOL[2] = [true,false]\n"
    "    %i48 = CONST : INT48[2] = [-5,140737488355327]\n"
    "    %big = CONST : INT16[17]  // 34 bytes\n"
    "    %short = CONST : INT32[2]  // 4 bytes, not decodable as the declared type\n"
    "    %y = CLAMP(%xf) {min_val = -1.0, max_val = 65504.0, nan_mode = IGNORE} : FP16[2,2] loc(\"a \\\"b\\\"\")\n"
    "    %z = RESIZE(%xf, %sc <undeclared>) {mode = 7} : FP16[2,2]\n"
    "    %u = UNKNOWN_OP(99)(%x) : INT8[2,2]\n"
    "  }\n"
    "}\n";

static void test_print(void)
{
    tosac_graph *g = build_graph();
    EXPECT(g != NULL);
    if (!g) return;
    char *s = tosac_graph_print(g);
    EXPECT_STREQ(s, k_expected_print);
    if (s && strcmp(s, k_expected_print) != 0) fprintf(stderr, "got:\n%s", s);
    char *s2 = tosac_graph_print(g);
    EXPECT_STREQ(s2, s); /* deterministic */
    tosac_string_free(s);
    tosac_string_free(s2);
    tosac_graph_destroy(g);
    EXPECT(tosac_graph_print(NULL) == NULL);
}

static void test_inspect_text(void)
{
    tosac_graph *g = build_graph();
    if (!g) return;
    char *s = tosac_inspect_text(g);
    EXPECT(s != NULL);
    if (s) {
        EXPECT(strstr(s, "TOSA 1.0.0 (draft)\n") == s);
        EXPECT(strstr(s, "\n    c4      INT4[3]    const 2 bytes = [1,-2,7]\n") != NULL);
        EXPECT(strstr(s, "\n    short   INT32[2]   const 4 bytes (not decodable as the declared type)\n") != NULL);
        EXPECT(strstr(s, "  undeclared (1):\n    sc <undeclared>  ?\n") != NULL);
        EXPECT(strstr(s, "  8  RESIZE   xf, sc <undeclared> -> z  {mode = 7}\n") != NULL);
        EXPECT(strstr(s, "  parameter bytes: 62\n") != NULL); /* 2+6+2+2+12+34+4 */
        EXPECT(strstr(s, "  ops by type:\n    CONST    7\n    CLAMP    1\n    RESIZE   1\n    UNKNOWN  1\n") != NULL);
    }
    tosac_string_free(s);
    tosac_graph_destroy(g);
}

/* Runs /usr/bin/python3 -m json.tool on `text` when python is available. */
static void check_json_with_python(const char *text)
{
    if (access("/usr/bin/python3", X_OK) != 0) {
        fprintf(stderr, "(no /usr/bin/python3: JSON not checked independently)\n");
        return;
    }
    char path[] = "/tmp/tosac_print_test_XXXXXX";
    int fd = mkstemp(path);
    EXPECT(fd >= 0);
    if (fd < 0) return;
    FILE *f = fdopen(fd, "wb");
    EXPECT(f && fputs(text, f) >= 0);
    if (f) fclose(f);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 -m json.tool %s >/dev/null", path);
    EXPECT_EQ_I(system(cmd), 0);
    remove(path);
}

static void test_inspect_json(void)
{
    tosac_graph *g = build_graph();
    if (!g) return;
    char *s = tosac_inspect_json(g);
    EXPECT(s != NULL);
    if (s) {
        EXPECT(strstr(s, "\"version\": {\"major\": 1, \"minor\": 0, \"patch\": 0, \"draft\": true}") != NULL);
        EXPECT(strstr(s, "{\"name\": \"h\", \"type\": \"FP16\", \"shape\": [3], \"const_bytes\": 6, \"variable\": false, "
                         "\"variable_name\": null, \"values\": [1.5,\"-Infinity\",\"NaN\"]}") != NULL);
        EXPECT(strstr(s, "\"values\": [true,false]") != NULL);
        EXPECT(strstr(s, "{\"name\": \"sh\", \"rank\": 2, \"const_bytes\": 0, \"values\": null}") != NULL);
        EXPECT(strstr(s, "\"attributes\": {\"min_val\": -1.0, \"max_val\": 65504.0, \"nan_mode\": \"IGNORE\"}, "
                         "\"location\": \"a \\\"b\\\"\"}") != NULL);
        EXPECT(strstr(s, "\"attributes\": {\"mode\": 7}") != NULL);
        EXPECT(strstr(s, "\"op\": \"UNKNOWN\", \"opcode\": 99") != NULL);
        EXPECT(strstr(s, "\"undeclared\": [\"sc\"]") != NULL);
        EXPECT(strstr(s, "\"ops_by_type\": {\"CONST\": 7, \"CLAMP\": 1, \"RESIZE\": 1, \"UNKNOWN\": 1}") != NULL);
        EXPECT(strstr(s, "\"parameter_bytes\": 62") != NULL);
        check_json_with_python(s);
    }
    tosac_string_free(s);

    /* an empty graph is still a complete document */
    tosac_graph *e = tosac_graph_create();
    char *es = e ? tosac_inspect_json(e) : NULL;
    EXPECT(es != NULL);
    if (es) {
        EXPECT(strstr(es, "\"regions\": [],") != NULL);
        check_json_with_python(es);
    }
    tosac_string_free(es);
    tosac_graph_destroy(e);
    tosac_graph_destroy(g);
}

/* Every allocation failure inside the formatters gives NULL and leaks nothing. */
static void test_alloc_failures(void)
{
    tosac_set_allocator(&k_counting);
    tosac_graph *g = build_graph();
    EXPECT(g != NULL);
    char *(*fns[3])(const tosac_graph *) = {tosac_graph_print, tosac_inspect_text, tosac_inspect_json};
    for (int f = 0; g && f < 3; f++) {
        char *ref = fns[f](g);
        EXPECT(ref != NULL);
        long long base_bytes = g_live_bytes, base_blocks = g_live_blocks;
        int failures = 0;
        for (long k = 0; k < 100000; k++) {
            g_fail_after = k;
            char *s = fns[f](g);
            g_fail_after = -1;
            if (s) {
                EXPECT_STREQ(s, ref);
                tosac_string_free(s);
                break;
            }
            failures++;
            EXPECT_EQ_I(g_live_bytes, base_bytes);
            EXPECT_EQ_I(g_live_blocks, base_blocks);
        }
        EXPECT(failures > 0);
        tosac_string_free(ref);
    }
    tosac_graph_destroy(g);
    EXPECT_EQ_I(g_live_bytes, 0); /* every free got back exactly the size allocated */
    EXPECT_EQ_I(g_live_blocks, 0);
    tosac_set_allocator(NULL);
}

int main(void)
{
    RUN(test_strbuf);
    RUN(test_json_escape);
    RUN(test_print);
    RUN(test_inspect_text);
    RUN(test_inspect_json);
    RUN(test_alloc_failures);
    return test_summary();
}
