/* Strict recursive-descent JSON parser with bounded depth; values live in the caller's arena. */
#include "core/json.h"

#include <stdlib.h>
#include <string.h>

#include "core/diag.h"

typedef struct jp {
    const char *begin, *s, *end, *name; /* strtod runs on a copied token: the C locale's '.' */
    tosac_arena *a;
    tosac_diag *d;
    int depth;
} jp;

static tosac_status jerr(jp *p, const char *at, const char *what)
{
    unsigned line = 1, col = 1;
    for (const char *c = p->begin; c < at && c < p->end; c++) {
        if (*c == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    return tosac_diag_add(p->d, TOSAC_ERR_FORMAT, "%s: line %u, column %u: %s", p->name, line, col, what);
}

static void skip_ws(jp *p)
{
    while (p->s < p->end && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r')) p->s++;
}

static tosac_status parse_value(jp *p, tosac_json **out);

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static bool read_hex4(jp *p, uint32_t *u)
{
    if (p->end - p->s < 4) return false;
    *u = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(p->s[i]);
        if (h < 0) return false;
        *u = *u * 16 + (uint32_t)h;
    }
    p->s += 4;
    return true;
}

static tosac_status parse_string(jp *p, const char **out)
{
    const char *start = p->s;
    p->s++; /* opening quote */
    /* the decoded string is never longer than the raw text */
    size_t cap = 0;
    const char *q = p->s;
    while (q < p->end && *q != '"') {
        if (*q == '\\' && q + 1 < p->end) q++;
        q++;
    }
    if (q >= p->end) return jerr(p, start, "unterminated string");
    cap = (size_t)(q - p->s) + 1;
    char *buf = tosac_arena_alloc(p->a, cap), *w = buf;
    if (!buf) return tosac_diag_add(p->d, TOSAC_ERR_NOMEM, "%s: out of memory", p->name);
    while (*p->s != '"') {
        unsigned char c = (unsigned char)*p->s;
        if (c < 0x20) return jerr(p, p->s, "control character in string");
        if (c != '\\') {
            *w++ = (char)c;
            p->s++;
            continue;
        }
        p->s++;
        char e = *p->s++;
        switch (e) {
        case '"': *w++ = '"'; break;
        case '\\': *w++ = '\\'; break;
        case '/': *w++ = '/'; break;
        case 'b': *w++ = '\b'; break;
        case 'f': *w++ = '\f'; break;
        case 'n': *w++ = '\n'; break;
        case 'r': *w++ = '\r'; break;
        case 't': *w++ = '\t'; break;
        case 'u': {
            uint32_t u;
            if (!read_hex4(p, &u)) return jerr(p, p->s, "bad \\u escape");
            if (u >= 0xD800 && u < 0xDC00) {
                uint32_t lo;
                if (p->end - p->s < 6 || p->s[0] != '\\' || p->s[1] != 'u') return jerr(p, p->s, "lone surrogate");
                p->s += 2;
                if (!read_hex4(p, &lo) || lo < 0xDC00 || lo > 0xDFFF) return jerr(p, p->s, "bad surrogate pair");
                u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
            } else if (u >= 0xDC00 && u < 0xE000) {
                return jerr(p, p->s, "lone surrogate");
            }
            if (u == 0) return jerr(p, p->s, "NUL character in string");
            /* UTF-8 of u: at most 4 bytes, never longer than the 6+ byte escape it replaces */
            if (u < 0x80) {
                *w++ = (char)u;
            } else if (u < 0x800) {
                *w++ = (char)(0xC0 | (u >> 6));
                *w++ = (char)(0x80 | (u & 0x3F));
            } else if (u < 0x10000) {
                *w++ = (char)(0xE0 | (u >> 12));
                *w++ = (char)(0x80 | ((u >> 6) & 0x3F));
                *w++ = (char)(0x80 | (u & 0x3F));
            } else {
                *w++ = (char)(0xF0 | (u >> 18));
                *w++ = (char)(0x80 | ((u >> 12) & 0x3F));
                *w++ = (char)(0x80 | ((u >> 6) & 0x3F));
                *w++ = (char)(0x80 | (u & 0x3F));
            }
            break;
        }
        default: return jerr(p, p->s - 1, "bad escape in string");
        }
    }
    p->s++; /* closing quote */
    *w = 0;
    *out = buf;
    return TOSAC_OK;
}

static tosac_status parse_number(jp *p, double *out)
{
    const char *start = p->s;
    if (p->s < p->end && *p->s == '-') p->s++;
    if (p->s >= p->end) return jerr(p, start, "bad number");
    if (*p->s == '0') {
        p->s++;
    } else if (*p->s >= '1' && *p->s <= '9') {
        while (p->s < p->end && *p->s >= '0' && *p->s <= '9') p->s++;
    } else {
        return jerr(p, start, "bad number");
    }
    if (p->s < p->end && *p->s == '.') {
        p->s++;
        if (p->s >= p->end || *p->s < '0' || *p->s > '9') return jerr(p, start, "bad number");
        while (p->s < p->end && *p->s >= '0' && *p->s <= '9') p->s++;
    }
    if (p->s < p->end && (*p->s == 'e' || *p->s == 'E')) {
        p->s++;
        if (p->s < p->end && (*p->s == '+' || *p->s == '-')) p->s++;
        if (p->s >= p->end || *p->s < '0' || *p->s > '9') return jerr(p, start, "bad number");
        while (p->s < p->end && *p->s >= '0' && *p->s <= '9') p->s++;
    }
    char tmp[64];
    size_t n = (size_t)(p->s - start);
    if (n >= sizeof tmp) return jerr(p, start, "number too long");
    memcpy(tmp, start, n);
    tmp[n] = 0;
    *out = strtod(tmp, NULL);
    return TOSAC_OK;
}

static bool literal(jp *p, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(p->end - p->s) < n || memcmp(p->s, word, n) != 0) return false;
    p->s += n;
    return true;
}

/* Appends to a growing item list kept in the arena. */
static bool push(jp *p, tosac_json *v, tosac_json *item, const char *key, uint32_t *cap)
{
    if (v->n == *cap) {
        uint32_t ncap = *cap ? *cap * 2 : 8;
        tosac_json **ni = tosac_arena_alloc(p->a, ncap * sizeof(*ni));
        const char **nk = v->kind == TOSAC_JSON_OBJECT ? tosac_arena_alloc(p->a, ncap * sizeof(*nk)) : NULL;
        if (!ni || (v->kind == TOSAC_JSON_OBJECT && !nk)) return false;
        if (v->n) {
            memcpy(ni, v->items, v->n * sizeof(*ni));
            if (nk) memcpy(nk, v->keys, v->n * sizeof(*nk));
        }
        v->items = ni;
        v->keys = nk;
        *cap = ncap;
    }
    v->items[v->n] = item;
    if (v->keys) v->keys[v->n] = key;
    v->n++;
    return true;
}

static tosac_status parse_container(jp *p, tosac_json *v, char close)
{
    if (++p->depth > TOSAC_JSON_MAX_DEPTH) return jerr(p, p->s, "nesting too deep");
    p->s++;
    uint32_t cap = 0;
    skip_ws(p);
    if (p->s < p->end && *p->s == close) {
        p->s++;
        p->depth--;
        return TOSAC_OK;
    }
    for (;;) {
        const char *key = NULL;
        tosac_status st;
        skip_ws(p);
        if (close == '}') {
            if (p->s >= p->end || *p->s != '"') return jerr(p, p->s, "expected a string key");
            if ((st = parse_string(p, &key)) != TOSAC_OK) return st;
            skip_ws(p);
            if (p->s >= p->end || *p->s != ':') return jerr(p, p->s, "expected ':'");
            p->s++;
        }
        tosac_json *item = NULL;
        if ((st = parse_value(p, &item)) != TOSAC_OK) return st;
        if (!push(p, v, item, key, &cap)) return tosac_diag_add(p->d, TOSAC_ERR_NOMEM, "%s: out of memory", p->name);
        skip_ws(p);
        if (p->s < p->end && *p->s == ',') {
            p->s++;
            continue;
        }
        if (p->s < p->end && *p->s == close) {
            p->s++;
            p->depth--;
            return TOSAC_OK;
        }
        return jerr(p, p->s, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static tosac_status parse_value(jp *p, tosac_json **out)
{
    skip_ws(p);
    if (p->s >= p->end) return jerr(p, p->s, "unexpected end of text");
    tosac_json *v = tosac_arena_alloc(p->a, sizeof(*v));
    if (!v) return tosac_diag_add(p->d, TOSAC_ERR_NOMEM, "%s: out of memory", p->name);
    tosac_status st = TOSAC_OK;
    char c = *p->s;
    if (c == '{') {
        v->kind = TOSAC_JSON_OBJECT;
        st = parse_container(p, v, '}');
    } else if (c == '[') {
        v->kind = TOSAC_JSON_ARRAY;
        st = parse_container(p, v, ']');
    } else if (c == '"') {
        v->kind = TOSAC_JSON_STRING;
        st = parse_string(p, &v->str);
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        v->kind = TOSAC_JSON_NUMBER;
        st = parse_number(p, &v->num);
    } else if (literal(p, "true")) {
        v->kind = TOSAC_JSON_BOOL;
        v->b = true;
    } else if (literal(p, "false")) {
        v->kind = TOSAC_JSON_BOOL;
    } else if (literal(p, "null")) {
        v->kind = TOSAC_JSON_NULL;
    } else {
        return jerr(p, p->s, "unexpected character");
    }
    if (st == TOSAC_OK) *out = v;
    return st;
}

tosac_status tosac_json_parse(const char *text, size_t len, const char *name, tosac_arena *a, tosac_json **out,
                              tosac_diag *d)
{
    jp p = {text, text, text + len, name ? name : "json", a, d, 0};
    tosac_json *v = NULL;
    tosac_status st = parse_value(&p, &v);
    if (st != TOSAC_OK) return st;
    skip_ws(&p);
    if (p.s != p.end) return jerr(&p, p.s, "trailing characters after the JSON value");
    *out = v;
    return TOSAC_OK;
}

const tosac_json *tosac_json_get(const tosac_json *obj, const char *key)
{
    if (!obj || obj->kind != TOSAC_JSON_OBJECT) return NULL;
    for (uint32_t i = 0; i < obj->n; i++)
        if (!strcmp(obj->keys[i], key)) return obj->items[i];
    return NULL;
}
