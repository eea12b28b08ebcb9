/*
 * libFuzzer target: arbitrary bytes through the ONNX reader (no base directory, so external data
 * is refused before any file is opened). Whatever it accepts is walked completely, so a dangling
 * pointer or a wrong count in the model view shows up under ASan.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tosac/onnx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t walk_graph(const tosac_onnx_graph *g)
{
    size_t h = g->n_nodes + g->n_inputs + g->n_outputs + g->n_value_info + g->n_outer_refs;
    for (size_t i = 0; i < g->n_initializers; i++) {
        const tosac_onnx_tensor *t = &g->initializers[i];
        const unsigned char *b = t->data;
        for (size_t k = 0; b && k < t->nbytes; k++) h += b[k];
        for (size_t k = 0; t->strings && k < t->numel; k++) h += strlen(t->strings[k]);
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        const tosac_onnx_node *n = &g->nodes[i];
        h += strlen(n->name) + strlen(n->op_type) + strlen(n->domain);
        for (size_t k = 0; k < n->n_inputs; k++) h += strlen(n->inputs[k]);
        for (size_t k = 0; k < n->n_outputs; k++) h += strlen(n->outputs[k]);
        for (size_t k = 0; k < n->n_attrs; k++) {
            const tosac_onnx_attr *a = &n->attrs[k];
            if (a->g) h += walk_graph(a->g);
            for (size_t j = 0; a->graphs && j < a->n; j++) h += walk_graph(a->graphs[j]);
            for (size_t j = 0; a->ints && j < a->n; j++) h += (size_t)a->ints[j];
        }
    }
    for (size_t i = 0; i < g->n_inputs; i++)
        for (size_t k = 0; k < g->inputs[i].type.rank; k++) h += (size_t)g->inputs[i].type.dims[k].value;
    return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tosac_diag *d = tosac_diag_create();
    tosac_onnx_model *m = NULL;
    tosac_onnx_read_opts opts = {0};
    opts.max_file_bytes = 1u << 20;
    opts.max_nodes = 100000;
    if (tosac_onnx_read_mem(data, size, "fuzz.onnx", NULL, &opts, &m, d) == TOSAC_OK) {
        volatile size_t h = walk_graph(m->graph);
        (void)h;
        tosac_onnx_model_destroy(m);
    } else if (tosac_diag_count(d) == 0) {
        abort(); /* every error must say why */
    }
    tosac_diag_destroy(d);
    return 0;
}
