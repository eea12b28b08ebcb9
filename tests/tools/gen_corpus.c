/* Writes the example graph of every (op, type row) as DIR/<op>_<row>.tosa: fuzz seeds and CLI inputs. */
#include <stdio.h>

#include "harness/op_graphs.h"
#include "tosac/tosa_file.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_corpus DIR\n");
        return 1;
    }
    unsigned written = 0;
    for (uint32_t op = 1; op < TOSAC_OP_COUNT; op++) {
        for (unsigned v = 0;; v++) {
            tosac_graph *g = test_op_graph(op, v);
            if (!g) break;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s_%u.tosa", argv[1], tosac_op_name(op), v);
            tosac_diag *d = tosac_diag_create();
            tosac_status s = tosac_tosa_write_file(g, path, d);
            if (s != TOSAC_OK) {
                for (size_t i = 0; i < tosac_diag_count(d); i++)
                    fprintf(stderr, "%s\n", tosac_diag_message(d, i, NULL));
                fprintf(stderr, "gen_corpus: cannot write %s: %s\n", path, tosac_status_str(s));
                tosac_diag_destroy(d);
                tosac_graph_destroy(g);
                return 1;
            }
            tosac_diag_destroy(d);
            tosac_graph_destroy(g);
            written++;
        }
    }
    printf("gen_corpus: wrote %u graphs to %s\n", written, argv[1]);
    return written ? 0 : 1;
}
