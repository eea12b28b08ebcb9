/* .npy reading/writing, hostile headers, numpy interoperability and the TOSA data conversions. */
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/fp.h"
#include "harness/npy_view.h"
#include "harness/test.h"
#include "tosac/npy.h"

static char g_dir[512];
static int g_have_numpy;

/* ------------------------------------------------------------------------------------------ */
/* helpers                                                                                    */

static const char *tmp_path(const char *name)
{
    static char buf[4][700];
    static int k;
    char *p = buf[k++ % 4];
    snprintf(p, sizeof buf[0], "%s/%s", g_dir, name);
    return p;
}

static int file_exists(const char *path) { return access(path, F_OK) == 0; }

/* Entries of the temp dir whose name contains ".tmp" (leftover temporary files). */
static int count_tmp_leftovers(void)
{
    DIR *dir = opendir(g_dir);
    if (!dir) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL)
        if (strstr(e->d_name, ".tmp")) n++;
    closedir(dir);
    return n;
}

/* Finds the string needle in the n bytes at hay. */
static int contains(const uint8_t *hay, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (!memcmp(hay + i, needle, k)) return 1;
    return 0;
}

static size_t slurp(const char *path, uint8_t *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    return n;
}

/* True if some message in d contains needle (prints the messages when not). */
static int diag_has(const tosac_diag *d, const char *needle)
{
    for (size_t i = 0; i < tosac_diag_count(d); i++)
        if (strstr(tosac_diag_message(d, i, NULL), needle)) return 1;
    fprintf(stderr, "  no message containing \"%s\"; messages:\n", needle);
    for (size_t i = 0; i < tosac_diag_count(d); i++) fprintf(stderr, "    %s\n", tosac_diag_message(d, i, NULL));
    return 0;
}

/* Builds a .npy image: magic, version, length field, header text (hlen bytes), data. */
static size_t build(uint8_t *o, int major, int minor, const char *hdr, size_t hlen, const void *data, size_t dn)
{
    memcpy(o, "\x93NUMPY", 6);
    o[6] = (uint8_t)major;
    o[7] = (uint8_t)minor;
    size_t off;
    if (major == 1) {
        o[8] = (uint8_t)hlen;
        o[9] = (uint8_t)(hlen >> 8);
        off = 10;
    } else {
        o[8] = (uint8_t)hlen;
        o[9] = (uint8_t)(hlen >> 8);
        o[10] = (uint8_t)(hlen >> 16);
        o[11] = (uint8_t)(hlen >> 24);
        off = 12;
    }
    memcpy(o + off, hdr, hlen);
    if (dn) memcpy(o + off + hlen, data, dn);
    return off + hlen + dn;
}

/* Counting allocator: checks sizes passed to free and the largest single allocation. */
static size_t g_live, g_max_single;
static long g_nalloc;
static long g_fail_countdown = -1; /* >= 0: that many more allocations succeed, then all fail */
static void *cnt_alloc(void *ud, size_t n)
{
    (void)ud;
    if (g_fail_countdown == 0) return NULL;
    if (g_fail_countdown > 0) g_fail_countdown--;
    void *p = malloc(n ? n : 1);
    if (p) {
        g_live += n;
        g_nalloc++;
        if (n > g_max_single) g_max_single = n;
    }
    return p;
}
static void cnt_free(void *ud, void *p, size_t n)
{
    (void)ud;
    if (!p) return;
    g_live -= n;
    g_nalloc--;
    free(p);
}
static const tosac_allocator k_counting = {NULL, cnt_alloc, cnt_free};

/* ------------------------------------------------------------------------------------------ */
/* writing and reading back                                                                   */

static void test_write_read_roundtrip(void)
{
    tosac_diag *d = tosac_diag_create();
    const float vals[6] = {0.0f, 1.5f, -2.0f, 3.25f, 1e6f, -0.0f};
    const int64_t shape[2] = {2, 3};
    const char *p = tmp_path("rt_f32.npy");
    EXPECT_EQ_I(tosac_npy_write_file(p, "<f4", 2, shape, vals, sizeof vals, d), TOSAC_OK);

    /* header layout */
    uint8_t raw[256];
    size_t n = slurp(p, raw, sizeof raw);
    EXPECT(!memcmp(raw, "\x93NUMPY\x01\x00", 8));
    size_t hl = raw[8] | (size_t)raw[9] << 8;
    EXPECT_EQ_I(n, 10 + hl + 24);
    EXPECT_EQ_I((10 + hl) % 64, 0);
    EXPECT_EQ_I(raw[10 + hl - 1], '\n');
    EXPECT(contains(raw, n, "'shape': (2, 3)"));
    EXPECT(contains(raw, n, "'fortran_order': False"));
    EXPECT(!memcmp(raw + 10 + hl, vals, sizeof vals));

    tosac_npy a;
    EXPECT_EQ_I(tosac_npy_read_file(p, &a, d), TOSAC_OK);
    EXPECT_STREQ(a.descr, "<f4");
    EXPECT_EQ_I(a.rank, 2);
    EXPECT_EQ_I(a.shape[0], 2);
    EXPECT_EQ_I(a.shape[1], 3);
    EXPECT_EQ_I(a.count, 6);
    EXPECT_EQ_I(a.elem_size, 4);
    EXPECT_EQ_I(a.nbytes, 24);
    EXPECT(a.data && !memcmp(a.data, vals, sizeof vals));
    tosac_npy_free(&a);
    EXPECT(a.data == NULL && a.nbytes == 0);
    tosac_npy_free(&a); /* idempotent */
    tosac_npy_free(NULL);

    /* rank 1: trailing comma; rank 0: () with one element */
    const int16_t v16[3] = {-1, 2, 300};
    const int64_t s1[1] = {3};
    p = tmp_path("rt_i16.npy");
    EXPECT_EQ_I(tosac_npy_write_file(p, "<i2", 1, s1, v16, sizeof v16, d), TOSAC_OK);
    n = slurp(p, raw, sizeof raw);
    EXPECT(contains(raw, n, "'shape': (3,)"));
    EXPECT_EQ_I(tosac_npy_read_file(p, &a, d), TOSAC_OK);
    EXPECT_EQ_I(a.rank, 1);
    EXPECT_EQ_I(a.count, 3);
    EXPECT(!memcmp(a.data, v16, sizeof v16));
    tosac_npy_free(&a);

    const int32_t scalar = -42;
    p = tmp_path("rt_scalar.npy");
    EXPECT_EQ_I(tosac_npy_write_file(p, "<i4", 0, NULL, &scalar, 4, d), TOSAC_OK);
    n = slurp(p, raw, sizeof raw);
    EXPECT(contains(raw, n, "'shape': ()"));
    EXPECT_EQ_I(tosac_npy_read_file(p, &a, d), TOSAC_OK);
    EXPECT_EQ_I(a.rank, 0);
    EXPECT_EQ_I(a.count, 1);
    EXPECT_EQ_I(a.nbytes, 4);
    EXPECT(!memcmp(a.data, &scalar, 4));
    tosac_npy_free(&a);

    /* zero elements */
    const int64_t s0[2] = {0, 3};
    p = tmp_path("rt_empty.npy");
    EXPECT_EQ_I(tosac_npy_write_file(p, "<f4", 2, s0, NULL, 0, d), TOSAC_OK);
    EXPECT_EQ_I(tosac_npy_read_file(p, &a, d), TOSAC_OK);
    EXPECT_EQ_I(a.count, 0);
    EXPECT_EQ_I(a.nbytes, 0);
    EXPECT(a.data == NULL);
    EXPECT_EQ_I(a.shape[1], 3);
    tosac_npy_free(&a);

    /* every descr, and overwriting an existing file */
    static const char *const descrs[] = {"|b1", "|i1", "|u1", "<i2", "<u2", "<i4", "<u4", "<i8",
                                         "<u8", "<f2", "<f4", "<f8", "<V2", "|V1", "<V1", "<V4"};
    static const char *const norms[] = {"|b1", "|i1", "|u1", "<i2", "<u2", "<i4", "<u4", "<i8",
                                        "<u8", "<f2", "<f4", "<f8", "<V2", "|V1", "|V1", "<V4"};
    static const size_t sizes[] = {1, 1, 1, 2, 2, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1, 4};
    uint8_t data[5 * 8];
    for (size_t i = 0; i < sizeof data; i++) data[i] = (uint8_t)(i * 37 + 1);
    const int64_t s5[1] = {5};
    p = tmp_path("rt_all.npy");
    for (size_t k = 0; k < sizeof descrs / sizeof descrs[0]; k++) {
        if (!strcmp(descrs[k], "|b1")) continue; /* bool bytes must be 0/1 for numpy; checked elsewhere */
        EXPECT_EQ_I(tosac_npy_write_file(p, descrs[k], 1, s5, data, 5 * sizes[k], d), TOSAC_OK);
        EXPECT_EQ_I(tosac_npy_read_file(p, &a, d), TOSAC_OK);
        EXPECT_STREQ(a.descr, norms[k]);
        EXPECT_EQ_I(a.elem_size, sizes[k]);
        EXPECT(a.nbytes == 5 * sizes[k] && !memcmp(a.data, data, a.nbytes));
        tosac_npy_free(&a);
    }
    EXPECT_EQ_I(count_tmp_leftovers(), 0);
    EXPECT_EQ_I(tosac_diag_count(d), 0);
    tosac_diag_destroy(d);
}

