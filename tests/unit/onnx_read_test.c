/*
 * ONNX reader tests:
 *  (a) every model.onnx of libonnx-testdata reads, or fails with a message; the nodes and
 *      initializers of every model are compared with what python3-onnx decodes independently
 *      (op types, counts, CRC-32 of each initializer's numpy bytes);
 *  (b) a model saved by python3-onnx with external data;
 *  (c) hostile inputs: truncations, random corruptions, hand-made invalid models with the phrase
 *      each error message must contain.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/test.h"
#include "tosac/onnx.h"
#include "tosac/status.h"

#define TESTDATA "/usr/share/libonnx-testdata/data"
#define PYTHON "/usr/bin/python3"

static char g_tmp[256];

/* ---------------------------------------------------------------------------------------------- */

static uint32_t crc32_buf(const void *p, size_t n)
{
    static uint32_t table[256];
    static int init;
    if (!init) {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
        init = 1;
    }
    const unsigned char *b = p;
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) c = table[(c ^ b[i]) & 0xff] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

static int write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    int ok = fwrite(data, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(sz > 0 ? (size_t)sz : 1);
    if (b && fread(b, 1, (size_t)sz, f) != (size_t)sz) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *n = (size_t)sz;
    return b;
}

static int run_python(const char *script_body, const char *args)
{
    char path[300], cmd[1200];
    snprintf(path, sizeof path, "%s/script.py", g_tmp);
    if (!write_file(path, script_body, strlen(script_body))) return -1;
    snprintf(cmd, sizeof cmd, PYTHON " '%s' %s", path, args);
    return system(cmd);
}

/* First message of `d` (or ""). */
static const char *first_msg(const tosac_diag *d)
{
    return tosac_diag_count(d) ? tosac_diag_message(d, 0, NULL) : "";
}

/* ---------------------------------------------------------------------------------------------- */
/* (a) all of libonnx-testdata */

typedef struct paths {
    char **v;
    size_t n, cap;
} paths;

