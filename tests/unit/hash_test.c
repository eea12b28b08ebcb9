/* FNV-1a 64 (src/core/hash.h) against the published test vectors of the FNV reference. */
#include <stdlib.h>
#include <unistd.h>

#include "core/hash.h"
#include "harness/test.h"

static void test_vectors(void)
{
    EXPECT(tosac_fnv1a64(TOSAC_FNV1A64_INIT, "", 0) == 0xcbf29ce484222325ull);
    EXPECT(tosac_fnv1a64(TOSAC_FNV1A64_INIT, "a", 1) == 0xaf63dc4c8601ec8cull);
    EXPECT(tosac_fnv1a64(TOSAC_FNV1A64_INIT, "foobar", 6) == 0x85944171f73967e8ull);
    /* continued over pieces = over the whole */
    EXPECT(tosac_fnv1a64(tosac_fnv1a64(TOSAC_FNV1A64_INIT, "foo", 3), "bar", 3) == 0x85944171f73967e8ull);
}

static void test_file(void)
{
    char path[] = "/tmp/tosac_hash_test_XXXXXX";
    int fd = mkstemp(path);
    EXPECT(fd >= 0);
    if (fd < 0) return;
    EXPECT(write(fd, "foobar", 6) == 6);
    close(fd);
    uint64_t h = 0, n = 0;
    EXPECT_EQ_I(tosac_hash_file(path, &h, &n, NULL), TOSAC_OK);
    EXPECT(h == 0x85944171f73967e8ull && n == 6);
    unlink(path);
    tosac_diag *d = tosac_diag_create();
    EXPECT_EQ_I(tosac_hash_file(path, &h, &n, d), TOSAC_ERR_IO);
    EXPECT(tosac_diag_count(d) == 1 && strstr(tosac_diag_message(d, 0, NULL), "No such file or directory"));
    tosac_diag_destroy(d);
}

int main(void)
{
    RUN(test_vectors);
    RUN(test_file);
    return test_summary();
}
