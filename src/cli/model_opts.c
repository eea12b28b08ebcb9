/*
 * The options that fix a model's inputs, shared by `tosac compile` and `tosac run`:
 *   --input-shape NAME=DIMS   a static shape for graph input NAME (1x3x224x224, or "scalar")
 *   --bind NAME=FILE.npy      graph input NAME becomes the constant in FILE.npy
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

int cli_model_opt(const char *cmd, cli_model_opts *m, int argc, char **argv, int *i)
{
    const char *v;
    int r;
    if ((r = cli_opt_value(cmd, argc, argv, i, "--input-shape", &v)) != 0) {
        if (r < 0) return r;
        if (m->n_shapes >= CLI_MAX_MODEL_OPTS) return cli_usage_error(cmd, "too many --input-shape options"), -1;
        m->shape_arg[m->n_shapes++] = v;
        return 1;
    }
    if ((r = cli_opt_value(cmd, argc, argv, i, "--bind", &v)) != 0) {
        if (r < 0) return r;
        if (m->n_binds >= CLI_MAX_MODEL_OPTS) return cli_usage_error(cmd, "too many --bind options"), -1;
        m->bind_arg[m->n_binds++] = v;
        return 1;
    }
    return 0;
}

/* Splits "NAME=VALUE" at the last '=': the name (malloc'd copy) and *value. */
static char *split_eq(const char *arg, const char **value)
{
    const char *eq = strrchr(arg, '=');
    if (!eq || eq == arg || !eq[1]) return NULL;
    char *name = malloc((size_t)(eq - arg) + 1);
    if (!name) return NULL;
    memcpy(name, arg, (size_t)(eq - arg));
    name[eq - arg] = '\0';
    *value = eq + 1;
    return name;
}

/* "1x3x224x224" (or ',' between dims), "scalar" for rank 0; every dim a positive integer. */
static const char *parse_dims(const char *s, int64_t *dims, int *rank)
{
    *rank = 0;
    if (!strcmp(s, "scalar")) return NULL;
    for (;;) {
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (end == s) return "a dimension is not a number";
        if (errno || v <= 0 || v > INT32_MAX) return "dimensions are positive integers (at most 2147483647)";
        if (*rank >= TOSAC_MAX_RANK) return "too many dimensions";
        dims[(*rank)++] = v;
        if (!*end) return NULL;
        if (*end != 'x' && *end != 'X' && *end != ',') return "dimensions are separated by 'x'";
        s = end + 1;
    }
}

bool cli_model_opts_load(const char *cmd, cli_model_opts *m, tosac_outset *set, tosac_diag *d)
{
    for (int k = 0; k < m->n_shapes; k++) {
        const char *v = NULL, *why = "expected NAME=DIMS";
        char *name = split_eq(m->shape_arg[k], &v);
        if (name) m->names[m->n_names++] = name;
        if (!name || (why = parse_dims(v, m->dims[k], &m->shapes[k].rank)) != NULL) {
            cli_usage_error(cmd, "bad --input-shape '%s': %s (e.g. data=1x3x224x224)", m->shape_arg[k], why);
            return false;
        }
        for (int j = 0; j < k; j++)
            if (!strcmp(m->shapes[j].name, name)) {
                cli_usage_error(cmd, "--input-shape %s is given twice", name);
                return false;
            }
        m->shapes[k].name = name;
        m->shapes[k].dims = m->dims[k];
    }
    for (int k = 0; k < m->n_binds; k++) {
        const char *v = NULL;
        char *name = split_eq(m->bind_arg[k], &v);
        if (!name) {
            cli_usage_error(cmd, "bad --bind '%s' (expected NAME=FILE.npy)", m->bind_arg[k]);
            return false;
        }
        m->names[m->n_names++] = name;
        for (int j = 0; j < k; j++)
            if (!strcmp(m->binds[j].name, name)) {
                cli_usage_error(cmd, "--bind %s is given twice", name);
                return false;
            }
        if (!cli_out_input(set, v)) return false;
        if (tosac_npy_read_file(v, &m->arrays[k], d) != TOSAC_OK) {
            cli_print_diag(v, d);
            return false;
        }
        m->n_arrays = k + 1;
        m->binds[k].name = name;
        m->binds[k].value = &m->arrays[k];
    }
    return true;
}

void cli_model_opts_free(cli_model_opts *m)
{
    for (int k = 0; k < m->n_arrays; k++) tosac_npy_free(&m->arrays[k]);
    for (int k = 0; k < m->n_names; k++) free(m->names[k]);
    m->n_arrays = m->n_names = 0;
}
