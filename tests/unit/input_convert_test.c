/* Data of another element type for a program input (tosac_quant_input_bytes, src/quant/iomap.c):
   converted with range checks; expected bytes written out by hand from the TOSA encodings. */
#include <math.h>
#include <stdlib.h>

#include "harness/npy_view.h"
#include "harness/test.h"
#include "tosac/quant.h"
#include "tosac/runtime.h"

/* Converts for an input of `dt` with n elements; returns the status, *out the bytes (or error). */
static tosac_status conv(const tosac_npy *a, tosac_dtype dt, uint8_t **bytes, size_t *n, tosac_diag *d)
{
    int64_t shape[1] = {a->count};
    tosac_tensor_info info;
    memset(&info, 0, sizeof info);
    info.name = "x";
    info.dtype = dt;
    info.rank = 1;
    info.shape = shape;
    info.nelem = a->count;
    size_t nans = 0;
    *bytes = NULL;
    return tosac_quant_input_bytes(a, &info, NULL, "x.npy for input 'x'", "input", bytes, n, &nans, d);
}

static void test_int64_to_int32(void)
{
    int64_t v[3] = {-2147483648LL, 7, 2147483647LL};
    tosac_npy a = npy_view("<i8", 8, 3, v);
    uint8_t *b;
    size_t n;
    tosac_diag *d = tosac_diag_create();
    EXPECT_EQ_I(conv(&a, TOSAC_DTYPE_INT32, &b, &n, d), TOSAC_OK);
    static const uint8_t want[12] = {0, 0, 0, 0x80, 7, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f};
    EXPECT(n == 12 && b && !memcmp(b, want, 12));
    tosac_free(b, n);
    v[1] = 2147483648LL; /* one past INT32's range */
    EXPECT_EQ_I(conv(&a, TOSAC_DTYPE_INT32, &b, &n, d), TOSAC_ERR_INVALID_ARG);
    EXPECT(tosac_diag_count(d) == 1 &&
           strstr(tosac_diag_message(d, 0, NULL), "x.npy for input 'x': element 1 (index [1]) is 2147483648, which the "
                                                  "input's type INT32 cannot hold"));
    tosac_diag_destroy(d);
}

static void test_narrow_ints(void)
{
    int32_t v[2] = {-128, 127};
    tosac_npy a = npy_view("<i4", 4, 2, v);
    uint8_t *b;
    size_t n;
    EXPECT_EQ_I(conv(&a, TOSAC_DTYPE_INT8, &b, &n, NULL), TOSAC_OK);
    EXPECT(n == 2 && b[0] == 0x80 && b[1] == 0x7f);
    tosac_free(b, n);
    v[1] = 128; /* int32 data beyond INT8 is refused, not wrapped */
    EXPECT_EQ_I(conv(&a, TOSAC_DTYPE_INT8, &b, &n, NULL), TOSAC_ERR_INVALID_ARG);
    /* unsigned data of the type's width may hold its unsigned codes (RESCALE's unsigned flags) */
    uint8_t u[2] = {0, 255};
    tosac_npy au = npy_view("|u1", 1, 2, u);
    EXPECT_EQ_I(conv(&au, TOSAC_DTYPE_INT8, &b, &n, NULL), TOSAC_OK);
    EXPECT(n == 2 && b[0] == 0 && b[1] == 0xff);
    tosac_free(b, n);
}

static void test_floats(void)
{
    double v[4] = {1.5, -0.25, INFINITY, NAN};
    tosac_npy a = npy_view("<f8", 8, 4, v);
    uint8_t *b;
    size_t n;
    EXPECT_EQ_I(conv(&a, TOSAC_DTYPE_FP32, &b, &n, NULL), TOSAC_OK);
    /* 1.5 = 0x3fc00000, -0.25 = 0xbe800000, +inf = 0x7f800000, NaN exponent all ones */
    EXPECT(n == 16 && b[3] == 0x3f && b[2] == 0xc0 && b[7] == 0xbe && b[6] == 0x80 && b[11] == 0x7f &&
           b[10] == 0x80 && b[15] == 0x7f && (b[14] & 0x80) && (b[12] | b[13] | (b[14] & 0x7f)));
    tosac_free(b, n);
    v[1] = 1e39; /* finite, beyond FP32 */
    EXPECT_EQ_I(conv(&a, TOSAC_DTYPE_FP32, &b, &n, NULL), TOSAC_ERR_INVALID_ARG);
    /* integers to floats, integral floats to integers, fractions refused */
    int16_t iv[2] = {-3, 1000};
    tosac_npy ai = npy_view("<i2", 2, 2, iv);
    EXPECT_EQ_I(conv(&ai, TOSAC_DTYPE_FP32, &b, &n, NULL), TOSAC_OK);
    EXPECT(n == 8 && b[3] == 0xc0 && b[2] == 0x40 && b[7] == 0x44 && b[6] == 0x7a); /* -3.0, 1000.0 */
    tosac_free(b, n);
    float fv[2] = {4.0f, -2.0f};
    tosac_npy af = npy_view("<f4", 4, 2, fv);
    EXPECT_EQ_I(conv(&af, TOSAC_DTYPE_INT16, &b, &n, NULL), TOSAC_OK);
    EXPECT(n == 4 && b[0] == 4 && b[1] == 0 && b[2] == 0xfe && b[3] == 0xff);
    tosac_free(b, n);
    fv[1] = 0.5f;
    EXPECT_EQ_I(conv(&af, TOSAC_DTYPE_INT16, &b, &n, NULL), TOSAC_ERR_INVALID_ARG);
    /* float16 data for an FP32 input: 0x3c00 = 1.0 */
    uint16_t h[1] = {0x3c00};
    tosac_npy ah = npy_view("<f2", 2, 1, h);
    EXPECT_EQ_I(conv(&ah, TOSAC_DTYPE_FP32, &b, &n, NULL), TOSAC_OK);
    EXPECT(n == 4 && b[3] == 0x3f && b[2] == 0x80 && !b[1] && !b[0]);
    tosac_free(b, n);
}

static void test_bool(void)
{
    int64_t v[3] = {0, 1, 1};
    tosac_npy a = npy_view("<i8", 8, 3, v);
    uint8_t *b;
    size_t n;
    EXPECT_EQ_I(conv(&a, TOSAC_DTYPE_BOOL, &b, &n, NULL), TOSAC_OK);
    EXPECT(n == 3 && b[0] == 0 && b[1] == 1 && b[2] == 1);
    tosac_free(b, n);
    v[2] = 2;
    EXPECT_EQ_I(conv(&a, TOSAC_DTYPE_BOOL, &b, &n, NULL), TOSAC_ERR_INVALID_ARG);
}

int main(void)
{
    RUN(test_int64_to_int32);
    RUN(test_narrow_ints);
    RUN(test_floats);
    RUN(test_bool);
    return test_summary();
}