static void test_write_errors(void)
{
    tosac_diag *d = tosac_diag_create();
    const float vals[4] = {1, 2, 3, 4};
    const int64_t shape[1] = {4};
    const char *p = tmp_path("werr.npy");

    EXPECT_EQ_I(tosac_npy_write_file(p, "<f4", 1, shape, vals, 12, d), TOSAC_ERR_INVALID_ARG);
    EXPECT(diag_has(d, "werr.npy: shape (4,) of '<f4' needs 16 data bytes, 12 given"));
    EXPECT(!file_exists(p));
    EXPECT_EQ_I(tosac_npy_write_file(p, "<c8", 1, shape, vals, 16, d), TOSAC_ERR_INVALID_ARG);
    EXPECT_EQ_I(tosac_npy_write_file(p, "<f4xxxxxxxxx", 1, shape, vals, 16, d), TOSAC_ERR_INVALID_ARG);
    EXPECT_EQ_I(tosac_npy_write_file(p, "<f4", 33, shape, vals, 16, d), TOSAC_ERR_INVALID_ARG);
    EXPECT_EQ_I(tosac_npy_write_file(p, "<f4", -1, shape, vals, 16, d), TOSAC_ERR_INVALID_ARG);
    const int64_t neg[1] = {-4};
    EXPECT_EQ_I(tosac_npy_write_file(p, "<f4", 1, neg, vals, 16, d), TOSAC_ERR_INVALID_ARG);
    const int64_t huge[2] = {INT64_MAX, 2};
    EXPECT_EQ_I(tosac_npy_write_file(p, "<f4", 2, huge, vals, 16, d), TOSAC_ERR_INVALID_ARG);
    EXPECT_EQ_I(tosac_npy_write_file(p, "<f4", 1, shape, NULL, 16, d), TOSAC_ERR_INVALID_ARG);
    EXPECT_EQ_I(tosac_npy_write_file(NULL, "<f4", 1, shape, vals, 16, d), TOSAC_ERR_INVALID_ARG);
    EXPECT(!file_exists(p));

    /* directory that does not exist: IO error, nothing left behind */
    char missing[700];
    snprintf(missing, sizeof missing, "%s/no/such/dir/x.npy", g_dir);
    tosac_diag_clear(d);
    EXPECT_EQ_I(tosac_npy_write_file(missing, "<f4", 1, shape, vals, 16, d), TOSAC_ERR_IO);
    EXPECT(diag_has(d, "x.npy"));

    /* a failed write leaves an existing file untouched */
    EXPECT_EQ_I(tosac_npy_write_file(p, "<f4", 1, shape, vals, 16, d), TOSAC_OK);
    EXPECT_EQ_I(tosac_npy_write_file(p, "<f4", 1, shape, vals, 8, d), TOSAC_ERR_INVALID_ARG);
    tosac_npy a;
    EXPECT_EQ_I(tosac_npy_read_file(p, &a, d), TOSAC_OK);
    EXPECT_EQ_I(a.count, 4);
    tosac_npy_free(&a);

    /* the target is a directory: rename fails, the temporary file is removed */
    const char *dirp = tmp_path("adir.npy");
    char cmd[800];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && touch '%s/keep'", dirp, dirp);
    EXPECT_EQ_I(system(cmd), 0);
    EXPECT_EQ_I(tosac_npy_write_file(dirp, "<f4", 1, shape, vals, 16, d), TOSAC_ERR_IO);
    EXPECT_EQ_I(count_tmp_leftovers(), 0);

    /* read errors */
    tosac_diag_clear(d);
    EXPECT_EQ_I(tosac_npy_read_file(tmp_path("does_not_exist.npy"), &a, d), TOSAC_ERR_IO);
    EXPECT(diag_has(d, "does_not_exist.npy: cannot open"));
    EXPECT_EQ_I(tosac_npy_read_file(dirp, &a, d), TOSAC_ERR_IO);
    EXPECT_EQ_I(tosac_npy_read_mem(NULL, 5, "x", &a, d), TOSAC_ERR_INVALID_ARG);
    EXPECT_EQ_I(tosac_npy_read_mem("abc", 3, "x", NULL, d), TOSAC_ERR_INVALID_ARG);
    tosac_diag_destroy(d);
}

/* ------------------------------------------------------------------------------------------ */
/* hostile and odd headers in memory                                                          */

typedef struct hcase {
    const char *what;
    int major, minor;
    const char *hdr;
    size_t hlen;      /* 0: strlen(hdr) */
    size_t ndata;     /* data bytes after the header (pattern bytes) */
    tosac_status want;
    const char *msg;
} hcase;

#define LIT(s) s, sizeof(s) - 1

static const char k_rank40[] =
    "{'descr': '|u1', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, "
    "1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), }";

static const hcase k_bad[] = {
    {"version 4.0", 4, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 0, 4, TOSAC_ERR_UNSUPPORTED,
     "hostile.npy: .npy format version 4.0 is not supported"},
    {"version 1.1", 1, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 0, 4, TOSAC_ERR_UNSUPPORTED,
     "version 1.1"},
    {"version 0.0", 0, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 0, 4, TOSAC_ERR_UNSUPPORTED,
     "version 0.0"},
    {"short data", 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", 0, 15, TOSAC_ERR_FORMAT,
     "hostile.npy: truncated: shape (4,) of '<f4' needs 16 data bytes, file has 15"},
    {"no data", 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 0, 0, TOSAC_ERR_FORMAT,
     "needs 4 data bytes"},
    {"trailing data", 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", 0, 17, TOSAC_ERR_FORMAT,
     "hostile.npy: 1 bytes of trailing data"},
    {"descr <f3", 1, 0, "{'descr': '<f3', 'fortran_order': False, 'shape': (), }", 0, 3, TOSAC_ERR_UNSUPPORTED,
     "hostile.npy: header: unsupported descr '<f3'"},
    {"descr <c8", 1, 0, "{'descr': '<c8', 'fortran_order': False, 'shape': (), }", 0, 8, TOSAC_ERR_UNSUPPORTED,
     "unsupported descr '<c8'"},
    {"descr |O", 1, 0, "{'descr': '|O', 'fortran_order': False, 'shape': (), }", 0, 8, TOSAC_ERR_UNSUPPORTED,
     "unsupported descr '|O'"},
    {"descr <U4", 1, 0, "{'descr': '<U4', 'fortran_order': False, 'shape': (), }", 0, 16, TOSAC_ERR_UNSUPPORTED,
     "unsupported descr '<U4'"},
    {"descr <i16", 1, 0, "{'descr': '<i16', 'fortran_order': False, 'shape': (), }", 0, 16, TOSAC_ERR_UNSUPPORTED,
     "unsupported descr"},
    {"descr empty", 1, 0, "{'descr': '', 'fortran_order': False, 'shape': (), }", 0, 0, TOSAC_ERR_UNSUPPORTED,
     "unsupported descr ''"},
    {"descr list", 1, 0, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (), }", 0, 4,
     TOSAC_ERR_UNSUPPORTED, "structured arrays"},
    {"descr number", 1, 0, "{'descr': 5, 'fortran_order': False, 'shape': (), }", 0, 4, TOSAC_ERR_FORMAT,
     "hostile.npy: header: expected a quoted string for 'descr', found '5'"},
    {"descr too long", 1, 0,
     "{'descr': 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'fortran_order': False, 'shape': (), }", 0,
     4, TOSAC_ERR_FORMAT, "too long"},
    {"fortran True", 1, 0, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 0, 16,
     TOSAC_ERR_UNSUPPORTED, "hostile.npy: fortran_order True"},
    {"fortran yes", 1, 0, "{'descr': '<f4', 'fortran_order': 'yes', 'shape': (), }", 0, 4, TOSAC_ERR_FORMAT,
     "'fortran_order' must be True or False"},
    {"fortran Truex", 1, 0, "{'descr': '<f4', 'fortran_order': Truex, 'shape': (), }", 0, 4, TOSAC_ERR_FORMAT,
     "'fortran_order' must be True or False"},
    {"shape string entry", 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 'a'), }", 0, 8,
     TOSAC_ERR_FORMAT, "hostile.npy: header: 'shape' entry 1 is not an integer"},
    {"shape float entry", 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2.0,), }", 0, 8,
     TOSAC_ERR_FORMAT, "'shape' entry 0 is not an integer"},
    {"shape negative", 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1), }", 0, 8, TOSAC_ERR_FORMAT,
     "hostile.npy: header: 'shape' entry 1 is negative"},
    {"shape huge dim", 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", 0, 8,
     TOSAC_ERR_FORMAT, "'shape' entry 0 is too large"},
    {"shape product overflow", 1, 0,
     "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", 0, 8, TOSAC_ERR_FORMAT,
     "hostile.npy: header: shape (4294967296, 4294967296) has too many elements"},
    {"shape bytes overflow", 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904,), }", 0,
     8, TOSAC_ERR_FORMAT, "too many elements"},
    {"shape big, file small", 1, 0, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000, 1000000), }",
     0, 64, TOSAC_ERR_FORMAT, "needs 8000000000000000 data bytes, file has 64"},
    {"shape not tuple", 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (3), }", 0, 12, TOSAC_ERR_FORMAT,
     "'shape' (3) is not a tuple"},
    {"shape list", 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': [3], }", 0, 12, TOSAC_ERR_FORMAT,
     "expected '(' to start the 'shape' tuple, found '['"},
    {"shape double comma", 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,,3), }", 0, 24,
     TOSAC_ERR_FORMAT, "'shape' entry 1 is not an integer"},
    {"shape lone comma", 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (,), }", 0, 4, TOSAC_ERR_FORMAT,
     "'shape' entry 0 is not an integer"},
    {"shape missing comma", 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2 3), }", 0, 24,
     TOSAC_ERR_FORMAT, "expected ',' or ')' after 'shape' entry 0"},
    {"shape unterminated", 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3", 0, 24, TOSAC_ERR_FORMAT,
     "found the end of the header"},
    {"rank 40", 1, 0, k_rank40, 0, 1, TOSAC_ERR_UNSUPPORTED, "hostile.npy: header: rank 40 exceeds the maximum of 32"},
    {"missing shape", 1, 0, "{'descr': '<f4', 'fortran_order': False, }", 0, 4, TOSAC_ERR_FORMAT,
     "hostile.npy: header: missing key 'shape'"},
    {"missing descr", 1, 0, "{'fortran_order': False, 'shape': (), }", 0, 4, TOSAC_ERR_FORMAT,
     "missing key 'descr'"},
    {"missing fortran", 1, 0, "{'descr': '<f4', 'shape': (), }", 0, 4, TOSAC_ERR_FORMAT,
     "missing key 'fortran_order'"},
    {"empty dict", 1, 0, "{}", 0, 4, TOSAC_ERR_FORMAT, "missing key"},
    {"duplicate key", 1, 0, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (), }", 0, 4,
     TOSAC_ERR_FORMAT, "hostile.npy: header: duplicate key 'descr'"},
    {"unknown key", 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (), 'foo': 1, }", 0, 4,
     TOSAC_ERR_FORMAT, "hostile.npy: header: unexpected key 'foo'"},
    {"unterminated string", 1, 0, "{'descr': '<f4", 0, 4, TOSAC_ERR_FORMAT, "unterminated string for 'descr'"},
    {"unterminated dict", 1, 0, "{'descr': '<f4', ", 0, 4, TOSAC_ERR_FORMAT, "found the end of the header"},
    {"missing colon", 1, 0, "{'descr' '<f4', 'fortran_order': False, 'shape': (), }", 0, 4, TOSAC_ERR_FORMAT,
     "expected ':' after key 'descr'"},
    {"missing comma", 1, 0, "{'descr': '<f4' 'fortran_order': False, 'shape': (), }", 0, 4, TOSAC_ERR_FORMAT,
     "expected ',' or '}' after the value of 'descr'"},
    {"garbage after dict", 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (), } x", 0, 4,
     TOSAC_ERR_FORMAT, "unexpected 'x' after the closing '}'"},
    {"not a dict", 1, 0, "descr: <f4", 0, 4, TOSAC_ERR_FORMAT, "expected '{' at the start of the header dict"},
    {"empty header", 1, 0, "", 0, 4, TOSAC_ERR_FORMAT, "expected '{'"},
    {"NUL byte", 1, 0, LIT("{'descr': '<f4',\0 'fortran_order': False, 'shape': (), }"), 4, TOSAC_ERR_FORMAT,
     "byte 0x00"},
    {"NUL in string", 1, 0, LIT("{'descr': '<f\0', 'fortran_order': False, 'shape': (), }"), 4, TOSAC_ERR_FORMAT,
     "non-printable byte 0x00"},
    {"non-ASCII in string", 1, 0, "{'descr': '<f\xC3\xA4', 'fortran_order': False, 'shape': (), }", 0, 4,
     TOSAC_ERR_FORMAT, "non-printable byte 0xC3"},
    {"escape", 1, 0, "{'descr': '<f\\x34', 'fortran_order': False, 'shape': (), }", 0, 4, TOSAC_ERR_FORMAT,
     "escape sequences"},
    {"key not a string", 1, 0, "{descr: '<f4', 'fortran_order': False, 'shape': (), }", 0, 4, TOSAC_ERR_FORMAT,
     "expected a quoted string for a key, found 'd'"},
};

