/*
 * Growable NUL-terminated string buffer for host-side text output (printer, inspect, messages).
 *
 * Failure is sticky: once an allocation fails (or the size would overflow) every later append is a
 * no-op and tosac_strbuf_take returns NULL, so producers can append freely and check once at the end.
 * The buffer never contains a NUL byte before its end (appended text is taken up to its first NUL).
 */
#ifndef TOSAC_CORE_STRBUF_H
#define TOSAC_CORE_STRBUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/diag.h"

typedef struct tosac_strbuf {
    char *data; /* NUL-terminated once anything was appended; NULL before */
    size_t len; /* bytes before the terminating NUL */
    size_t cap; /* allocated bytes */
    bool failed;
} tosac_strbuf;

/* Zero-initialisation ({0}) is a valid empty buffer too. */
void tosac_strbuf_init(tosac_strbuf *sb);
/* Frees the storage and resets the buffer to empty (the failure flag too). */
void tosac_strbuf_free(tosac_strbuf *sb);

/* Each append returns false if the buffer is (now) in the failed state. */
bool tosac_strbuf_append(tosac_strbuf *sb, const char *s);
bool tosac_strbuf_appendn(tosac_strbuf *sb, const char *s, size_t n);
bool tosac_strbuf_appendc(tosac_strbuf *sb, char c);
/* Appends `n` copies of `c` (indentation). */
bool tosac_strbuf_pad(tosac_strbuf *sb, char c, size_t n);
bool tosac_strbuf_appendf(tosac_strbuf *sb, const char *fmt, ...) TOSAC_PRINTF(2, 3);
bool tosac_strbuf_vappendf(tosac_strbuf *sb, const char *fmt, va_list ap);
/* Drops everything after the first `len` bytes (no-op if the text is not longer). */
void tosac_strbuf_truncate(tosac_strbuf *sb, size_t len);

/*
 * Appends `s` as a JSON string literal, quotes included: `"` and `\` are escaped, control
 * characters become \n, \t, \r, \b, \f or \u00XX, and bytes that are not well-formed UTF-8 are
 * replaced by U+FFFD, so the output is always valid JSON text. NULL appends `null`.
 */
bool tosac_strbuf_append_json_str(tosac_strbuf *sb, const char *s);

/*
 * Hands the text to the caller and resets the buffer. The result is allocated with tosac_malloc
 * with exactly strlen + 1 bytes (so tosac_string_free releases it), "" if nothing was appended,
 * NULL if the buffer failed (its storage is released either way).
 */
char *tosac_strbuf_take(tosac_strbuf *sb);

/*
 * Fixed-size message buffers (no allocation): appends formatted text to `buf` (`size` bytes, NUL-
 * terminated at *len) and advances *len. Text that does not fit is cut and the buffer ends in
 * "..."; once full, later appends are no-ops.
 */
void tosac_fixbuf_appendf(char *buf, size_t size, size_t *len, const char *fmt, ...) TOSAC_PRINTF(4, 5);

#endif
