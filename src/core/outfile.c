/* Output sets: checked outputs, temporaries renamed together, removed on failure and on signals. */
#define _XOPEN_SOURCE 700 /* realpath (XSI), to replace the file a symbolic link names */
#include "core/outfile.h"

#if defined(__unix__) || defined(__APPLE__)
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/diag.h"

typedef enum out_kind { OUT_TEMP, OUT_IN_PLACE, OUT_STALE } out_kind;

/* A file's identity: an existing file is its device and inode; a file still to be created is its
   folder's device and inode plus its name (so "a/x" and "a/../a/x" are one output). */
typedef struct file_id {
    bool exists;
    dev_t dev;
    ino_t ino;
    const char *name; /* the new file's name inside its folder (points into `path`) */
} file_id;

typedef struct out_entry {
    out_kind kind;
    char *path; /* as the user gave it (for messages) */
    char *dest; /* the file replaced: `path`, or the file a symbolic link names */
    char *tmp;  /* OUT_TEMP until committed or removed */
    file_id id;
} out_entry;

typedef struct in_entry {
    char *path;
    file_id id;
} in_entry;

struct tosac_outset {
    out_entry **outs;
    size_t n_outs, cap_outs;
    in_entry *ins;
    size_t n_ins, cap_ins;
};

/* ---- the process-wide table of live temporaries (read by the signal handler) ---- */

/* Fixed size so that the handler reads it without locks; a process with more temporaries alive
   at once still removes them on failure, only a signal may leave the extra ones behind. */
#define LIVE_MAX 256
static _Atomic(out_entry *) g_live[LIVE_MAX];
static const int k_signals[] = {SIGINT, SIGTERM, SIGHUP};

static void live_add(out_entry *e)
{
    for (size_t k = 0; k < LIVE_MAX; k++) {
        out_entry *none = NULL;
        if (atomic_compare_exchange_strong(&g_live[k], &none, e)) return;
    }
}

static void live_remove(out_entry *e)
{
    for (size_t k = 0; k < LIVE_MAX; k++) {
        out_entry *cur = e;
        if (atomic_compare_exchange_strong(&g_live[k], &cur, NULL)) return;
    }
}

static const out_entry *live_find(const char *tmp)
{
    for (size_t k = 0; k < LIVE_MAX; k++) {
        const out_entry *e = atomic_load(&g_live[k]);
        if (e && e->tmp && !strcmp(e->tmp, tmp)) return e;
    }
    return NULL;
}

/* Holds the handled signals back (until the mask in *old is restored). */
static void block_signals(sigset_t *old)
{
    sigset_t block;
    sigemptyset(&block);
    for (size_t k = 0; k < sizeof k_signals / sizeof k_signals[0]; k++) sigaddset(&block, k_signals[k]);
    sigprocmask(SIG_BLOCK, &block, old);
}

static void on_signal(int sig)
{
    for (size_t k = 0; k < LIVE_MAX; k++) {
        const out_entry *e = atomic_load(&g_live[k]);
        if (e && e->tmp) unlink(e->tmp);
    }
    /* SA_RESETHAND restored the default action: the signal, delivered when this handler returns,
       ends the process as it would have without us */
    raise(sig);
}

void tosac_outfile_catch_signals(void)
{
    for (size_t k = 0; k < sizeof k_signals / sizeof k_signals[0]; k++) {
        struct sigaction old, sa;
        if (sigaction(k_signals[k], NULL, &old) != 0 || old.sa_handler == SIG_IGN) continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sa.sa_flags = SA_RESETHAND;
        sigemptyset(&sa.sa_mask);
        sigaction(k_signals[k], &sa, NULL);
    }
}

/* ---- sets ---- */

tosac_outset *tosac_outset_create(void) { return tosac_calloc(1, sizeof(tosac_outset)); }

static void free_str(char *s)
{
    if (s) tosac_free(s, strlen(s) + 1);
}

static void entry_drop_tmp(out_entry *e, bool remove)
{
    if (!e->tmp) return;
    /* unlinked while still listed: a signal in between finds nothing left to remove */
    if (remove) unlink(e->tmp);
    live_remove(e);
    free_str(e->tmp);
    e->tmp = NULL;
}