static void test_hostile_headers(void)
{
    tosac_set_allocator(&k_counting);
    g_live = 0;
    g_nalloc = 0;
    tosac_diag *d = tosac_diag_create();
    static uint8_t buf[4096];
    uint8_t pattern[64];
    for (size_t i = 0; i < sizeof pattern; i++) pattern[i] = (uint8_t)(0xA5 ^ i);

    tosac_npy sentinel, out;
    memset(&sentinel, 0x5A, sizeof sentinel);
    for (size_t k = 0; k < sizeof k_bad / sizeof k_bad[0]; k++) {
        const hcase *c = &k_bad[k];
        size_t hl = c->hlen ? c->hlen : strlen(c->hdr);
        size_t len = build(buf, c->major, c->minor, c->hdr, hl, pattern, c->ndata);
        tosac_diag_clear(d);
        memcpy(&out, &sentinel, sizeof out);
        g_max_single = 0;
        tosac_status st = tosac_npy_read_mem(buf, len, "hostile.npy", &out, d);
        if (st != c->want) fprintf(stderr, "  case '%s': status %d, want %d\n", c->what, (int)st, (int)c->want);
        EXPECT_EQ_I(st, c->want);
        EXPECT_EQ_I(tosac_diag_count(d), 1);
        if (!diag_has(d, c->msg)) fprintf(stderr, "  (case '%s')\n", c->what);
        EXPECT(!memcmp(&out, &sentinel, sizeof out)); /* untouched on failure */
        EXPECT(g_max_single <= 4096);
    }

    /* Preamble problems, built by hand. */
    struct {
        const char *what;
        const char *bytes;
        size_t len;
        tosac_status want;
        const char *msg;
    } pre[] = {
        {"bad magic", "\x93NUMPZ\x01\x00\x10\x00{}", 12, TOSAC_ERR_FORMAT, "hostile.npy: not a .npy file (bad magic)"},
        {"text file", "hello world, not numpy", 22, TOSAC_ERR_FORMAT, "bad magic"},
        {"empty", "", 0, TOSAC_ERR_FORMAT, "truncated: 0 bytes"},
        {"magic only", "\x93NUMPY", 6, TOSAC_ERR_FORMAT, "truncated: 6 bytes"},
        {"7 bytes", "\x93NUMPY\x01", 7, TOSAC_ERR_FORMAT, "truncated"},
        {"v1 no length", "\x93NUMPY\x01\x00\x10", 9, TOSAC_ERR_FORMAT, "truncated: 9 bytes"},
        {"v2 short length", "\x93NUMPY\x02\x00\x10\x00\x00", 11, TOSAC_ERR_FORMAT, "truncated: 11 bytes"},
        {"header past end", "\x93NUMPY\x01\x00\x88\x13{'descr'", 18, TOSAC_ERR_FORMAT,
         "hostile.npy: truncated: header length 5000 runs past the end of the file (18 bytes)"},
        {"header over limit", "\x93NUMPY\x02\x00\x00\x00\x20\x00{}", 14, TOSAC_ERR_FORMAT,
         "header length 2097152 exceeds the limit"},
        {"header 4 GiB", "\x93NUMPY\x03\x00\xFF\xFF\xFF\xFF{}", 14, TOSAC_ERR_FORMAT, "exceeds the limit"},
    };
    for (size_t k = 0; k < sizeof pre / sizeof pre[0]; k++) {
        tosac_diag_clear(d);
        memcpy(&out, &sentinel, sizeof out);
        g_max_single = 0;
        tosac_status st = tosac_npy_read_mem(pre[k].len ? pre[k].bytes : NULL, pre[k].len, "hostile.npy", &out, d);
        if (st != pre[k].want) fprintf(stderr, "  case '%s': status %d\n", pre[k].what, (int)st);
        EXPECT_EQ_I(st, pre[k].want);
        if (!diag_has(d, pre[k].msg)) fprintf(stderr, "  (case '%s')\n", pre[k].what);
        EXPECT(!memcmp(&out, &sentinel, sizeof out));
        EXPECT(g_max_single <= 4096);
    }

    /* A NULL name still gives a message. */
    tosac_diag_clear(d);
    EXPECT_EQ_I(tosac_npy_read_mem("xx", 2, NULL, &out, d), TOSAC_ERR_FORMAT);
    EXPECT(diag_has(d, "<npy>: not a .npy file"));
    /* A NULL diag is fine. */
    EXPECT_EQ_I(tosac_npy_read_mem("xx", 2, "x", &out, NULL), TOSAC_ERR_FORMAT);

    tosac_diag_destroy(d);
    EXPECT_EQ_I(g_live, 0);
    EXPECT_EQ_I(g_nalloc, 0);
    tosac_set_allocator(NULL);
}

