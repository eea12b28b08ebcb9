/* Growable string buffer with printf-style and JSON-escaped appends. */
#include "core/strbuf.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"

void tosac_strbuf_init(tosac_strbuf *sb)
{
    sb->data = NULL;
    sb->len = 0;
    sb->cap = 0;
    sb->failed = false;
}

void tosac_strbuf_free(tosac_strbuf *sb)
{
    tosac_free(sb->data, sb->cap);
    tosac_strbuf_init(sb);
}

/* Makes room for `extra` more bytes plus the terminating NUL. */
static bool reserve(tosac_strbuf *sb, size_t extra)
{
    if (sb->failed) return false;
    size_t need;
    if (!tosac_add_size(sb->len, extra, &need) || !tosac_add_size(need, 1, &need)) {
        sb->failed = true;
        return false;
    }
    if (need <= sb->cap) return true;
    size_t ncap = sb->cap ? sb->cap : 256;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2) {
            ncap = need;
            break;
        }
        ncap *= 2;
    }
    char *nd = tosac_malloc(ncap);
    if (!nd) {
        sb->failed = true;
        return false;
    }
    if (sb->data) memcpy(nd, sb->data, sb->len + 1);
    tosac_free(sb->data, sb->cap);
    sb->data = nd;
    sb->cap = ncap;
    return true;
}

bool tosac_strbuf_appendn(tosac_strbuf *sb, const char *s, size_t n)
{
    const char *nul = n ? memchr(s, '\0', n) : NULL;
    if (nul) n = (size_t)(nul - s);
    if (!reserve(sb, n)) return false;
    if (n) memcpy(sb->data + sb->len, s, n);
    sb->len += n;
    sb->data[sb->len] = '\0';
    return true;
}

bool tosac_strbuf_append(tosac_strbuf *sb, const char *s) { return tosac_strbuf_appendn(sb, s, strlen(s)); }

bool tosac_strbuf_appendc(tosac_strbuf *sb, char c) { return tosac_strbuf_appendn(sb, &c, 1); }

bool tosac_strbuf_pad(tosac_strbuf *sb, char c, size_t n)
{
    if (c == '\0' || !reserve(sb, n)) return !sb->failed;
    memset(sb->data + sb->len, c, n);
    sb->len += n;
    sb->data[sb->len] = '\0';
    return true;
}

bool tosac_strbuf_vappendf(tosac_strbuf *sb, const char *fmt, va_list ap)
{
    if (sb->failed) return false;
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) {
        sb->failed = true;
        return false;
    }
    if (!reserve(sb, (size_t)n)) return false;
    vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
    /* A %s argument could not contain a NUL, but %c could: keep the "no inner NUL" invariant. */
    sb->len += strlen(sb->data + sb->len);
    return true;
}

bool tosac_strbuf_appendf(tosac_strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bool ok = tosac_strbuf_vappendf(sb, fmt, ap);
    va_end(ap);
    return ok;
}

void tosac_strbuf_truncate(tosac_strbuf *sb, size_t len)
{
    if (sb->data && len < sb->len) {
        sb->len = len;
        sb->data[len] = '\0';
    }
}

/* Length of the well-formed UTF-8 sequence at s (RFC 3629), or 0 if the bytes are not one. */
static size_t utf8_seq_len(const unsigned char *s)
{
    unsigned char c = s[0];
    if (c < 0x80) return 1;
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0; /* no overlong forms */
        if (c == 0xED) hi = 0x9F; /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F; /* nothing above U+10FFFF */
    } else {
        return 0;
    }
    if (s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF) return 0; /* also stops at the terminating NUL */
    return n;
}

bool tosac_strbuf_append_json_str(tosac_strbuf *sb, const char *s)
{
    if (!s) return tosac_strbuf_append(sb, "null");
    tosac_strbuf_appendc(sb, '"');
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        /* copy the longest run that needs no escaping in one go */
        const unsigned char *run = p;
        size_t n;
        while (*p >= 0x20 && *p != '"' && *p != '\\' && (n = utf8_seq_len(p)) != 0) p += n;
        if (p > run) tosac_strbuf_appendn(sb, (const char *)run, (size_t)(p - run));
        if (!*p) break;
        unsigned char c = *p++;
        switch (c) {
        case '"': tosac_strbuf_append(sb, "\\\""); break;
        case '\\': tosac_strbuf_append(sb, "\\\\"); break;
        case '\n': tosac_strbuf_append(sb, "\\n"); break;
        case '\t': tosac_strbuf_append(sb, "\\t"); break;
        case '\r': tosac_strbuf_append(sb, "\\r"); break;
        case '\b': tosac_strbuf_append(sb, "\\b"); break;
        case '\f': tosac_strbuf_append(sb, "\\f"); break;
        default:
            if (c < 0x20)
                tosac_strbuf_appendf(sb, "\\u%04x", (unsigned)c);
            else
                tosac_strbuf_append(sb, "\\ufffd"); /* one replacement per byte that starts no valid sequence */
            break;
        }
    }
    return tosac_strbuf_appendc(sb, '"');
}

char *tosac_strbuf_take(tosac_strbuf *sb)
{
    char *out = NULL;
    if (!sb->failed) {
        out = tosac_malloc(sb->len + 1);
        if (out) {
            if (sb->len) memcpy(out, sb->data, sb->len);
            out[sb->len] = '\0';
        }
    }
    tosac_strbuf_free(sb);
    return out;
}

void tosac_fixbuf_appendf(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
    if (*len + 1 >= size) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *len, size - *len, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n >= size - *len) {
        *len = size - 1;
        if (size >= 4) memcpy(buf + size - 4, "...", 4);
    } else {
        *len += (size_t)n;
    }
}
