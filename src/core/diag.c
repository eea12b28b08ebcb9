/* Diagnostics sink: a capped list of formatted messages. */
#include "core/diag.h"

#include <stdio.h>
#include <string.h>

#include "core/alloc.h"

typedef struct diag_entry {
    tosac_status code;
    char *text;
    size_t len;
} diag_entry;

struct tosac_diag {
    diag_entry *e;
    size_t n, cap, dropped;
};

tosac_diag *tosac_diag_create(void) { return tosac_calloc(1, sizeof(tosac_diag)); }

void tosac_diag_clear(tosac_diag *d)
{
    if (!d) return;
    for (size_t i = 0; i < d->n; i++) tosac_free(d->e[i].text, d->e[i].len + 1);
    d->n = 0;
    d->dropped = 0;
}

void tosac_diag_destroy(tosac_diag *d)
{
    if (!d) return;
    tosac_diag_clear(d);
    tosac_free(d->e, d->cap * sizeof(diag_entry));
    tosac_free(d, sizeof(*d));
}

size_t tosac_diag_count(const tosac_diag *d) { return d ? d->n : 0; }
size_t tosac_diag_dropped(const tosac_diag *d) { return d ? d->dropped : 0; }

const char *tosac_diag_message(const tosac_diag *d, size_t i, tosac_status *code)
{
    if (!d || i >= d->n) return NULL;
    if (code) *code = d->e[i].code;
    return d->e[i].text;
}

tosac_status tosac_diag_vadd(tosac_diag *d, tosac_status code, const char *fmt, va_list ap)
{
    if (!d) return code;
    if (d->n >= TOSAC_DIAG_MAX || !tosac_grow((void **)&d->e, &d->cap, d->n + 1, sizeof(diag_entry))) {
        d->dropped++;
        return code;
    }
    va_list ap2;
    va_copy(ap2, ap);
    int len = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (len < 0) len = 0;
    char *text = tosac_malloc((size_t)len + 1);
    if (!text) {
        d->dropped++;
        return code;
    }
    vsnprintf(text, (size_t)len + 1, fmt, ap);
    d->e[d->n].code = code;
    d->e[d->n].text = text;
    d->e[d->n].len = (size_t)len;
    d->n++;
    return code;
}

tosac_status tosac_diag_add(tosac_diag *d, tosac_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tosac_status s = tosac_diag_vadd(d, code, fmt, ap);
    va_end(ap);
    return s;
}

const char *tosac_status_str(tosac_status s)
{
    switch (s) {
    case TOSAC_OK: return "ok";
    case TOSAC_ERR_INVALID_ARG: return "invalid argument";
    case TOSAC_ERR_UNSUPPORTED: return "unsupported";
    case TOSAC_ERR_NOMEM: return "out of memory or over a size limit";
    case TOSAC_ERR_FORMAT: return "malformed file";
    case TOSAC_ERR_TOSA_ERROR: return "TOSA ERROR";
    case TOSAC_ERR_UNPREDICTABLE: return "TOSA UNPREDICTABLE";
    case TOSAC_ERR_IO: return "I/O error";
    case TOSAC_ERR_INTERNAL: return "internal error";
    }
    return "unknown status";
}