static void test_tolerant_headers(void)
{
    tosac_diag *d = tosac_diag_create();
    static uint8_t buf[4096];
    const uint8_t data[8] = {0x00, 0x00, 0x01, 0x02, 0xFF, 0xFF, 0xFF, 0xFE};
    struct {
        const char *what;
        int major;
        const char *hdr;
        size_t ndata;
        const char *descr;
        int rank;
        int64_t d0, d1;
    } ok[] = {
        {"double quotes, no spaces", 1, "{\"descr\":\"<i4\",\"fortran_order\":False,\"shape\":(2,)}", 8, "<i4", 1, 2, 0},
        {"reordered, spaced", 1, "{ 'shape' : ( 2 , 1 , ) , 'fortran_order' : False , 'descr' : '<i2' , }\n   ", 4,
         "<i2", 2, 2, 1},
        {"tabs and CRLF", 1, "{'descr':\t'|u1',\r\n'fortran_order': False,\r\n'shape': (8,)}\r\n", 8, "|u1", 1, 8, 0},
        {"python 2 longs", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 1L), }", 8, "<f4", 2, 2, 1},
        {"version 2.0", 2, "{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }", 8, "<i8", 1, 1, 0},
        {"version 3.0", 3, "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 2), }", 8, "<f2", 2, 2, 2},
        {"no byte order", 1, "{'descr': 'i2', 'fortran_order': False, 'shape': (4,), }", 8, "<i2", 1, 4, 0},
        {"native order", 1, "{'descr': '=u4', 'fortran_order': False, 'shape': (2,), }", 8, "<u4", 1, 2, 0},
        {"void |V2", 1, "{'descr': '|V2', 'fortran_order': False, 'shape': (4,), }", 8, "<V2", 1, 4, 0},
        {"void <V1", 1, "{'descr': '<V1', 'fortran_order': False, 'shape': (8,), }", 8, "|V1", 1, 8, 0},
        {"bool >b1", 1, "{'descr': '>b1', 'fortran_order': False, 'shape': (8,), }", 8, "|b1", 1, 8, 0},
        {"rank 0", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", 8, "<f8", 0, 0, 0},
        {"zero size", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 99999999999), }", 0, "<f8", 2, 0,
         99999999999},
        {"rank 32", 1,
         "{'descr': '|u1', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, "
         "1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 4)}",
         8, "|u1", 32, 1, 1},
    };
    for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++) {
        size_t len = build(buf, ok[k].major, 0, ok[k].hdr, strlen(ok[k].hdr), data, ok[k].ndata);
        tosac_npy a;
        tosac_diag_clear(d);
        tosac_status st = tosac_npy_read_mem(buf, len, "ok.npy", &a, d);
        if (st != TOSAC_OK) {
            fprintf(stderr, "  case '%s' failed: %s\n", ok[k].what,
                    tosac_diag_count(d) ? tosac_diag_message(d, 0, NULL) : "?");
            EXPECT_EQ_I(st, TOSAC_OK);
            continue;
        }
        EXPECT_STREQ(a.descr, ok[k].descr);
        EXPECT_EQ_I(a.rank, ok[k].rank);
        if (a.rank > 0) EXPECT_EQ_I(a.shape[0], ok[k].d0);
        if (a.rank > 1) EXPECT_EQ_I(a.shape[1], ok[k].d1);
        EXPECT_EQ_I(a.nbytes, ok[k].ndata);
        if (a.nbytes && strcmp(ok[k].what, "bool >b1") != 0) EXPECT(!memcmp(a.data, data, a.nbytes));
        tosac_npy_free(&a);
    }

    /* Big-endian data is converted to little-endian. */
    const uint8_t be[8] = {0x01, 0x02, 0x03, 0x04, 0xFF, 0xFF, 0xFF, 0xFE};
    const char *hbe = "{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }";
    size_t len = build(buf, 1, 0, hbe, strlen(hbe), be, 8);
    tosac_npy a;
    EXPECT_EQ_I(tosac_npy_read_mem(buf, len, "be.npy", &a, d), TOSAC_OK);
    EXPECT_STREQ(a.descr, "<i4");
    const uint8_t le[8] = {0x04, 0x03, 0x02, 0x01, 0xFE, 0xFF, 0xFF, 0xFF};
    EXPECT(!memcmp(a.data, le, 8));
    tosac_npy_free(&a);
    const uint8_t be8[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    hbe = "{'descr': '>f8', 'fortran_order': False, 'shape': (), }";
    len = build(buf, 1, 0, hbe, strlen(hbe), be8, 8);
    EXPECT_EQ_I(tosac_npy_read_mem(buf, len, "be.npy", &a, d), TOSAC_OK);
    const uint8_t le8[8] = {8, 7, 6, 5, 4, 3, 2, 1};
    EXPECT(!memcmp(a.data, le8, 8));
    tosac_npy_free(&a);
    tosac_diag_destroy(d);
}

static uint64_t rng_state = UINT64_C(0x2545F4914F6CDD1D);
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Every truncation of a valid file fails cleanly; random header mutations never crash or leak. */
static void test_truncation_and_mutation(void)
{
    tosac_set_allocator(&k_counting);
    g_live = 0;
    g_nalloc = 0;
    tosac_diag *d = tosac_diag_create();
    static uint8_t good[256], buf[256];
    const int32_t vals[6] = {1, -2, 3, -4, 5, -6};
    const char *hdr = "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }          \n";
    const size_t len = build(good, 1, 0, hdr, strlen(hdr), vals, sizeof vals);
    tosac_npy a;
    EXPECT_EQ_I(tosac_npy_read_mem(good, len, "good.npy", &a, d), TOSAC_OK);
    tosac_npy_free(&a);
    int bad = 0;
    for (size_t n = 0; n < len; n++) {
        memcpy(buf, good, n); /* a fresh copy so ASan sees reads past n */
        tosac_diag_clear(d);
        tosac_status st = tosac_npy_read_mem(buf, n, "cut.npy", &a, d);
        if (st == TOSAC_OK || tosac_diag_count(d) != 1) {
            bad++;
            if (st == TOSAC_OK) tosac_npy_free(&a);
        }
    }
    EXPECT_EQ_I(bad, 0);

    int oks = 0, errs = 0, nomsg = 0;
    const size_t hend = 10 + strlen(hdr);
    for (int it = 0; it < 20000; it++) {
        memcpy(buf, good, len);
        int flips = 1 + (int)(rng() % 4);
        for (int f = 0; f < flips; f++) {
            size_t pos = (size_t)(rng() % hend);
            uint64_t r = rng();
            static const char interesting[] = "{}()[],:'\"-0123456789LTF \n\\";
            buf[pos] = (r & 1) ? (uint8_t)(r >> 8) : (uint8_t)interesting[(r >> 8) % (sizeof interesting - 1)];
        }
        size_t n = len - (size_t)(rng() % 3);
        tosac_diag_clear(d);
        g_max_single = 0;
        tosac_status st = tosac_npy_read_mem(buf, n, "mut.npy", &a, d);
        if (st == TOSAC_OK) {
            oks++;
            if (a.nbytes > n || a.nbytes != (size_t)a.count * a.elem_size) bad++;
            tosac_npy_free(&a);
        } else {
            errs++;
            if (tosac_diag_count(d) != 1 || strncmp(tosac_diag_message(d, 0, NULL), "mut.npy: ", 9) != 0) nomsg++;
        }
        if (g_max_single > 4096) bad++;
    }
    EXPECT_EQ_I(bad, 0);
    EXPECT_EQ_I(nomsg, 0);
    EXPECT(oks > 0 && errs > 0);
    tosac_diag_destroy(d);
    EXPECT_EQ_I(g_live, 0);
    EXPECT_EQ_I(g_nalloc, 0);
    tosac_set_allocator(NULL);
}

/* read_file: same checks as read_mem, data of the promised size only after the size check. */
static void test_read_file_hostile(void)
{
    tosac_set_allocator(&k_counting);
    g_live = 0;
    g_nalloc = 0;
    tosac_diag *d = tosac_diag_create();
    static uint8_t buf[512];
    const char *hdr = "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000, 1000000), }";
    uint8_t data[16] = {0};
    size_t len = build(buf, 1, 0, hdr, strlen(hdr), data, sizeof data);
    const char *p = tmp_path("huge_shape.npy");
    FILE *f = fopen(p, "wb");
    EXPECT(f && fwrite(buf, 1, len, f) == len);
    if (f) fclose(f);
    tosac_npy a;
    g_max_single = 0;
    EXPECT_EQ_I(tosac_npy_read_file(p, &a, d), TOSAC_ERR_FORMAT);
    EXPECT(diag_has(d, "huge_shape.npy: truncated: shape (1000000000, 1000000) of '<f8' needs"));
    EXPECT(g_max_single <= 4096);

    /* header length past the end of the file */
    buf[8] = 0xFF;
    buf[9] = 0xFF;
    f = fopen(p, "wb");
    EXPECT(f && fwrite(buf, 1, len, f) == len);
    if (f) fclose(f);
    tosac_diag_clear(d);
    g_max_single = 0;
    EXPECT_EQ_I(tosac_npy_read_file(p, &a, d), TOSAC_ERR_FORMAT);
    EXPECT(diag_has(d, "runs past the end of the file"));
    EXPECT(g_max_single <= 4096);

    /* trailing bytes and short files through the file path too */
    const int64_t s2[1] = {2};
    const float v[2] = {1, 2};
    EXPECT_EQ_I(tosac_npy_write_file(p, "<f4", 1, s2, v, 8, d), TOSAC_OK);
    f = fopen(p, "ab");
    EXPECT(f && fputc(0, f) == 0);
    if (f) fclose(f);
    tosac_diag_clear(d);
    EXPECT_EQ_I(tosac_npy_read_file(p, &a, d), TOSAC_ERR_FORMAT);
    EXPECT(diag_has(d, "1 bytes of trailing data"));
    size_t fsz = slurp(p, buf, sizeof buf);
    EXPECT_EQ_I(truncate(p, (off_t)fsz - 2), 0);
    tosac_diag_clear(d);
    EXPECT_EQ_I(tosac_npy_read_file(p, &a, d), TOSAC_ERR_FORMAT);
    EXPECT(diag_has(d, "needs 8 data bytes, file has 7"));
    EXPECT_EQ_I(truncate(p, 5), 0);
    tosac_diag_clear(d);
    EXPECT_EQ_I(tosac_npy_read_file(p, &a, d), TOSAC_ERR_FORMAT);
    EXPECT(diag_has(d, "truncated: 5 bytes"));

    /* a non-seekable input (a pipe) is read as a stream */
    if (access("/bin/sh", X_OK) == 0) {
        EXPECT_EQ_I(tosac_npy_write_file(p, "<f4", 1, s2, v, 8, d), TOSAC_OK);
        FILE *pp = NULL;
        char cmd[800];
        snprintf(cmd, sizeof cmd, "cat '%s'", p);
        pp = popen(cmd, "r");
        if (pp) {
            char dev[64];
            snprintf(dev, sizeof dev, "/dev/fd/%d", fileno(pp));
            if (access(dev, R_OK) == 0) {
                tosac_diag_clear(d);
                EXPECT_EQ_I(tosac_npy_read_file(dev, &a, d), TOSAC_OK);
                if (tosac_diag_count(d) == 0) {
                    EXPECT_EQ_I(a.count, 2);
                    EXPECT(!memcmp(a.data, v, 8));
                    tosac_npy_free(&a);
                }
            }
            pclose(pp);
        }
    }
    tosac_diag_destroy(d);
    EXPECT_EQ_I(g_live, 0);
    EXPECT_EQ_I(g_nalloc, 0);
    tosac_set_allocator(NULL);
}

