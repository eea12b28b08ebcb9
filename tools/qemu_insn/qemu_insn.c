/*
 * QEMU TCG plugin: exact counts of executed guest instructions (tosac's Cortex-M55 benchmark).
 *
 *   qemu-system-arm ... -plugin libqemu_insn.so[,out=FILE][,top=N] -kernel app.elf
 *
 * Every translation block adds its instruction count to a total with an inline operation (no helper
 * call per block), and to the counter of the ELF function that holds its first instruction (QEMU
 * resolves symbols from the -kernel ELF). Calls to the guest's empty marker functions
 * tosac_mark_begin / tosac_mark_end delimit regions: each end prints the instructions executed
 * since the matching begin, the marker calls themselves excluded, as "region K: N". At exit: the
 * total and the N functions (top=N, default 20) with the most instructions.
 *
 * Written against the plugin ABI of QEMU 7.2 (API version 1); only the declarations it uses are
 * spelled out below, so no QEMU headers or sources are needed to build it.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the QEMU plugin ABI (version 1) ---- */
#define QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))
typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t; /* not read */
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_CB_RW_REGS };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, qemu_plugin_vcpu_udata_cb_t cb,
                                          enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op, void *ptr,
                                              uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
const char *qemu_plugin_insn_symbol(const struct qemu_plugin_insn *insn);

QEMU_PLUGIN_EXPORT extern int qemu_plugin_version;
QEMU_PLUGIN_EXPORT int qemu_plugin_version = 1;
QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv);

/* ---- state (one vCPU: mps3-an547 has a single Cortex-M55) ---- */
typedef struct fn_count {
    const char *name; /* QEMU's symbol string, stable for the run */
    uint64_t insns;
} fn_count;

static uint64_t total;
static fn_count *fns;
static size_t n_fns, cap_fns;
static uint64_t region_start;
static unsigned region_depth, region_index;
static FILE *out;
static long top_n = 20;

/* A marker's own block (its return) and the call to tosac_mark_end: not part of the region. */
#define MARKER_OVERHEAD 2

static fn_count *fn_for(const char *name)
{
    for (size_t i = 0; i < n_fns; i++)
        if (fns[i].name == name || strcmp(fns[i].name, name) == 0) return &fns[i];
    if (n_fns == cap_fns) {
        size_t cap = cap_fns ? cap_fns * 2 : 256;
        fn_count *f = realloc(fns, cap * sizeof *f);
        if (!f) return NULL;
        fns = f, cap_fns = cap;
    }
    fns[n_fns] = (fn_count){name, 0};
    return &fns[n_fns++];
}

static void on_begin(unsigned int vcpu, void *ud)
{
    (void)vcpu, (void)ud;
    if (region_depth++ == 0) region_start = total;
}

static void on_end(unsigned int vcpu, void *ud)
{
    (void)vcpu, (void)ud;
    if (region_depth == 0) {
        fprintf(out, "qemu_insn: tosac_mark_end without tosac_mark_begin\n");
        return;
    }
    if (--region_depth == 0) {
        uint64_t n = total - region_start;
        fprintf(out, "region %u: %" PRIu64 "\n", region_index++, n > MARKER_OVERHEAD ? n - MARKER_OVERHEAD : 0);
        fflush(out);
    }
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &total, n);
    const char *sym = n ? qemu_plugin_insn_symbol(qemu_plugin_tb_get_insn(tb, 0)) : NULL;
    if (!sym) return;
    fn_count *f = fn_for(sym);
    if (f) qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &f->insns, n);
    if (strcmp(sym, "tosac_mark_begin") == 0)
        qemu_plugin_register_vcpu_tb_exec_cb(tb, on_begin, QEMU_PLUGIN_CB_NO_REGS, NULL);
    else if (strcmp(sym, "tosac_mark_end") == 0)
        qemu_plugin_register_vcpu_tb_exec_cb(tb, on_end, QEMU_PLUGIN_CB_NO_REGS, NULL);
}

static int by_count(const void *a, const void *b)
{
    uint64_t x = ((const fn_count *)a)->insns, y = ((const fn_count *)b)->insns;
    return x < y ? 1 : x > y ? -1 : 0;
}

static void on_exit_cb(qemu_plugin_id_t id, void *ud)
{
    (void)id, (void)ud;
    fprintf(out, "total: %" PRIu64 "\n", total);
    qsort(fns, n_fns, sizeof *fns, by_count);
    for (size_t i = 0; i < n_fns && (long)i < top_n; i++)
        if (fns[i].insns) fprintf(out, "function %s: %" PRIu64 "\n", fns[i].name, fns[i].insns);
    fflush(out);
    if (out != stderr) fclose(out);
}

int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
    (void)info;
    out = stderr;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "out=", 4) == 0) {
            FILE *f = fopen(argv[i] + 4, "w");
            if (!f) {
                fprintf(stderr, "qemu_insn: cannot write %s\n", argv[i] + 4);
                return -1;
            }
            out = f;
        } else if (strncmp(argv[i], "top=", 4) == 0) {
            top_n = strtol(argv[i] + 4, NULL, 10);
        } else {
            fprintf(stderr, "qemu_insn: unknown argument %s (out=FILE, top=N)\n", argv[i]);
            return -1;
        }
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, on_exit_cb, NULL);
    return 0;
}