void tosac_outset_destroy(tosac_outset *s)
{
    if (!s) return;
    for (size_t k = 0; k < s->n_outs; k++) {
        out_entry *e = s->outs[k];
        entry_drop_tmp(e, true);
        if (e->dest != e->path) free(e->dest); /* from realpath */
        free_str(e->path);
        tosac_free(e, sizeof *e);
    }
    for (size_t k = 0; k < s->n_ins; k++) free_str(s->ins[k].path);
    tosac_free(s->outs, s->cap_outs * sizeof *s->outs);
    tosac_free(s->ins, s->cap_ins * sizeof *s->ins);
    tosac_free(s, sizeof *s);
}

static bool same_file(const file_id *a, const file_id *b)
{
    if (a->exists != b->exists || a->dev != b->dev || a->ino != b->ino) return false;
    return a->exists || !strcmp(a->name, b->name);
}

/* The folder part of `path` ("." when none), copied into buf; false if it does not fit. */
static bool folder_of(const char *path, char *buf, size_t cap)
{
    const char *slash = strrchr(path, '/');
    size_t n = !slash ? 1 : slash == path ? 1 : (size_t)(slash - path);
    if (n + 1 > cap) return false;
    memcpy(buf, !slash ? "." : path, n);
    buf[n] = '\0';
    return true;
}

/* Checks an output path and fills e->dest, e->id and e->kind. */
static tosac_status classify(out_entry *e, const char *path, tosac_diag *d)
{
    struct stat st;
    e->dest = e->path;
    if (lstat(path, &st) == 0) {
        if (S_ISLNK(st.st_mode)) {
            e->dest = realpath(path, NULL);
            if (!e->dest) {
                e->dest = e->path;
                return tosac_diag_add(d, TOSAC_ERR_IO, "%s: a symbolic link to a file that cannot be reached: %s", path,
                                      strerror(errno));
            }
            if (stat(e->dest, &st) != 0)
                return tosac_diag_add(d, TOSAC_ERR_IO, "%s: cannot access: %s", path, strerror(errno));
        }
        if (S_ISDIR(st.st_mode))
            return tosac_diag_add(d, TOSAC_ERR_IO, "%s: is a directory, not an output file", path);
        if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode))
            return tosac_diag_add(d, TOSAC_ERR_IO,
                                  "%s: exists and is not a regular file (tosac replaces regular files and writes "
                                  "character devices such as /dev/null in place)",
                                  path);
        e->kind = S_ISCHR(st.st_mode) ? OUT_IN_PLACE : OUT_TEMP;
        e->id = (file_id){true, st.st_dev, st.st_ino, NULL};
        return TOSAC_OK;
    }
    if (errno != ENOENT) return tosac_diag_add(d, TOSAC_ERR_IO, "%s: cannot access: %s", path, strerror(errno));
    char folder[PATH_MAX];
    if (!folder_of(path, folder, sizeof folder))
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "%s: the path is too long", path);
    if (stat(folder, &st) != 0)
        return tosac_diag_add(d, TOSAC_ERR_IO, "%s: cannot create: folder '%s': %s", path, folder, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return tosac_diag_add(d, TOSAC_ERR_IO, "%s: cannot create: '%s' is not a folder", path, folder);
    const char *slash = strrchr(e->path, '/');
    e->kind = OUT_TEMP;
    e->id = (file_id){false, st.st_dev, st.st_ino, slash ? slash + 1 : e->path};
    return TOSAC_OK;
}

/* The conflicts of a new output or input with what the set holds already. */
static tosac_status check_against(const tosac_outset *s, const char *path, const file_id *id, bool is_output,
                                  tosac_diag *d)
{
    for (size_t k = 0; k < s->n_ins; k++)
        if (is_output && same_file(id, &s->ins[k].id))
            return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG,
                                  "%s: is the same file as the input '%s'; tosac never writes over its inputs", path,
                                  s->ins[k].path);
    for (size_t k = 0; k < s->n_outs; k++)
        if (same_file(id, &s->outs[k]->id))
            return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG,
                                  is_output ? "%s: is also the output '%s'"
                                            : "%s: is an input and the output '%s'; tosac never writes over its inputs",
                                  path, s->outs[k]->path);
    return TOSAC_OK;
}