/* ------------------------------------------------------------------------------------------ */
/* TOSA conversions                                                                           */

static int conv_is(const tosac_npy *n, tosac_dtype t, const uint8_t *want, size_t wn)
{
    uint8_t *b = NULL;
    size_t bn = 0;
    tosac_diag *d = tosac_diag_create();
    tosac_status st = tosac_npy_to_tosa(n, t, "t.npy", &b, &bn, d);
    int ok = st == TOSAC_OK && bn == wn && (wn == 0 || (b && !memcmp(b, want, wn)));
    if (!ok) {
        fprintf(stderr, "  %s from %s: status %d, %zu bytes:", tosac_dtype_name(t), n->descr, (int)st, bn);
        for (size_t i = 0; i < bn; i++) fprintf(stderr, " %02X", b[i]);
        if (tosac_diag_count(d)) fprintf(stderr, " (%s)", tosac_diag_message(d, 0, NULL));
        fprintf(stderr, "\n");
    }
    tosac_free(b, bn);
    tosac_diag_destroy(d);
    return ok;
}

static void test_to_tosa(void)
{
    const int8_t i8[4] = {-128, -1, 0, 127};
    const uint8_t u8[4] = {0, 1, 200, 255};
    const uint8_t i16le[6] = {0xFF, 0xFF, 0x2C, 0x01, 0x00, 0x80}; /* -1, 300, -32768 */
    const uint8_t i32le[8] = {0x2C, 0x01, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF}; /* 300, -1 */
    tosac_npy n;

    n = npy_view("|i1", 1, 4, i8);
    EXPECT(conv_is(&n, TOSAC_DTYPE_INT8, (const uint8_t[]){0x80, 0xFF, 0x00, 0x7F}, 4));
    EXPECT(conv_is(&n, TOSAC_DTYPE_INT16, (const uint8_t[]){0x80, 0xFF, 0xFF, 0xFF, 0, 0, 0x7F, 0}, 8));
    EXPECT(conv_is(&n, TOSAC_DTYPE_INT32,
                   (const uint8_t[]){0x80, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 0x7F, 0, 0, 0}, 16));
    n = npy_view("|u1", 1, 4, u8);
    EXPECT(conv_is(&n, TOSAC_DTYPE_INT8, u8, 4));
    EXPECT(conv_is(&n, TOSAC_DTYPE_INT16, (const uint8_t[]){0, 0, 1, 0, 200, 0, 255, 0}, 8));
    EXPECT(conv_is(&n, TOSAC_DTYPE_BOOL, (const uint8_t[]){0, 1, 1, 1}, 4));
    EXPECT(conv_is(&n, TOSAC_DTYPE_FP8E4M3, u8, 4));
    EXPECT(conv_is(&n, TOSAC_DTYPE_FP8E5M2, u8, 4));
    n = npy_view("<i2", 2, 3, i16le);
    EXPECT(conv_is(&n, TOSAC_DTYPE_INT8, (const uint8_t[]){0xFF, 0x2C, 0x00}, 3));
    EXPECT(conv_is(&n, TOSAC_DTYPE_INT16, i16le, 6));
    EXPECT(conv_is(&n, TOSAC_DTYPE_INT32,
                   (const uint8_t[]){0xFF, 0xFF, 0xFF, 0xFF, 0x2C, 0x01, 0, 0, 0x00, 0x80, 0xFF, 0xFF}, 12));
    n = npy_view("<u2", 2, 3, i16le);
    EXPECT(conv_is(&n, TOSAC_DTYPE_INT32,
                   (const uint8_t[]){0xFF, 0xFF, 0, 0, 0x2C, 0x01, 0, 0, 0x00, 0x80, 0, 0}, 12));
    n = npy_view("<i4", 4, 2, i32le);
    EXPECT(conv_is(&n, TOSAC_DTYPE_INT8, (const uint8_t[]){44, 0xFF}, 2)); /* i32 300 -> i8 44 */
    EXPECT(conv_is(&n, TOSAC_DTYPE_INT16, (const uint8_t[]){0x2C, 0x01, 0xFF, 0xFF}, 4));
    EXPECT(conv_is(&n, TOSAC_DTYPE_INT32, i32le, 8));

    /* INT4: low 4 bits, element 2i in the low nibble */
    const int8_t i4src[5] = {-7, 7, -1, 3, 5};
    n = npy_view("|i1", 1, 5, i4src);
    EXPECT(conv_is(&n, TOSAC_DTYPE_INT4, (const uint8_t[]){0x79, 0x3F, 0x05}, 3));
    const uint8_t i4le32[8] = {0xF8, 0, 0, 0, 0x17, 0, 0, 0}; /* 248 -> 0x8, 23 -> 0x7 */
    n = npy_view("<i4", 4, 2, i4le32);
    EXPECT(conv_is(&n, TOSAC_DTYPE_INT4, (const uint8_t[]){0x78}, 1));

    /* INT48 / SHAPE from <i8 */
    const uint8_t i64le[24] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,  /* -1 */
                               0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 0x00, 0x00,  /* 2^47-1 */
                               0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0xFF, 0xFF}; /* -2^47 */
    n = npy_view("<i8", 8, 3, i64le);
    EXPECT(conv_is(&n, TOSAC_DTYPE_INT48,
                   (const uint8_t[]){0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 0, 0,
                                     0, 0, 0, 0x80},
                   18));
    EXPECT(conv_is(&n, TOSAC_DTYPE_SHAPE, i64le, 24));

    /* BOOL from |b1: nonzero -> 1 */
    const uint8_t bools[4] = {0, 1, 2, 0x80};
    n = npy_view("|b1", 1, 4, bools);
    EXPECT(conv_is(&n, TOSAC_DTYPE_BOOL, (const uint8_t[]){0, 1, 1, 1}, 4));

    /* FP */
    float f4[4] = {1.0f, 65520.0f, ldexpf(3.0f, -25), 1.00390625f};
    uint8_t f4le[16];
    for (int i = 0; i < 4; i++) {
        uint32_t u = tosac_fp32_bits(f4[i]);
        for (int k = 0; k < 4; k++) f4le[4 * i + k] = (uint8_t)(u >> (8 * k));
    }
    n = npy_view("<f4", 4, 4, f4le);
    EXPECT(conv_is(&n, TOSAC_DTYPE_FP32, f4le, 16));
    EXPECT(conv_is(&n, TOSAC_DTYPE_FP16, (const uint8_t[]){0x00, 0x3C, 0x00, 0x7C, 0x02, 0x00, 0x04, 0x3C}, 8));
    EXPECT(conv_is(&n, TOSAC_DTYPE_BF16, (const uint8_t[]){0x80, 0x3F, 0x80, 0x47, 0xC0, 0x33, 0x80, 0x3F}, 8));
    const uint8_t h2[4] = {0x00, 0x3C, 0xFF, 0x7B};
    n = npy_view("<f2", 2, 2, h2);
    EXPECT(conv_is(&n, TOSAC_DTYPE_FP16, h2, 4));
    n = npy_view("<V2", 2, 2, h2);
    EXPECT(conv_is(&n, TOSAC_DTYPE_BF16, h2, 4));
    n = npy_view("|V1", 1, 4, u8);
    EXPECT(conv_is(&n, TOSAC_DTYPE_FP8E4M3, u8, 4));
    EXPECT(conv_is(&n, TOSAC_DTYPE_FP8E5M2, u8, 4));

    /* rank 0 and empty */
    tosac_npy s = npy_view("<f4", 4, 1, f4le);
    s.rank = 0;
    EXPECT(conv_is(&s, TOSAC_DTYPE_FP16, (const uint8_t[]){0x00, 0x3C}, 2));
    n = npy_view("<f4", 4, 0, NULL);
    EXPECT(conv_is(&n, TOSAC_DTYPE_FP32, NULL, 0));
    n = npy_view("|i1", 1, 0, NULL);
    EXPECT(conv_is(&n, TOSAC_DTYPE_INT4, NULL, 0));

    /* mismatches name the tensor and what is accepted */
    struct {
        const char *descr;
        size_t es;
        tosac_dtype t;
        const char *msg;
    } bad[] = {
        {"<f8", 8, TOSAC_DTYPE_FP32, "t.npy: descr '<f8' cannot be used for a FP32 tensor (accepted: <f4)"},
        {"<f2", 2, TOSAC_DTYPE_FP32, "FP32"},
        {"<f8", 8, TOSAC_DTYPE_FP16, "accepted: <f2, <f4"},
        {"<f2", 2, TOSAC_DTYPE_BF16, "accepted: <V2, <f4"},
        {"<i4", 4, TOSAC_DTYPE_INT48, "accepted: <i8"},
        {"<i8", 8, TOSAC_DTYPE_INT32, "accepted: |i1, |u1, <i2, <u2, <i4"},
        {"<u4", 4, TOSAC_DTYPE_INT32, "INT32"},
        {"<V2", 2, TOSAC_DTYPE_FP8E4M3, "FP8E4M3"},
        {"|i1", 1, TOSAC_DTYPE_BOOL, "accepted: |b1, |u1"},
        {"|b1", 1, TOSAC_DTYPE_INT8, "INT8"},
        {"<f4", 4, TOSAC_DTYPE_SHAPE, "SHAPE"},
    };
    uint8_t zeros[16] = {0};
    tosac_diag *d = tosac_diag_create();
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        n = npy_view(bad[k].descr, bad[k].es, 2, zeros);
        uint8_t *b = (uint8_t *)zeros;
        size_t bn = 12345;
        tosac_diag_clear(d);
        EXPECT_EQ_I(tosac_npy_to_tosa(&n, bad[k].t, "t.npy", &b, &bn, d), TOSAC_ERR_UNSUPPORTED);
        EXPECT(b == zeros && bn == 12345);
        EXPECT(diag_has(d, bad[k].msg));
    }
    uint8_t *b = NULL;
    size_t bn = 0;
    n = npy_view("<f4", 4, 1, f4le);
    EXPECT_EQ_I(tosac_npy_to_tosa(&n, TOSAC_DTYPE_UNKNOWN, "t.npy", &b, &bn, d), TOSAC_ERR_INVALID_ARG);
    EXPECT_EQ_I(tosac_npy_to_tosa(&n, (tosac_dtype)99, "t.npy", &b, &bn, d), TOSAC_ERR_INVALID_ARG);
    n.nbytes = 3; /* inconsistent */
    EXPECT_EQ_I(tosac_npy_to_tosa(&n, TOSAC_DTYPE_FP32, "t.npy", &b, &bn, d), TOSAC_ERR_INVALID_ARG);
    tosac_diag_destroy(d);
}

