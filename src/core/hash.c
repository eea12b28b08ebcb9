#include "core/hash.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "core/diag.h"

uint64_t tosac_fnv1a64(uint64_t h, const void *bytes, size_t n)
{
    const unsigned char *b = bytes;
    for (size_t k = 0; k < n; k++) h = (h ^ b[k]) * 0x100000001b3ull;
    return h;
}

tosac_status tosac_hash_file(const char *path, uint64_t *hash, uint64_t *size, tosac_diag *d)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return tosac_diag_add(d, TOSAC_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    unsigned char buf[65536];
    uint64_t h = TOSAC_FNV1A64_INIT, total = 0;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            int err = errno;
            close(fd);
            return tosac_diag_add(d, TOSAC_ERR_IO, "%s: cannot read: %s", path, strerror(err));
        }
        if (n == 0) break;
        h = tosac_fnv1a64(h, buf, (size_t)n);
        total += (uint64_t)n;
    }
    close(fd);
    *hash = h;
    *size = total;
    return TOSAC_OK;
}