tosac_status tosac_outset_add_input(tosac_outset *s, const char *path, tosac_diag *d)
{
    if (!s || !path) return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "tosac_outset_add_input: NULL argument");
    struct stat st;
    if (stat(path, &st) != 0) return TOSAC_OK;
    file_id id = {true, st.st_dev, st.st_ino, NULL};
    for (size_t k = 0; k < s->n_ins; k++)
        if (same_file(&id, &s->ins[k].id)) return TOSAC_OK;
    tosac_status r = check_against(s, path, &id, false, d);
    if (r != TOSAC_OK) return r;
    if (!tosac_grow((void **)&s->ins, &s->cap_ins, s->n_ins + 1, sizeof *s->ins))
        return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    char *copy = tosac_strdup(path);
    if (!copy) return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    s->ins[s->n_ins++] = (in_entry){copy, id};
    return TOSAC_OK;
}

/* A new empty temporary next to e->dest, with the replaced file's permissions. */
static tosac_status make_temp(out_entry *e, tosac_diag *d)
{
    static atomic_uint counter;
    size_t cap = strlen(e->dest) + 48;
    char *tmp = tosac_malloc(cap);
    if (!tmp) return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    /* the handled signals wait while the file exists but is not listed yet */
    sigset_t old;
    block_signals(&old);
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
        snprintf(tmp, cap, "%s.tmp-%ld-%u", e->dest, (long)getpid(), atomic_fetch_add(&counter, 1u));
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    int err = errno;
    /* exact-size copy so that every string of the set is freed as strlen + 1 */
    if (fd >= 0 && !(e->tmp = tosac_strdup(tmp))) {
        unlink(tmp);
        err = ENOMEM;
    }
    if (e->tmp) live_add(e);
    sigprocmask(SIG_SETMASK, &old, NULL);
    tosac_free(tmp, cap);
    if (!e->tmp) {
        if (fd >= 0) close(fd);
        return tosac_diag_add(d, err == ENOMEM ? TOSAC_ERR_NOMEM : TOSAC_ERR_IO,
                              "%s: cannot create a temporary file next to it: %s", e->path, strerror(err));
    }
    struct stat st;
    if (e->id.exists && stat(e->dest, &st) == 0) (void)fchmod(fd, st.st_mode & 07777);
    close(fd);
    return TOSAC_OK;
}

static tosac_status add_entry(tosac_outset *s, const char *path, bool stale, const char **write_path, tosac_diag *d)
{
    if (!s || !path || !*path) return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "an output needs a file name");
    if (!tosac_grow((void **)&s->outs, &s->cap_outs, s->n_outs + 1, sizeof *s->outs))
        return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    out_entry *e = tosac_calloc(1, sizeof *e);
    if (!e || !(e->path = tosac_strdup(path))) {
        tosac_free(e, sizeof *e);
        return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    }
    tosac_status r = classify(e, path, d);
    if (r == TOSAC_OK) r = check_against(s, path, &e->id, true, d);
    if (stale) e->kind = OUT_STALE;
    else if (r == TOSAC_OK && e->kind == OUT_TEMP) r = make_temp(e, d);
    /* kept even when refused, so that destroy frees it the one way */
    s->outs[s->n_outs++] = e;
    if (r == TOSAC_OK && write_path) *write_path = e->kind == OUT_TEMP ? e->tmp : e->path;
    return r;
}

tosac_status tosac_outset_add(tosac_outset *s, const char *path, const char **write_path, tosac_diag *d)
{
    return add_entry(s, path, false, write_path, d);
}

tosac_status tosac_outset_add_stale(tosac_outset *s, const char *path, tosac_diag *d)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) return TOSAC_OK; /* nothing there to remove */
    return add_entry(s, path, true, NULL, d);
}

tosac_status tosac_outset_commit(tosac_outset *s, tosac_diag *d)
{
    if (!s) return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "tosac_outset_commit: no set");
    /* a signal waits for the whole commit: not some outputs renamed and the others removed */
    sigset_t old;
    block_signals(&old);
    tosac_status r = TOSAC_OK;
    for (size_t k = 0; k < s->n_outs && r == TOSAC_OK; k++) {
        const out_entry *e = s->outs[k];
        if (e->kind == OUT_STALE && unlink(e->path) != 0 && errno != ENOENT)
            r = tosac_diag_add(d, TOSAC_ERR_IO, "%s: cannot remove this stale file: %s", e->path, strerror(errno));
    }
    for (size_t k = 0; k < s->n_outs && r == TOSAC_OK; k++) {
        out_entry *e = s->outs[k];
        if (!e->tmp) continue;
        if (rename(e->tmp, e->dest) != 0)
            r = tosac_diag_add(d, TOSAC_ERR_IO, "%s: cannot put the new file in place: %s", e->path, strerror(errno));
        else
            entry_drop_tmp(e, false);
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    return r;
}