static int read_back(const char *path, const char *descr, int rank, const int64_t *shape, const void *want, size_t wn)
{
    tosac_npy a;
    tosac_diag *d = tosac_diag_create();
    int ok = tosac_npy_read_file(path, &a, d) == TOSAC_OK;
    if (ok) {
        ok = !strcmp(a.descr, descr) && a.rank == rank && a.nbytes == wn && (wn == 0 || !memcmp(a.data, want, wn));
        for (int i = 0; ok && i < rank; i++) ok = a.shape[i] == shape[i];
        if (!ok) fprintf(stderr, "  %s: descr %s rank %d nbytes %zu\n", path, a.descr, a.rank, a.nbytes);
        tosac_npy_free(&a);
    } else {
        fprintf(stderr, "  %s: %s\n", path, tosac_diag_count(d) ? tosac_diag_message(d, 0, NULL) : "?");
    }
    tosac_diag_destroy(d);
    return ok;
}

static void test_write_tosa(void)
{
    tosac_diag *d = tosac_diag_create();
    const int64_t s5[1] = {5}, s3[1] = {3}, s22[2] = {2, 2};

    /* INT4 -> |i1, nibbles sign-extended; the 8-byte padding is accepted */
    uint8_t i4[8] = {0x79, 0x3F, 0x05, 0, 0, 0, 0, 0};
    EXPECT_EQ_I(tosac_npy_write_tosa(tmp_path("o_i4.npy"), TOSAC_DTYPE_INT4, 1, s5, i4, 8, d), TOSAC_OK);
    EXPECT(read_back(tmp_path("o_i4.npy"), "|i1", 1, s5, (const int8_t[]){-7, 7, -1, 3, 5}, 5));
    EXPECT_EQ_I(tosac_npy_write_tosa(tmp_path("o_i4b.npy"), TOSAC_DTYPE_INT4, 1, s5, i4, 3, d), TOSAC_OK);
    EXPECT_EQ_I(tosac_npy_write_tosa(tmp_path("o_bad.npy"), TOSAC_DTYPE_INT4, 1, s5, i4, 2, d), TOSAC_ERR_INVALID_ARG);
    uint8_t nine[9] = {0};
    EXPECT_EQ_I(tosac_npy_write_tosa(tmp_path("o_bad.npy"), TOSAC_DTYPE_INT4, 1, s5, nine, 9, d),
                TOSAC_ERR_INVALID_ARG);
    EXPECT(!file_exists(tmp_path("o_bad.npy")));

    /* INT48 -> <i8 sign-extended from bit 47 */
    const uint8_t i48[18] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 0, 0, 0, 0, 0, 0x80};
    const uint8_t i48w[24] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                              0xFF, 0x7F, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0xFF, 0xFF};
    EXPECT_EQ_I(tosac_npy_write_tosa(tmp_path("o_i48.npy"), TOSAC_DTYPE_INT48, 1, s3, i48, 18, d), TOSAC_OK);
    EXPECT(read_back(tmp_path("o_i48.npy"), "<i8", 1, s3, i48w, 24));

    /* BOOL normalised; the rest are the same bytes */
    const uint8_t bl[3] = {0, 7, 1};
    EXPECT_EQ_I(tosac_npy_write_tosa(tmp_path("o_b.npy"), TOSAC_DTYPE_BOOL, 1, s3, bl, 3, d), TOSAC_OK);
    EXPECT(read_back(tmp_path("o_b.npy"), "|b1", 1, s3, (const uint8_t[]){0, 1, 1}, 3));
    const uint8_t raw[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    struct {
        tosac_dtype t;
        const char *descr;
        size_t es;
    } same[] = {
        {TOSAC_DTYPE_INT8, "|i1", 1},    {TOSAC_DTYPE_INT16, "<i2", 2},   {TOSAC_DTYPE_INT32, "<i4", 4},
        {TOSAC_DTYPE_FP32, "<f4", 4},    {TOSAC_DTYPE_FP16, "<f2", 2},    {TOSAC_DTYPE_BF16, "<V2", 2},
        {TOSAC_DTYPE_FP8E4M3, "|V1", 1}, {TOSAC_DTYPE_FP8E5M2, "|u1", 1}, {TOSAC_DTYPE_SHAPE, "<i8", 8},
    };
    for (size_t k = 0; k < sizeof same / sizeof same[0]; k++) {
        const int64_t sh[1] = {(int64_t)(16 / same[k].es)};
        const char *p = tmp_path("o_same.npy");
        EXPECT_EQ_I(tosac_npy_write_tosa(p, same[k].t, 1, sh, raw, 16, d), TOSAC_OK);
        EXPECT(read_back(p, same[k].descr, 1, sh, raw, 16));
        /* and back to TOSA bytes */
        tosac_npy a;
        if (tosac_npy_read_file(p, &a, d) == TOSAC_OK) {
            uint8_t *b = NULL;
            size_t bn = 0;
            EXPECT_EQ_I(tosac_npy_to_tosa(&a, same[k].t, p, &b, &bn, d), TOSAC_OK);
            EXPECT(bn == 16 && !memcmp(b, raw, 16));
            tosac_free(b, bn);
            tosac_npy_free(&a);
        }
    }
    /* FP8E4M3 is written with the <V1 spelling */
    uint8_t hb[128];
    size_t hn = slurp(tmp_path("o_same.npy"), hb, sizeof hb);
    EXPECT(contains(hb, hn, "'<i8'"));
    EXPECT_EQ_I(tosac_npy_write_tosa(tmp_path("o_e4.npy"), TOSAC_DTYPE_FP8E4M3, 2, s22, raw, 4, d), TOSAC_OK);
    hn = slurp(tmp_path("o_e4.npy"), hb, sizeof hb);
    EXPECT(contains(hb, hn, "'descr': '<V1'"));

    /* rank 0 and errors */
    const int32_t one = 7;
    EXPECT_EQ_I(tosac_npy_write_tosa(tmp_path("o_r0.npy"), TOSAC_DTYPE_INT32, 0, NULL, (const uint8_t *)&one, 4, d),
                TOSAC_OK);
    EXPECT(read_back(tmp_path("o_r0.npy"), "<i4", 0, NULL, &one, 4));
    EXPECT_EQ_I(tosac_npy_write_tosa(tmp_path("o_bad.npy"), TOSAC_DTYPE_UNKNOWN, 1, s3, raw, 3, d),
                TOSAC_ERR_INVALID_ARG);
    EXPECT_EQ_I(tosac_npy_write_tosa(tmp_path("o_bad.npy"), TOSAC_DTYPE_INT32, 1, s3, raw, 11, d),
                TOSAC_ERR_INVALID_ARG);
    EXPECT(!file_exists(tmp_path("o_bad.npy")));
    EXPECT_EQ_I(count_tmp_leftovers(), 0);
    tosac_diag_destroy(d);
}

/* Every allocation failing in turn: a clean NOMEM (or success), never a crash or a leak. */
static void test_allocation_failures(void)
{
    const int64_t s5[1] = {5};
    const uint8_t i4[3] = {0x79, 0x3F, 0x05};
    char p[700]; /* a copy: tmp_path reuses its buffers */
    snprintf(p, sizeof p, "%s", tmp_path("oom.npy"));
    EXPECT_EQ_I(tosac_npy_write_tosa(p, TOSAC_DTYPE_INT4, 1, s5, i4, 3, NULL), TOSAC_OK);
    static uint8_t img[256];
    size_t imglen = slurp(p, img, sizeof img);
    tosac_set_allocator(&k_counting);
    int bad = 0, completed = 0;
    for (long fail_at = 0; fail_at < 64 && !completed; fail_at++) {
        g_live = 0;
        g_nalloc = 0;
        g_fail_countdown = fail_at;
        tosac_npy a;
        uint8_t *b = NULL;
        size_t bn = 0;
        tosac_status st = tosac_npy_read_file(p, &a, NULL);
        if (st == TOSAC_OK) {
            st = tosac_npy_to_tosa(&a, TOSAC_DTYPE_INT4, "oom", &b, &bn, NULL);
            if (st == TOSAC_OK) {
                if (bn != 3 || memcmp(b, i4, 3)) bad++;
                st = tosac_npy_write_tosa(tmp_path("oom2.npy"), TOSAC_DTYPE_INT4, 1, s5, b, bn, NULL);
                tosac_free(b, bn);
            }
            tosac_npy_free(&a);
        }
        if (st == TOSAC_OK) {
            tosac_status st2 = tosac_npy_read_mem(img, imglen, "oom", &a, NULL);
            if (st2 == TOSAC_OK) {
                tosac_npy_free(&a);
                completed = 1;
            } else if (st2 != TOSAC_ERR_NOMEM) {
                bad++;
            }
        } else if (st != TOSAC_ERR_NOMEM) {
            bad++;
        }
        if (g_live != 0 || g_nalloc != 0) bad++;
    }
    g_fail_countdown = -1;
    tosac_set_allocator(NULL);
    EXPECT(completed);
    EXPECT_EQ_I(bad, 0);
    EXPECT_EQ_I(count_tmp_leftovers(), 0);
}

