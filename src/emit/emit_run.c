/* The device side of emitted C (emit_run.h). */
#include "emit/emit_run.h"

#include <string.h>

/* Tensor d from its description s. */
static void emit_tensor(const tosac_emit_model *m, const tosac_emit_t *s, tosac_ktensor *d, int64_t *sh,
                        uint8_t *arena, const void *const in[], void *const out[], int64_t i0, int64_t n)
{
    const uint32_t at = s->at & ~(uint32_t)TOSAC_EMIT_KIND;
    uint8_t *p;
    switch (s->at & TOSAC_EMIT_KIND) {
    case TOSAC_EMIT_ARENA: p = arena + at; break;
    case TOSAC_EMIT_IN: p = (uint8_t *)(uintptr_t)in[at]; break;
    case TOSAC_EMIT_OUT: p = out[at]; break;
    case TOSAC_EMIT_CONST: p = (uint8_t *)(uintptr_t)m->consts[at]; break;
    default: p = NULL; break;
    }
    memset(d, 0, sizeof *d);
    d->dtype = (tosac_dtype)s->dtype;
    d->constant = (s->flags & TOSAC_EMIT_CONSTANT) != 0;
    const int64_t *shape = m->shapes + s->shape;
    int32_t rank = (int32_t)(s->flags & TOSAC_EMIT_RANK);
    if (s->flags & TOSAC_EMIT_SLICED) {
        const int64_t c = shape[rank - 1];
        if (!(s->flags & TOSAC_EMIT_SLIM)) p += (size_t)i0 << (s->flags >> TOSAC_EMIT_ESIZE);
        sh[0] = (int64_t)((uint32_t)n / (uint32_t)c), sh[1] = c; /* (a slice: < 2^29 bytes; no 64-bit division) */
        shape = sh, rank = 2;
    }
    int64_t ne = 1;
    for (int32_t i = 0; i < rank; i++) ne *= shape[i];
    d->data = p;
    d->rank = rank;
    d->shape = rank ? shape : NULL;
    d->nelem = ne;
}

/* Call k's tosac_kcall in c, its tensors from t on (returns the tensors used). */
static uint32_t emit_call(const tosac_emit_model *m, uint32_t k, tosac_kcall *c, tosac_ktensor *t, int64_t (*sh)[2],
                          uint8_t *arena, const void *const in[], void *const out[], int64_t i0, int64_t n)
{
    const tosac_emit_call *s = &m->calls[k];
    const uint32_t nt = (uint32_t)s->n_in + s->n_out;
    for (uint32_t j = 0; j < nt; j++) emit_tensor(m, &m->tensors[s->t + j], &t[j], sh[j], arena, in, out, i0, n);
    memset(c, 0, sizeof *c);
    c->op = s->op, c->n_in = s->n_in, c->n_out = s->n_out, c->in = t, c->out = t + s->n_in, c->isa = s->isa;
    c->attr = s->attr ? m->attrs[s->attr - 1] : NULL;
    if (s->scratch_size) c->scratch = arena + s->scratch, c->scratch_size = s->scratch_size;
    if (s->prep_size) c->prep = m->prep + s->prep, c->prep_size = s->prep_size;
    return nt;
}

int tosac_emit_run(const tosac_emit_model *m, uint32_t first, uint32_t end, uint8_t *arena, const void *const in[],
                   void *const out[], int64_t i0, int64_t n, const tosac_emit_ws *ws)
{
    for (uint32_t k = first; k < end; k++) {
        tosac_kcall c, rc;
        tosac_kepilogue epi;
        uint32_t used = emit_call(m, k, &c, ws->t, ws->sh, arena, in, out, i0, n);
        if (m->calls[k].epi) {
            const tosac_emit_epi *x = &m->epis[m->calls[k].epi - 1];
            memset(&epi, 0, sizeof epi);
            if (x->rescale) {
                used += emit_call(m, x->rescale - 1u, &rc, ws->t + used, ws->sh + used, arena, in, out, i0, n);
                epi.rescale = &rc;
            }
            emit_tensor(m, &m->tensors[x->out], ws->t + used, ws->sh[used], arena, in, out, i0, n);
            epi.out = ws->t + used;
            epi.lo = x->lo, epi.hi = x->hi, epi.flo = x->flo, epi.fhi = x->fhi, epi.fignore = x->fignore != 0;
            c.epi = &epi;
        }
        const tosac_status st = m->fns[m->calls[k].fn](&c);
        if (st != TOSAC_OK) return (int)st;
    }
    return 0;
}