/* ---- one file ---- */

bool tosac_write_all(int fd, const void *bytes, size_t len)
{
    const unsigned char *b = bytes;
    while (len) {
        size_t chunk = len > ((size_t)1 << 30) ? (size_t)1 << 30 : len;
        ssize_t w = write(fd, b, chunk);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return false;
        if (w == 0) {
            errno = EIO;
            return false;
        }
        b += w;
        len -= (size_t)w;
    }
    return true;
}

/* Opens, fills and closes `wp` (an existing temporary or character device); `name` for messages. */
static tosac_status fill_file(const char *wp, const char *name, bool truncate, tosac_outfile_fill fill, void *ctx,
                              tosac_diag *d)
{
    int fd = open(wp, O_WRONLY | O_CLOEXEC | (truncate ? O_TRUNC : 0));
    if (fd < 0) return tosac_diag_add(d, TOSAC_ERR_IO, "%s: cannot open for writing: %s", name, strerror(errno));
    bool ok = fill(fd, ctx);
    int err = errno;
    if (close(fd) != 0 && ok) {
        ok = false;
        err = errno;
    }
    return ok ? TOSAC_OK : tosac_diag_add(d, TOSAC_ERR_IO, "%s: cannot write: %s", name, strerror(err));
}

tosac_status tosac_outfile_write(const char *path, tosac_outfile_fill fill, void *ctx, tosac_diag *d)
{
    if (!path || !fill) return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "tosac_outfile_write: NULL argument");
    const out_entry *live = live_find(path);
    if (live) return fill_file(path, live->path, true, fill, ctx, d);
    tosac_outset *s = tosac_outset_create();
    if (!s) return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    const char *wp = NULL;
    tosac_status r = tosac_outset_add(s, path, &wp, d);
    if (r == TOSAC_OK) r = fill_file(wp, path, false, fill, ctx, d);
    if (r == TOSAC_OK) r = tosac_outset_commit(s, d);
    tosac_outset_destroy(s);
    return r;
}

#else
/* No POSIX file system (a bare-metal libtosac_rt, cmake/arm-none-eabi-cortex-m55.cmake): every
   write fails with TOSAC_ERR_UNSUPPORTED; nothing on a microcontroller writes files. */
#include "core/diag.h"

static tosac_status no_files(tosac_diag *d)
{
    return tosac_diag_add(d, TOSAC_ERR_UNSUPPORTED, "this platform has no file system to write to");
}

tosac_outset *tosac_outset_create(void) { return NULL; }
void tosac_outset_destroy(tosac_outset *s) { (void)s; }
tosac_status tosac_outset_add_input(tosac_outset *s, const char *path, tosac_diag *d)
{
    (void)s, (void)path;
    return no_files(d);
}
tosac_status tosac_outset_add(tosac_outset *s, const char *path, const char **write_path, tosac_diag *d)
{
    (void)s, (void)path, (void)write_path;
    return no_files(d);
}
tosac_status tosac_outset_add_stale(tosac_outset *s, const char *path, tosac_diag *d)
{
    (void)s, (void)path;
    return no_files(d);
}
tosac_status tosac_outset_commit(tosac_outset *s, tosac_diag *d)
{
    (void)s;
    return no_files(d);
}
tosac_status tosac_outfile_write(const char *path, tosac_outfile_fill fill, void *ctx, tosac_diag *d)
{
    (void)path, (void)fill, (void)ctx;
    return no_files(d);
}
bool tosac_write_all(int fd, const void *bytes, size_t len)
{
    (void)fd, (void)bytes, (void)len;
    return false;
}
void tosac_outfile_catch_signals(void) {}
#endif

typedef struct bytes_ctx {
    const void *p;
    size_t n;
} bytes_ctx;

static bool fill_bytes(int fd, void *ctx)
{
    const bytes_ctx *b = ctx;
    return tosac_write_all(fd, b->p, b->n);
}

tosac_status tosac_outfile_write_bytes(const char *path, const void *bytes, size_t len, tosac_diag *d)
{
    bytes_ctx b = {bytes, len};
    return tosac_outfile_write(path, fill_bytes, &b, d);
}