static void collect(paths *ps)
{
    static const char *subs[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};
    for (size_t s = 0; s < 4; s++) {
        char dir[512];
        snprintf(dir, sizeof dir, TESTDATA "/%s", subs[s]);
        DIR *dp = opendir(dir);
        if (!dp) continue;
        struct dirent *de;
        while ((de = readdir(dp)) != NULL) {
            if (de->d_name[0] == '.') continue;
            char p[1024];
            struct stat st;
            snprintf(p, sizeof p, "%s/%s/model.onnx", dir, de->d_name);
            if (stat(p, &st) != 0) continue;
            if (ps->n == ps->cap) {
                ps->cap = ps->cap ? ps->cap * 2 : 256;
                ps->v = realloc(ps->v, ps->cap * sizeof *ps->v);
            }
            ps->v[ps->n++] = strdup(p);
        }
        closedir(dp);
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Message without the file prefix and with quoted names collapsed: a rejection reason. */
static void reason_of(const char *msg, const char *path, char *out, size_t cap)
{
    size_t pl = strlen(path), n = 0;
    if (strncmp(msg, path, pl) == 0 && msg[pl] == ':') msg += pl + 2;
    int inq = 0;
    for (; *msg && n + 1 < cap; msg++) {
        if (*msg == '\'') {
            inq = !inq;
            if (inq && n + 4 < cap) {
                memcpy(out + n, "'*'", 3);
                n += 3;
            }
            continue;
        }
        if (!inq) out[n++] = *msg;
    }
    out[n] = 0;
}

typedef struct ref_node {
    char op[64];
    int nin, nout, nattr;
} ref_node;

static const char PY_DUMP[] =
    "import sys, zlib, onnx\n"
    "from onnx import numpy_helper\n"
    "out = open(sys.argv[2], 'w')\n"
    "for p in open(sys.argv[1]).read().split('\\n'):\n"
    "    if not p: continue\n"
    "    try:\n"
    "        m = onnx.load(p)\n"
    "    except Exception:\n"
    "        out.write('X\\t%s\\n' % p); continue\n"
    "    g = m.graph\n"
    "    out.write('M\\t%s\\t%d\\t%d\\n' % (p, len(g.node), len(g.initializer)))\n"
    "    for n in g.node:\n"
    "        out.write('N\\t%s\\t%d\\t%d\\t%d\\n' % (n.op_type, len(n.input), len(n.output), len(n.attribute)))\n"
    "        for a in n.attribute:\n"
    "            if a.type == onnx.AttributeProto.TENSOR and a.t.data_type != 8:\n"
    "                out.write('A\\t%s\\t%d\\n' % (a.name, zlib.crc32(numpy_helper.to_array(a.t).tobytes())))\n"
    "    for t in g.initializer:\n"
    "        c = '-'\n"
    "        if t.data_type != 8:\n"
    "            try: c = str(zlib.crc32(numpy_helper.to_array(t).tobytes()))\n"
    "            except Exception: pass\n"
    "        out.write('I\\t%s\\t%d\\t%s\\n' % (t.name, t.data_type, c))\n";

/* Compares one model with the python records starting at *line; returns the number of mismatches. */
static int compare_model(const tosac_onnx_model *m, FILE *f, const char *path, int *compared_inits)
{
    char line[4096];
    long pos = ftell(f);
    int bad = 0;
    if (!fgets(line, sizeof line, f)) return 1;
    if (line[0] == 'X') return 0; /* python could not load it either */
    char *save = NULL;
    char *tok = strtok_r(line, "\t\n", &save);
    char *p = strtok_r(NULL, "\t\n", &save);
    if (!tok || strcmp(tok, "M") != 0 || !p || strcmp(p, path) != 0) {
        fprintf(stderr, "python dump out of step at %s\n", path);
        fseek(f, pos, SEEK_SET);
        return 1;
    }
    size_t nn = (size_t)atol(strtok_r(NULL, "\t\n", &save));
    size_t ni = (size_t)atol(strtok_r(NULL, "\t\n", &save));
    const tosac_onnx_graph *g = m->graph;
    if (g->n_nodes != nn || g->n_initializers != ni) {
        fprintf(stderr, "%s: nodes %zu/%zu initializers %zu/%zu\n", path, g->n_nodes, nn, g->n_initializers, ni);
        bad++;
    }
    for (size_t i = 0; i < nn; i++) {
        if (!fgets(line, sizeof line, f)) return bad + 1;
        char *s2 = NULL;
        strtok_r(line, "\t\n", &s2);
        char *op = strtok_r(NULL, "\t\n", &s2);
        int nin = atoi(strtok_r(NULL, "\t\n", &s2));
        int nout = atoi(strtok_r(NULL, "\t\n", &s2));
        int nattr = atoi(strtok_r(NULL, "\t\n", &s2));
        const tosac_onnx_node *nd = NULL;
        for (size_t k = 0; k < g->n_nodes; k++)
            if (g->nodes[k].index == i) nd = &g->nodes[k];
        if (!nd || !op || strcmp(nd->op_type, op) != 0 || (int)nd->n_inputs != nin || (int)nd->n_outputs != nout ||
            (int)nd->n_attrs != nattr) {
            fprintf(stderr, "%s: node %zu differs (%s)\n", path, i, op ? op : "?");
            bad++;
        }
        for (size_t k = 0; nd && k < nd->n_attrs; k++) {
            const tosac_onnx_tensor *t = nd->attrs[k].t;
            if (nd->attrs[k].type != TOSAC_ONNX_ATTR_TENSOR || !t || t->elem_type == TOSAC_ONNX_STRING) continue;
            if (!fgets(line, sizeof line, f)) return bad + 1;
            char *s3 = NULL;
            char *tag = strtok_r(line, "\t\n", &s3);
            char *an = strtok_r(NULL, "\t\n", &s3);
            char *crc = strtok_r(NULL, "\t\n", &s3);
            if (!tag || strcmp(tag, "A") != 0 || !an || strcmp(an, nd->attrs[k].name) != 0 || !crc ||
                strtoul(crc, NULL, 10) != (unsigned long)crc32_buf(t->data ? t->data : "", t->nbytes)) {
                fprintf(stderr, "%s: node %zu attribute '%s' differs from python\n", path, i, nd->attrs[k].name);
                bad++;
            } else {
                (*compared_inits)++;
            }
        }
    }
    for (size_t i = 0; i < ni; i++) {
        if (!fgets(line, sizeof line, f)) return bad + 1;
        char *s2 = NULL;
        strtok_r(line, "\t\n", &s2);
        char *name = strtok_r(NULL, "\t\n", &s2);
        int et = atoi(strtok_r(NULL, "\t\n", &s2));
        char *crc = strtok_r(NULL, "\t\n", &s2);
        if (i >= g->n_initializers) continue;
        const tosac_onnx_tensor *t = &g->initializers[i];
        if (!name || strcmp(t->name, name) != 0 || t->elem_type != et) {
            fprintf(stderr, "%s: initializer %zu differs\n", path, i);
            bad++;
            continue;
        }
        if (crc && strcmp(crc, "-") != 0) {
            uint32_t mine = crc32_buf(t->data ? t->data : "", t->nbytes);
            if ((unsigned long)mine != strtoul(crc, NULL, 10)) {
                fprintf(stderr, "%s: initializer '%s' crc %lu vs python %s\n", path, name, (unsigned long)mine, crc);
                bad++;
            } else {
                (*compared_inits)++;
            }
        }
    }
    return bad;
}

/* Initializers of every numeric type, in the typed repeated fields and in raw_data. */
static const char PY_ZOO[] =
    "import sys, os, numpy as np, onnx\n"
    "from onnx import helper, TensorProto as T\n"
    "d = sys.argv[1]\n"
    "os.makedirs(d, exist_ok=True)\n"
    "rng = np.random.default_rng(7)\n"
    "types = [(np.float32, T.FLOAT), (np.uint8, T.UINT8), (np.int8, T.INT8), (np.uint16, T.UINT16),\n"
    "         (np.int16, T.INT16), (np.int32, T.INT32), (np.int64, T.INT64), (np.bool_, T.BOOL),\n"
    "         (np.float16, T.FLOAT16), (np.float64, T.DOUBLE), (np.uint32, T.UINT32), (np.uint64, T.UINT64),\n"
    "         (np.complex64, T.COMPLEX64), (np.complex128, T.COMPLEX128)]\n"
    "inits = []\n"
    "for i, (nt, tt) in enumerate(types):\n"
    "    for shape in ((3, 5), (), (0, 4)):\n"
    "        if np.issubdtype(nt, np.integer):\n"
    "            info = np.iinfo(nt)\n"
    "            a = rng.integers(info.min, info.max, size=shape, dtype=nt, endpoint=True)\n"
    "        elif nt == np.bool_:\n"
    "            a = rng.integers(0, 2, size=shape).astype(nt)\n"
    "        elif np.issubdtype(nt, np.complexfloating):\n"
    "            a = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(nt)\n"
    "        else:\n"
    "            a = (rng.standard_normal(shape) * 100).astype(nt)\n"
    "        for raw in (False, True):\n"
    "            name = 't%d_%d_%d' % (i, len(shape) + shape[0] if shape else 0, raw)\n"
    "            vals = a.tobytes() if raw else a.flatten().tolist()\n"
    "            inits.append(helper.make_tensor(name, tt, a.shape, vals, raw=raw))\n"
    "Y = helper.make_tensor_value_info('y', T.FLOAT, [3, 5])\n"
    "g = helper.make_graph([helper.make_node('Identity', [inits[0].name], ['y'])], 'zoo', [], [Y], inits)\n"
    "m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])\n"
    "open(os.path.join(d, 'model.onnx'), 'wb').write(m.SerializeToString())\n";

static void test_all_testdata(void)
{
    paths ps = {0};
    collect(&ps);
    if (ps.n == 0) {
        fprintf(stderr, "%s is missing: install libonnx-testdata (scripts/install-deps.sh)\n", TESTDATA);
        EXPECT(ps.n > 0);
        return;
    }
    qsort(ps.v, ps.n, sizeof *ps.v, cmp_str);
    size_t n_testdata = ps.n;
    char zoo[400];
    snprintf(zoo, sizeof zoo, "'%s/zoo'", g_tmp);
    EXPECT_EQ_I(run_python(PY_ZOO, zoo), 0);
    snprintf(zoo, sizeof zoo, "%s/zoo/model.onnx", g_tmp);
    ps.v = realloc(ps.v, (ps.n + 1) * sizeof *ps.v);
    ps.cap = ps.n + 1;
    ps.v[ps.n++] = strdup(zoo);

    /* independent decoding of every model with python3-onnx */
    char list[300], dump[300], args[700];
    snprintf(list, sizeof list, "%s/models.txt", g_tmp);
    snprintf(dump, sizeof dump, "%s/dump.tsv", g_tmp);
    FILE *lf = fopen(list, "w");
    EXPECT(lf != NULL);
    if (!lf) return;
    for (size_t i = 0; i < ps.n; i++) fprintf(lf, "%s\n", ps.v[i]);
    fclose(lf);
    snprintf(args, sizeof args, "'%s' '%s'", list, dump);
    int prc = run_python(PY_DUMP, args);
    EXPECT_EQ_I(prc, 0);
    FILE *df = fopen(dump, "r");
    EXPECT(df != NULL);

    size_t ok = 0, rejected = 0, mismatched = 0, unexpected = 0;
    int compared = 0;
    struct {
        char reason[200];
        int count;
        char example[200];
    } groups[64];
    size_t ng = 0;
    tosac_diag *d = tosac_diag_create();
    for (size_t i = 0; i < ps.n; i++) {
        tosac_onnx_model *m = NULL;
        tosac_diag_clear(d);
        tosac_status s = tosac_onnx_read_file(ps.v[i], NULL, &m, d);
        if (s == TOSAC_OK) {
            ok += i < n_testdata;
            EXPECT(m != NULL && m->graph != NULL);
            if (df) {
                int bad = compare_model(m, df, ps.v[i], &compared);
                if (bad) mismatched++;
            }
            tosac_onnx_model_destroy(m);
        } else {
            rejected++;
            EXPECT(tosac_diag_count(d) > 0);
            EXPECT(s != TOSAC_ERR_INTERNAL && s != TOSAC_ERR_INVALID_ARG);
            char reason[200];
            reason_of(first_msg(d), ps.v[i], reason, sizeof reason);
            size_t k = 0;
            while (k < ng && strcmp(groups[k].reason, reason) != 0) k++;
            if (k == ng && ng < 64) {
                snprintf(groups[k].reason, sizeof groups[k].reason, "%s", reason);
                snprintf(groups[k].example, sizeof groups[k].example, "%s", ps.v[i] + strlen(TESTDATA) + 1);
                groups[k].count = 0;
                ng++;
            }
            if (k < ng) groups[k].count++;
            /* skip this model's python records */
            if (df) {
                char line[4096];
                if (fgets(line, sizeof line, df) && line[0] == 'M') {
                    for (;;) {
                        long pos = ftell(df);
                        if (!fgets(line, sizeof line, df)) break;
                        if (line[0] == 'M' || line[0] == 'X') {
                            fseek(df, pos, SEEK_SET);
                            break;
                        }
                    }
                }
            }
            if (!strstr(reason, "opset version")) unexpected++;
        }
    }
    printf("libonnx-testdata: %zu models %zu read OK, %zu rejected; %zu differ from python3-onnx; "
           "%d initializers and tensor attributes byte-identical (with the dtype zoo model)\n",
           n_testdata, ok, rejected, mismatched, compared);
    for (size_t k = 0; k < ng; k++)
        printf("  rejected %3d x %s   (e.g. %s)\n", groups[k].count, groups[k].reason, groups[k].example);
    EXPECT_EQ_I(mismatched, 0);
    /* the only rejections allowed are the opset policy (default domain 1 to 21) */
    EXPECT_EQ_I(unexpected, 0);
    EXPECT(ok * 100 >= ps.n * 85);
    EXPECT(n_testdata >= 1072);
    EXPECT(compared > 100);
    if (df) fclose(df);
    tosac_diag_destroy(d);
    for (size_t i = 0; i < ps.n; i++) free(ps.v[i]);
    free(ps.v);
}

/* A few details checked by hand: subgraphs with outer references, TENSOR attributes. */
static void test_known_models(void)
{
    tosac_diag *d = tosac_diag_create();
    tosac_onnx_model *m = NULL;
    EXPECT_EQ_I(tosac_onnx_read_file(TESTDATA "/node/test_if/model.onnx", NULL, &m, d), TOSAC_OK);
    if (m) {
        const tosac_onnx_graph *g = m->graph;
        EXPECT_EQ_I(g->n_nodes, 1);
        EXPECT_STREQ(g->nodes[0].op_type, "If");
        const tosac_onnx_attr *then_b = tosac_onnx_find_attr(&g->nodes[0], "then_branch");
        EXPECT(then_b && then_b->type == TOSAC_ONNX_ATTR_GRAPH && then_b->g && then_b->g->parent == g);
        if (then_b && then_b->g) EXPECT(then_b->g->n_nodes >= 1);
        tosac_onnx_model_destroy(m);
        m = NULL;
    }
    EXPECT_EQ_I(tosac_onnx_read_file(TESTDATA "/node/test_constant/model.onnx", NULL, &m, d), TOSAC_OK);
    if (m) {
        const tosac_onnx_attr *v = tosac_onnx_find_attr(&m->graph->nodes[0], "value");
        EXPECT(v && v->type == TOSAC_ONNX_ATTR_TENSOR && v->t && v->t->elem_type == TOSAC_ONNX_FLOAT);
        if (v && v->t) EXPECT_EQ_I(v->t->nbytes, v->t->numel * 4);
        EXPECT(m->ir_version >= 3 && m->opset >= 1);
        tosac_onnx_model_destroy(m);
        m = NULL;
    }
    tosac_diag_destroy(d);
}

/* ---------------------------------------------------------------------------------------------- */
/* (b) external data */

static const char PY_EXTERNAL[] =
    "import sys, os, numpy as np, onnx\n"
    "from onnx import helper, numpy_helper, TensorProto\n"
    "d = sys.argv[1]\n"
    "w = numpy_helper.from_array(np.arange(1000, dtype=np.float32).reshape(10, 100), 'w')\n"
    "b = numpy_helper.from_array(np.arange(7, dtype=np.int64) * 3 - 5, 'b')\n"
    "X = helper.make_tensor_value_info('x', TensorProto.FLOAT, ['N', 10])\n"
    "Y = helper.make_tensor_value_info('y', TensorProto.FLOAT, ['N', 100])\n"
    "g = helper.make_graph([helper.make_node('MatMul', ['x', 'w'], ['y'])], 'ext', [X], [Y], [w, b])\n"
    "m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])\n"
    "os.makedirs(os.path.join(d, 'ext'), exist_ok=True)\n"
    "onnx.save_model(m, os.path.join(d, 'ext', 'model.onnx'), save_as_external_data=True,\n"
    "                all_tensors_to_one_file=True, location='weights.bin', size_threshold=0)\n";

static void test_external(void)
{
    char args[300], path[400];
    snprintf(args, sizeof args, "'%s'", g_tmp);
    EXPECT_EQ_I(run_python(PY_EXTERNAL, args), 0);
    snprintf(path, sizeof path, "%s/ext/model.onnx", g_tmp);
    tosac_diag *d = tosac_diag_create();
    tosac_onnx_model *m = NULL;
    tosac_status s = tosac_onnx_read_file(path, NULL, &m, d);
    EXPECT_EQ_I(s, TOSAC_OK);
    if (s != TOSAC_OK) fprintf(stderr, "%s\n", first_msg(d));
    if (m) {
        const tosac_onnx_tensor *w = tosac_onnx_find_initializer(m->graph, "w");
        const tosac_onnx_tensor *b = tosac_onnx_find_initializer(m->graph, "b");
        EXPECT(w && w->external && w->nbytes == 4000 && w->rank == 2 && w->dims[0] == 10 && w->dims[1] == 100);
        if (w && w->data) {
            const float *f = w->data;
            int same = 1;
            for (int i = 0; i < 1000; i++) same &= f[i] == (float)i;
            EXPECT(same);
        }
        EXPECT(b && b->external && b->nbytes == 56);
        if (b && b->data) EXPECT_EQ_I(((const int64_t *)b->data)[6], 13);
        EXPECT_EQ_I(m->graph->n_inputs, 1);
        EXPECT(m->graph->n_inputs == 1 && m->graph->inputs[0].type.has_shape && m->graph->inputs[0].type.rank == 2);
        if (m->graph->n_inputs == 1 && m->graph->inputs[0].type.rank == 2) {
            EXPECT_EQ_I(m->graph->inputs[0].type.dims[0].value, -1);
            EXPECT_STREQ(m->graph->inputs[0].type.dims[0].param, "N");
            EXPECT_EQ_I(m->graph->inputs[0].type.dims[1].value, 10);
        }
        tosac_onnx_model_destroy(m);
    }
    /* the same bytes from memory without a directory: a clear error */
    size_t n = 0;
    unsigned char *buf = slurp(path, &n);
    EXPECT(buf != NULL);
    if (buf) {
        m = NULL;
        tosac_diag_clear(d);
        EXPECT(tosac_onnx_read_mem(buf, n, "mem.onnx", NULL, NULL, &m, d) != TOSAC_OK);
        EXPECT(strstr(first_msg(d), "needs the model's directory") != NULL);
        EXPECT(m == NULL);
        /* a limit on external bytes */
        tosac_onnx_read_opts o = {0};
        o.max_external_bytes = 1000;
        tosac_diag_clear(d);
        EXPECT_EQ_I(tosac_onnx_read_file(path, &o, &m, d), TOSAC_ERR_NOMEM);
        EXPECT(strstr(first_msg(d), "max_external_bytes") != NULL);
        free(buf);
    }
    tosac_diag_destroy(d);
}

/* ---------------------------------------------------------------------------------------------- */
/* (c) hostile inputs */

static const char PY_HOSTILE[] =
    "import sys, os, onnx\n"
    "from onnx import helper, TensorProto\n"
    "d = sys.argv[1]\n"
    "def model(nodes, inits=(), outputs=None, ir=8, opset=13, vi=()):\n"
    "    X = helper.make_tensor_value_info('x', TensorProto.FLOAT, [2])\n"
    "    Y = helper.make_tensor_value_info('y', TensorProto.FLOAT, [2])\n"
    "    g = helper.make_graph(nodes, 'g', [X], outputs if outputs is not None else [Y],\n"
    "                          initializer=list(inits), value_info=list(vi))\n"
    "    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)])\n"
    "    m.ir_version = ir\n"
    "    return m\n"
    "def save(m, name):\n"
    "    open(os.path.join(d, name), 'wb').write(m.SerializeToString())\n"
    "relu = [helper.make_node('Relu', ['x'], ['y'])]\n"
    "save(model(relu), 'ok.onnx')\n"
    "save(model([helper.make_node('Add', ['x', 'b'], ['a'], name='n_add'),\n"
    "            helper.make_node('Relu', ['a'], ['b'], name='n_relu'),\n"
    "            helper.make_node('Identity', ['a'], ['y'])]), 'cycle.onnx')\n"
    "save(model([helper.make_node('Add', ['x', 'nope'], ['y'], name='adder')]), 'undef.onnx')\n"
    "save(model([helper.make_node('Relu', ['x'], ['y']), helper.make_node('Neg', ['x'], ['y'], name='twice')]),\n"
    "     'dup.onnx')\n"
    "save(model([helper.make_node('Relu', ['x'], ['z'])]), 'noout.onnx')\n"
    "add_w = [helper.make_node('Add', ['x', 'w'], ['y'])]\n"
    "save(model(add_w, [TensorProto(name='w', data_type=1, dims=[4], raw_data=b'\\0' * 8)]), 'short_raw.onnx')\n"
    "save(model(add_w, [TensorProto(name='w', data_type=1, dims=[1 << 20, 1 << 20], raw_data=b'\\0' * 4)]),\n"
    "     'huge.onnx')\n"
    "save(model(add_w, [TensorProto(name='w', data_type=1, dims=[1 << 20, 1 << 20], float_data=[1.0])]),\n"
    "     'huge_typed.onnx')\n"
    "save(model(add_w, [TensorProto(name='w', data_type=1, dims=[-3], raw_data=b'')]), 'negdim.onnx')\n"
    "save(model(add_w, [TensorProto(name='w', data_type=1, dims=[1], string_data=[b'a'])]), 'strnum.onnx')\n"
    "save(model(add_w, [TensorProto(name='w', data_type=1, dims=[1], int64_data=[1])]), 'wrongfield.onnx')\n"
    "for name, loc in (('ext_dotdot.onnx', 'sub/../../secret.bin'), ('ext_abs.onnx', '/etc/passwd')):\n"
    "    e = TensorProto(name='w', data_type=1, dims=[2])\n"
    "    e.data_location = TensorProto.EXTERNAL\n"
    "    kv = e.external_data.add(); kv.key = 'location'; kv.value = loc\n"
    "    save(model(add_w, [e]), name)\n"
    "e = TensorProto(name='w', data_type=1, dims=[1000])\n"
    "e.data_location = TensorProto.EXTERNAL\n"
    "kv = e.external_data.add(); kv.key = 'location'; kv.value = 'small.bin'\n"
    "open(os.path.join(d, 'small.bin'), 'wb').write(b'\\0' * 16)\n"
    "save(model(add_w, [e]), 'ext_short.onnx')\n"
    "save(model(relu, ir=2), 'ir2.onnx')\n"
    "save(model(relu, ir=11), 'ir11.onnx')\n"
    "save(model(relu, opset=0), 'opset0.onnx')\n"
    "save(model(relu, opset=22), 'opset22.onnx')\n"
    "t = helper.make_tensor_type_proto(TensorProto.FLOAT, [2])\n"
    "for i in range(300): t = helper.make_sequence_type_proto(t)\n"
    "save(model(relu, vi=[helper.make_value_info('deep', t)]), 'deep.onnx')\n"
    "# If whose branches use the outer value 'x' and the outer node output 'h'\n"
    "then_g = helper.make_graph([helper.make_node('Add', ['x', 'h'], ['t'])], 'then', [],\n"
    "                           [helper.make_tensor_value_info('t', TensorProto.FLOAT, [2])])\n"
    "else_g = helper.make_graph([helper.make_node('Sub', ['x', 'h'], ['e'])], 'else', [],\n"
    "                           [helper.make_tensor_value_info('e', TensorProto.FLOAT, [2])])\n"
    "c = helper.make_tensor('c', TensorProto.BOOL, [], [True])\n"
    "nodes = [helper.make_node('If', ['c'], ['y'], then_branch=then_g, else_branch=else_g, name='the_if'),\n"
    "         helper.make_node('Neg', ['x'], ['h'], name='the_neg')]\n"
    "save(model(nodes, [c]), 'if_outer.onnx')\n"
    "bad_else = helper.make_graph([helper.make_node('Sub', ['x', 'ghost'], ['e'])], 'else', [],\n"
    "                           [helper.make_tensor_value_info('e', TensorProto.FLOAT, [2])])\n"
    "save(model([helper.make_node('If', ['c'], ['y'], then_branch=then_g, else_branch=bad_else),\n"
    "            helper.make_node('Neg', ['x'], ['h'])], [c]), 'if_undef.onnx')\n"
    "loop_g = helper.make_graph([helper.make_node('Identity', ['y'], ['o'])], 'body', [], \n"
    "                           [helper.make_tensor_value_info('o', TensorProto.FLOAT, [2])])\n"
    "save(model([helper.make_node('If', ['c'], ['y'], then_branch=loop_g, else_branch=loop_g, name='selfref')],\n"
    "           [c]), 'if_cycle.onnx')\n";

static void expect_reject(const char *file, tosac_status want, const char *phrase)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s", g_tmp, file);
    tosac_diag *d = tosac_diag_create();
    tosac_onnx_model *m = NULL;
    tosac_status s = tosac_onnx_read_file(path, NULL, &m, d);
    t_checks++;
    if (s != want || m != NULL || !strstr(first_msg(d), phrase)) {
        t_failures++;
        fprintf(stderr, "%s: got status %d (%s) message \"%s\", wanted %d and \"%s\"\n", file, (int)s,
                tosac_status_str(s), first_msg(d), (int)want, phrase);
    }
    tosac_onnx_model_destroy(m);
    tosac_diag_destroy(d);
}

static void test_hostile_models(void)
{
    char args[300];
    snprintf(args, sizeof args, "'%s'", g_tmp);
    EXPECT_EQ_I(run_python(PY_HOSTILE, args), 0);

    expect_reject("cycle.onnx", TOSAC_ERR_FORMAT, "the nodes form a cycle through node 'n_");
    expect_reject("undef.onnx", TOSAC_ERR_FORMAT, "node 'adder' (Add): input 'nope' is not defined");
    expect_reject("dup.onnx", TOSAC_ERR_FORMAT, "node 'twice' (Neg): output 'y' is already produced by node");
    expect_reject("noout.onnx", TOSAC_ERR_FORMAT, "output 'y' is not defined");
    expect_reject("short_raw.onnx", TOSAC_ERR_FORMAT,
                  "initializer 'w': raw_data holds 8 bytes but dims [4] of FLOAT need 16");
    expect_reject("huge.onnx", TOSAC_ERR_FORMAT, "raw_data holds 4 bytes but dims [1048576, 1048576] of FLOAT need "
                                                 "4398046511104");
    expect_reject("huge_typed.onnx", TOSAC_ERR_FORMAT, "float_data holds 1 values but dims [1048576, 1048576]");
    expect_reject("negdim.onnx", TOSAC_ERR_FORMAT, "negative dimension -3");
    expect_reject("strnum.onnx", TOSAC_ERR_FORMAT, "string_data cannot hold numeric FLOAT elements");
    expect_reject("wrongfield.onnx", TOSAC_ERR_FORMAT, "int64_data cannot hold FLOAT elements");
    expect_reject("ext_dotdot.onnx", TOSAC_ERR_FORMAT, "initializer 'w': external data location "
                                                       "'sub/../../secret.bin' escapes the model directory");
    expect_reject("ext_abs.onnx", TOSAC_ERR_FORMAT, "'/etc/passwd' is an absolute path");
    expect_reject("ext_short.onnx", TOSAC_ERR_FORMAT, "external data in 'small.bin' at offset 0 needs 4000 bytes");
    expect_reject("ir2.onnx", TOSAC_ERR_UNSUPPORTED, "IR version 2 is not supported");
    expect_reject("ir11.onnx", TOSAC_ERR_UNSUPPORTED, "IR version 11 is not supported");
    expect_reject("opset0.onnx", TOSAC_ERR_UNSUPPORTED, "opset version 0 of the default domain is not supported");
    expect_reject("opset22.onnx", TOSAC_ERR_UNSUPPORTED, "opset version 22 of the default domain is not supported");
    expect_reject("deep.onnx", TOSAC_ERR_FORMAT, "nested deeper than 100 levels");
    expect_reject("if_undef.onnx", TOSAC_ERR_FORMAT, "graph 'else' node 'Sub_0' (Sub): input 'ghost' is not defined");
    expect_reject("if_cycle.onnx", TOSAC_ERR_FORMAT, "cycle through node 'selfref'");

    /* outer-scope references: valid, and they order the If after the node producing 'h' */
    char path[400];
    snprintf(path, sizeof path, "%s/if_outer.onnx", g_tmp);
    tosac_diag *d = tosac_diag_create();
    tosac_onnx_model *m = NULL;
    EXPECT_EQ_I(tosac_onnx_read_file(path, NULL, &m, d), TOSAC_OK);
    if (m) {
        const tosac_onnx_graph *g = m->graph;
        EXPECT_EQ_I(g->n_nodes, 2);
        EXPECT_STREQ(g->nodes[0].name, "the_neg");
        EXPECT_STREQ(g->nodes[1].name, "the_if");
        EXPECT_EQ_I(g->nodes[1].index, 0);
        const tosac_onnx_attr *a = tosac_onnx_find_attr(&g->nodes[1], "then_branch");
        EXPECT(a && a->g && a->g->n_outer_refs == 2);
        if (a && a->g && a->g->n_outer_refs == 2) {
            EXPECT_STREQ(a->g->outer_refs[0], "x");
            EXPECT_STREQ(a->g->outer_refs[1], "h");
        }
        EXPECT_EQ_I(g->n_initializers, 1);
        EXPECT_EQ_I(g->n_inputs, 1);
        tosac_onnx_model_destroy(m);
    }

    /* a model given twice back to back: protobuf would merge the two graphs */
    size_t n = 0;
    snprintf(path, sizeof path, "%s/ok.onnx", g_tmp);
    unsigned char *buf = slurp(path, &n);
    EXPECT(buf != NULL);
    if (buf) {
        unsigned char *two = malloc(2 * n);
        memcpy(two, buf, n);
        memcpy(two + n, buf, n);
        m = NULL;
        tosac_diag_clear(d);
        EXPECT_EQ_I(tosac_onnx_read_mem(two, 2 * n, "twice.onnx", NULL, NULL, &m, d), TOSAC_ERR_FORMAT);
        EXPECT(strstr(first_msg(d), "appears twice") != NULL);
        free(two);
        /* limits */
        tosac_onnx_read_opts o = {0};
        o.max_file_bytes = 10;
        tosac_diag_clear(d);
        EXPECT_EQ_I(tosac_onnx_read_mem(buf, n, "big.onnx", NULL, &o, &m, d), TOSAC_ERR_NOMEM);
        EXPECT(strstr(first_msg(d), "max_file_bytes") != NULL);
        tosac_diag_clear(d);
        EXPECT_EQ_I(tosac_onnx_read_file(path, &o, &m, d), TOSAC_ERR_NOMEM);
        o.max_file_bytes = 0;
        o.max_decode_bytes = 64;
        tosac_diag_clear(d);
        EXPECT_EQ_I(tosac_onnx_read_mem(buf, n, "mem.onnx", NULL, &o, &m, d), TOSAC_ERR_NOMEM);
        EXPECT(strstr(first_msg(d), "max_decode_bytes") != NULL);
        EXPECT(m == NULL);
        free(buf);
    }
    tosac_diag_clear(d);
    EXPECT_EQ_I(tosac_onnx_read_mem("", 0, "empty.onnx", NULL, NULL, &m, d), TOSAC_ERR_FORMAT);
    EXPECT(strstr(first_msg(d), "empty file") != NULL);
    tosac_diag_clear(d);
    EXPECT_EQ_I(tosac_onnx_read_file("/nonexistent/x.onnx", NULL, &m, d), TOSAC_ERR_IO);
    tosac_diag_destroy(d);
}

/* Every prefix of a real model and 2000 random corruptions: OK or an error with a message. */
static void test_truncation_and_corruption(void)
{
    size_t n = 0;
    unsigned char *buf = slurp(TESTDATA "/node/test_conv_with_strides_padding/model.onnx", &n);
    EXPECT(buf != NULL);
    if (!buf) return;
    tosac_diag *d = tosac_diag_create();
    size_t errors = 0, oks = 0, silent = 0;
    for (size_t len = 0; len < n; len++) {
        unsigned char *cut = malloc(len ? len : 1); /* exact size so ASan sees overreads */
        memcpy(cut, buf, len);
        tosac_onnx_model *m = NULL;
        tosac_diag_clear(d);
        tosac_status s = tosac_onnx_read_mem(cut, len, "cut.onnx", NULL, NULL, &m, d);
        if (s == TOSAC_OK) oks++;
        else {
            errors++;
            if (tosac_diag_count(d) == 0) silent++;
        }
        tosac_onnx_model_destroy(m);
        free(cut);
    }
    printf("truncations: %zu prefixes: %zu rejected, %zu still valid models\n", n, errors, oks);
    EXPECT(errors > n / 2);
    EXPECT_EQ_I(silent, 0);

    uint64_t seed = 0x9E3779B97F4A7C15ull;
    size_t cok = 0, cerr = 0;
    unsigned char *mut = malloc(n);
    for (int it = 0; it < 2000; it++) {
        memcpy(mut, buf, n);
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        int flips = 1 + (int)((seed >> 60) & 3);
        for (int k = 0; k < flips; k++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            size_t at = (size_t)((seed >> 20) % n);
            mut[at] = (unsigned char)(seed >> 52);
        }
        tosac_onnx_model *m = NULL;
        tosac_diag_clear(d);
        tosac_status s = tosac_onnx_read_mem(mut, n, "mut.onnx", NULL, NULL, &m, d);
        if (s == TOSAC_OK) cok++;
        else {
            cerr++;
            if (tosac_diag_count(d) == 0) silent++;
        }
        tosac_onnx_model_destroy(m);
    }
    printf("corruptions: 2000: %zu rejected, %zu still valid models\n", cerr, cok);
    EXPECT_EQ_I(silent, 0);
    free(mut);
    free(buf);
    tosac_diag_destroy(d);
}

int main(void)
{
    snprintf(g_tmp, sizeof g_tmp, "/tmp/tosac_onnx_test_XXXXXX");
    if (!mkdtemp(g_tmp)) {
        perror("mkdtemp");
        return 1;
    }
    RUN(test_all_testdata);
    RUN(test_known_models);
    RUN(test_external);
    RUN(test_hostile_models);
    RUN(test_truncation_and_corruption);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_tmp);
    return test_summary();
}