/* ------------------------------------------------------------------------------------------ */
/* numpy interoperability                                                                     */

static const char k_gen_py[] =
    "import numpy as np, os, sys\n"
    "d = sys.argv[1]\n"
    "def s(n, a): np.save(os.path.join(d, n), a)\n"
    "s('np_i8.npy', np.array([-128, -1, 0, 127], np.int8))\n"
    "s('np_u8.npy', np.array([0, 1, 200, 255], np.uint8))\n"
    "s('np_i16.npy', np.array([[-32768, -1], [2, 32767]], np.int16))\n"
    "s('np_u16.npy', np.array([0, 65535], np.uint16))\n"
    "s('np_i32.npy', np.arange(-3, 3, dtype=np.int32).reshape(2, 3, 1))\n"
    "s('np_i64.npy', np.array([-(2**47), 2**47 - 1, -1], np.int64))\n"
    "s('np_f16.npy', np.array([1.0, -2.5, 65504.0, 2.0**-24], np.float16))\n"
    "s('np_f32.npy', np.array([[0.5, -1.25], [3.0e38, 1e-45]], np.float32))\n"
    "s('np_f32cast.npy', np.array([1.0, 65520.0, 0.1, 1.00390625, 3*2.0**-25], np.float32))\n"
    "s('np_f64.npy', np.array([0.1], np.float64))\n"
    "s('np_bool.npy', np.array([True, False, True]))\n"
    "s('np_scalar.npy', np.array(3.5, np.float32))\n"
    "s('np_empty.npy', np.zeros((0, 4), np.float32))\n"
    "s('np_be_i4.npy', np.array([1, -2, 0x01020304], '>i4'))\n"
    "s('np_be_f4.npy', np.array([1.5, -2.0], '>f4'))\n"
    "s('np_v2.npy', np.array([0x3F80, 0x4000], np.uint16).view('V2'))\n"
    "s('np_fortran.npy', np.asfortranarray(np.arange(6, dtype=np.int32).reshape(2, 3)))\n"
    "s('np_rank5.npy', np.ones((1, 2, 1, 2, 1), np.uint8))\n"
    "with open(os.path.join(d, 'np_ver2.npy'), 'wb') as f:\n"
    "    np.lib.format.write_array(f, np.array([7, 8], np.int16), version=(2, 0))\n"
    "with open(os.path.join(d, 'np_ver3.npy'), 'wb') as f:\n"
    "    np.lib.format.write_array(f, np.array([9], np.int32), version=(3, 0))\n"
    "with np.errstate(over='ignore'):\n"
    "    h = np.array([1.0, 65520.0, 0.1, 1.00390625, 3*2.0**-25], np.float32).astype(np.float16)\n"
    "s('np_f16ref.npy', h)\n";

static const char k_check_py[] =
    "import numpy as np, os, sys\n"
    "d = sys.argv[1]\n"
    "def L(n):\n"
    "    p = os.path.join(d, n)\n"
    "    with open(p, 'rb') as f:\n"
    "        head = f.read(10)\n"
    "        assert head[:8] == b'\\x93NUMPY\\x01\\x00', n\n"
    "        hl = head[8] | head[9] << 8\n"
    "        assert (10 + hl) % 64 == 0, n\n"
    "    return np.load(p)\n"
    "def eq(n, got, want, dt):\n"
    "    want = np.array(want, dtype=dt)\n"
    "    if got.dtype != want.dtype or got.shape != want.shape or not np.array_equal(got, want):\n"
    "        print('mismatch', n, got.dtype, got.shape, got, 'want', want.dtype, want.shape, want)\n"
    "        sys.exit(1)\n"
    "eq('c_f32', L('c_f32.npy'), [[0.0, 1.5, -2.0], [3.25, 1e6, -7.5]], np.float32)\n"
    "eq('c_scalar', L('c_scalar.npy'), -42, np.int32)\n"
    "eq('c_i16', L('c_i16.npy'), [-1, 2, 300], np.int16)\n"
    "eq('c_empty', L('c_empty.npy'), np.zeros((0, 2)), np.float32)\n"
    "eq('c_i4', L('c_i4.npy'), [-7, 7, -1, 3, 5], np.int8)\n"
    "eq('c_i48', L('c_i48.npy'), [-1, 2**47 - 1, -(2**47)], np.int64)\n"
    "eq('c_bool', L('c_bool.npy'), [False, True, True], np.bool_)\n"
    "eq('c_f16', L('c_f16.npy'), [1.0, -2.5, 65504.0], np.float16)\n"
    "b = L('c_bf16.npy'); assert b.dtype.kind == 'V' and b.dtype.itemsize == 2, b.dtype\n"
    "eq('c_bf16', b.view(np.uint16), [0x3F80, 0xC020], np.uint16)\n"
    "e = L('c_e4m3.npy'); assert e.dtype.kind == 'V' and e.dtype.itemsize == 1, e.dtype\n"
    "eq('c_e4m3', e.view(np.uint8), [0x38, 0x7E, 0x7F], np.uint8)\n"
    "eq('c_e5m2', L('c_e5m2.npy'), [0x3C, 0x7B, 0x7C], np.uint8)\n"
    "eq('c_rank32', L('c_rank32.npy'), np.arange(4, dtype=np.uint8).reshape((1,) * 30 + (2, 2)), np.uint8)\n"
    "print('numpy check ok')\n";

static int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) return 0;
    int ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok;
}

static int run_py(const char *script)
{
    char cmd[1600];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' '%s' 1>&2", tmp_path(script), g_dir);
    return system(cmd);
}

static void read_np(const char *name, tosac_npy *a, tosac_status want)
{
    tosac_diag *d = tosac_diag_create();
    tosac_status st = tosac_npy_read_file(tmp_path(name), a, d);
    if (st != want)
        fprintf(stderr, "  %s: status %d, want %d: %s\n", name, (int)st, (int)want,
                tosac_diag_count(d) ? tosac_diag_message(d, 0, NULL) : "");
    EXPECT_EQ_I(st, want);
    if (st != TOSAC_OK) {
        EXPECT(tosac_diag_count(d) == 1 && strstr(tosac_diag_message(d, 0, NULL), name));
        memset(a, 0, sizeof *a);
    }
    tosac_diag_destroy(d);
}

static void test_numpy_files(void)
{
    if (!g_have_numpy) {
        /* numpy is the independent reference here: its absence fails the suite */
        fprintf(stderr, "  /usr/bin/python3 with numpy not available (install python3-numpy)\n");
        EXPECT(!"numpy available");
        return;
    }
    EXPECT(write_text(tmp_path("gen.py"), k_gen_py));
    int rc = run_py("gen.py");
    EXPECT_EQ_I(rc, 0);
    if (rc != 0) return;
    tosac_npy a;

    read_np("np_i8.npy", &a, TOSAC_OK);
    EXPECT_STREQ(a.descr, "|i1");
    EXPECT(a.nbytes == 4 && !memcmp(a.data, (const int8_t[]){-128, -1, 0, 127}, 4));
    EXPECT(conv_is(&a, TOSAC_DTYPE_INT4, (const uint8_t[]){0xF0, 0xF0}, 2));
    tosac_npy_free(&a);

    read_np("np_u8.npy", &a, TOSAC_OK);
    EXPECT_STREQ(a.descr, "|u1");
    EXPECT(conv_is(&a, TOSAC_DTYPE_INT32,
                   (const uint8_t[]){0, 0, 0, 0, 1, 0, 0, 0, 200, 0, 0, 0, 255, 0, 0, 0}, 16));
    tosac_npy_free(&a);

    read_np("np_i16.npy", &a, TOSAC_OK);
    EXPECT_STREQ(a.descr, "<i2");
    EXPECT(a.rank == 2 && a.shape[0] == 2 && a.shape[1] == 2);
    EXPECT(conv_is(&a, TOSAC_DTYPE_INT16, (const uint8_t[]){0x00, 0x80, 0xFF, 0xFF, 2, 0, 0xFF, 0x7F}, 8));
    tosac_npy_free(&a);

    read_np("np_u16.npy", &a, TOSAC_OK);
    EXPECT_STREQ(a.descr, "<u2");
    EXPECT(conv_is(&a, TOSAC_DTYPE_INT32, (const uint8_t[]){0, 0, 0, 0, 0xFF, 0xFF, 0, 0}, 8));
    tosac_npy_free(&a);

    read_np("np_i32.npy", &a, TOSAC_OK);
    EXPECT_STREQ(a.descr, "<i4");
    EXPECT(a.rank == 3 && a.shape[0] == 2 && a.shape[1] == 3 && a.shape[2] == 1 && a.count == 6);
    EXPECT(conv_is(&a, TOSAC_DTYPE_INT8, (const uint8_t[]){0xFD, 0xFE, 0xFF, 0, 1, 2}, 6));
    tosac_npy_free(&a);

    read_np("np_i64.npy", &a, TOSAC_OK);
    EXPECT_STREQ(a.descr, "<i8");
    EXPECT(conv_is(&a, TOSAC_DTYPE_INT48,
                   (const uint8_t[]){0, 0, 0, 0, 0, 0x80, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF,
                                     0xFF, 0xFF},
                   18));
    tosac_npy_free(&a);

    read_np("np_f16.npy", &a, TOSAC_OK);
    EXPECT_STREQ(a.descr, "<f2");
    EXPECT(conv_is(&a, TOSAC_DTYPE_FP16, (const uint8_t[]){0x00, 0x3C, 0x00, 0xC1, 0xFF, 0x7B, 0x01, 0x00}, 8));
    tosac_npy_free(&a);

    read_np("np_f32.npy", &a, TOSAC_OK);
    EXPECT_STREQ(a.descr, "<f4");
    EXPECT(a.nbytes == 16);
    if (a.nbytes == 16) {
        float v[4];
        memcpy(v, a.data, 16);
        EXPECT(v[0] == 0.5f && v[1] == -1.25f && v[2] == 3.0e38f && tosac_fp32_bits(v[3]) == 1u);
    }
    tosac_npy_free(&a);

    /* fp32 -> fp16 conversion agrees with numpy's own float16 cast */
    tosac_npy ref;
    read_np("np_f32cast.npy", &a, TOSAC_OK);
    read_np("np_f16ref.npy", &ref, TOSAC_OK);
    EXPECT(conv_is(&a, TOSAC_DTYPE_FP16, ref.data, ref.nbytes));
    EXPECT(conv_is(&a, TOSAC_DTYPE_BF16,
                   (const uint8_t[]){0x80, 0x3F, 0x80, 0x47, 0xCD, 0x3D, 0x80, 0x3F, 0xC0, 0x33}, 10));
    tosac_npy_free(&a);
    tosac_npy_free(&ref);

    read_np("np_f64.npy", &a, TOSAC_OK);
    EXPECT_STREQ(a.descr, "<f8");
    tosac_npy_free(&a);

    read_np("np_bool.npy", &a, TOSAC_OK);
    EXPECT_STREQ(a.descr, "|b1");
    EXPECT(conv_is(&a, TOSAC_DTYPE_BOOL, (const uint8_t[]){1, 0, 1}, 3));
    tosac_npy_free(&a);

    read_np("np_scalar.npy", &a, TOSAC_OK);
    EXPECT(a.rank == 0 && a.count == 1 && a.nbytes == 4);
    EXPECT(conv_is(&a, TOSAC_DTYPE_FP16, (const uint8_t[]){0x00, 0x43}, 2));
    tosac_npy_free(&a);

    read_np("np_empty.npy", &a, TOSAC_OK);
    EXPECT(a.rank == 2 && a.shape[0] == 0 && a.shape[1] == 4 && a.count == 0 && a.data == NULL);
    tosac_npy_free(&a);

    read_np("np_be_i4.npy", &a, TOSAC_OK);
    EXPECT_STREQ(a.descr, "<i4");
    EXPECT(conv_is(&a, TOSAC_DTYPE_INT32,
                   (const uint8_t[]){1, 0, 0, 0, 0xFE, 0xFF, 0xFF, 0xFF, 0x04, 0x03, 0x02, 0x01}, 12));
    tosac_npy_free(&a);

    read_np("np_be_f4.npy", &a, TOSAC_OK);
    EXPECT_STREQ(a.descr, "<f4");
    EXPECT(conv_is(&a, TOSAC_DTYPE_BF16, (const uint8_t[]){0xC0, 0x3F, 0x00, 0xC0}, 4));
    tosac_npy_free(&a);

    read_np("np_v2.npy", &a, TOSAC_OK);
    EXPECT_STREQ(a.descr, "<V2");
    EXPECT(conv_is(&a, TOSAC_DTYPE_BF16, (const uint8_t[]){0x80, 0x3F, 0x00, 0x40}, 4));
    tosac_npy_free(&a);

    read_np("np_rank5.npy", &a, TOSAC_OK);
    EXPECT(a.rank == 5 && a.count == 4 && a.shape[3] == 2);
    tosac_npy_free(&a);

    read_np("np_ver2.npy", &a, TOSAC_OK);
    EXPECT(conv_is(&a, TOSAC_DTYPE_INT16, (const uint8_t[]){7, 0, 8, 0}, 4));
    tosac_npy_free(&a);

    read_np("np_ver3.npy", &a, TOSAC_OK);
    EXPECT(conv_is(&a, TOSAC_DTYPE_INT32, (const uint8_t[]){9, 0, 0, 0}, 4));
    tosac_npy_free(&a);

    read_np("np_fortran.npy", &a, TOSAC_ERR_UNSUPPORTED);

    /* and numpy reads what tosac writes */
    tosac_diag *d = tosac_diag_create();
    const float f32v[6] = {0.0f, 1.5f, -2.0f, 3.25f, 1e6f, -7.5f};
    const int64_t s23[2] = {2, 3}, s3[1] = {3}, s5[1] = {5}, s02[2] = {0, 2};
    EXPECT_EQ_I(tosac_npy_write_file(tmp_path("c_f32.npy"), "<f4", 2, s23, f32v, sizeof f32v, d), TOSAC_OK);
    const int32_t sc = -42;
    EXPECT_EQ_I(tosac_npy_write_file(tmp_path("c_scalar.npy"), "<i4", 0, NULL, &sc, 4, d), TOSAC_OK);
    const int16_t i16v[3] = {-1, 2, 300};
    EXPECT_EQ_I(tosac_npy_write_file(tmp_path("c_i16.npy"), "<i2", 1, s3, i16v, 6, d), TOSAC_OK);
    EXPECT_EQ_I(tosac_npy_write_file(tmp_path("c_empty.npy"), "<f4", 2, s02, NULL, 0, d), TOSAC_OK);
    EXPECT_EQ_I(tosac_npy_write_tosa(tmp_path("c_i4.npy"), TOSAC_DTYPE_INT4, 1, s5,
                                     (const uint8_t[]){0x79, 0x3F, 0x05}, 3, d),
                TOSAC_OK);
    EXPECT_EQ_I(tosac_npy_write_tosa(tmp_path("c_i48.npy"), TOSAC_DTYPE_INT48, 1, s3,
                                     (const uint8_t[]){0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                                       0xFF, 0x7F, 0, 0, 0, 0, 0, 0x80},
                                     18, d),
                TOSAC_OK);
    EXPECT_EQ_I(tosac_npy_write_tosa(tmp_path("c_bool.npy"), TOSAC_DTYPE_BOOL, 1, s3, (const uint8_t[]){0, 1, 5}, 3, d),
                TOSAC_OK);
    uint16_t h[3] = {tosac_fp32_to_fp16(1.0f), tosac_fp32_to_fp16(-2.5f), tosac_fp32_to_fp16(65504.0f)};
    uint8_t hle[6];
    for (int i = 0; i < 3; i++) {
        hle[2 * i] = (uint8_t)h[i];
        hle[2 * i + 1] = (uint8_t)(h[i] >> 8);
    }
    EXPECT_EQ_I(tosac_npy_write_tosa(tmp_path("c_f16.npy"), TOSAC_DTYPE_FP16, 1, s3, hle, 6, d), TOSAC_OK);
    const int64_t s2[1] = {2};
    EXPECT_EQ_I(tosac_npy_write_tosa(tmp_path("c_bf16.npy"), TOSAC_DTYPE_BF16, 1, s2,
                                     (const uint8_t[]){0x80, 0x3F, 0x20, 0xC0}, 4, d),
                TOSAC_OK);
    EXPECT_EQ_I(tosac_npy_write_tosa(tmp_path("c_e4m3.npy"), TOSAC_DTYPE_FP8E4M3, 1, s3,
                                     (const uint8_t[]){0x38, 0x7E, 0x7F}, 3, d),
                TOSAC_OK);
    EXPECT_EQ_I(tosac_npy_write_tosa(tmp_path("c_e5m2.npy"), TOSAC_DTYPE_FP8E5M2, 1, s3,
                                     (const uint8_t[]){0x3C, 0x7B, 0x7C}, 3, d),
                TOSAC_OK);
    int64_t s32[32];
    for (int i = 0; i < 30; i++) s32[i] = 1;
    s32[30] = 2;
    s32[31] = 2;
    EXPECT_EQ_I(tosac_npy_write_file(tmp_path("c_rank32.npy"), "|u1", 32, s32, (const uint8_t[]){0, 1, 2, 3}, 4, d),
                TOSAC_OK);
    EXPECT_EQ_I(tosac_diag_count(d), 0);
    tosac_diag_destroy(d);
    EXPECT(write_text(tmp_path("check.py"), k_check_py));
    EXPECT_EQ_I(run_py("check.py"), 0);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/tosac_npy_test_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(g_dir)) {
        fprintf(stderr, "mkdtemp failed\n");
        return 1;
    }
    g_have_numpy = access("/usr/bin/python3", X_OK) == 0 &&
                   system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0;

    RUN(test_write_read_roundtrip);
    RUN(test_write_errors);
    RUN(test_hostile_headers);
    RUN(test_tolerant_headers);
    RUN(test_truncation_and_mutation);
    RUN(test_read_file_hostile);
    RUN(test_to_tosa);
    RUN(test_write_tosa);
    RUN(test_allocation_failures);
    RUN(test_numpy_files);

    if (t_failures == 0) {
        char cmd[700];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
        if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
    } else {
        fprintf(stderr, "test files kept in %s\n", g_dir);
    }
    return test_summary();
}
