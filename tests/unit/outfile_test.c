/* Output sets (src/core/outfile.h): the checks, commit and roll-back, devices, links, signals. */
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/outfile.h"
#include "harness/test.h"
#include "tosac/npy.h"

static char g_dir[256];
static tosac_diag *g_d;

static const char *at(const char *name)
{
    static char buf[8][512];
    static int k;
    char *p = buf[k++ % 8];
    snprintf(p, sizeof buf[0], "%s/%s", g_dir, name);
    return p;
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* The file's content (up to 255 bytes), "" if it cannot be read. */
static const char *get(const char *path)
{
    static char buf[256];
    buf[0] = '\0';
    FILE *f = fopen(path, "rb");
    if (!f) return buf;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static int temps(void)
{
    DIR *dir = opendir(g_dir);
    int n = 0;
    struct dirent *e;
    while (dir && (e = readdir(dir)) != NULL) n += strstr(e->d_name, ".tmp-") != NULL;
    if (dir) closedir(dir);
    return n;
}

static bool last_has(const char *s)
{
    size_t n = tosac_diag_count(g_d);
    return n && strstr(tosac_diag_message(g_d, n - 1, NULL), s) != NULL;
}

static bool fill_text(int fd, void *ctx) { return tosac_write_all(fd, ctx, strlen(ctx)); }

static void test_refusals(void)
{
    put(at("in.txt"), "input");
    EXPECT_EQ_I(link(at("in.txt"), at("hard.txt")), 0);
    EXPECT_EQ_I(symlink("in.txt", at("soft.txt")), 0);
    EXPECT_EQ_I(mkdir(at("dir"), 0777), 0);
    EXPECT_EQ_I(mkfifo(at("fifo"), 0666), 0);
    tosac_outset *s = tosac_outset_create();
    const char *wp = NULL;
    EXPECT_EQ_I(tosac_outset_add_input(s, at("in.txt"), g_d), TOSAC_OK);
    EXPECT_EQ_I(tosac_outset_add_input(s, at("missing"), g_d), TOSAC_OK); /* its reader reports it */
    /* the input under three other names */
    EXPECT_EQ_I(tosac_outset_add(s, at("in.txt"), &wp, g_d), TOSAC_ERR_INVALID_ARG);
    EXPECT(last_has("same file as the input"));
    EXPECT_EQ_I(tosac_outset_add(s, at("hard.txt"), &wp, g_d), TOSAC_ERR_INVALID_ARG);
    EXPECT_EQ_I(tosac_outset_add(s, at("soft.txt"), &wp, g_d), TOSAC_ERR_INVALID_ARG);
    EXPECT_EQ_I(tosac_outset_add(s, at("./dir/../in.txt"), &wp, g_d), TOSAC_ERR_INVALID_ARG);
    EXPECT_EQ_I(tosac_outset_add(s, at("dir"), &wp, g_d), TOSAC_ERR_IO);
    EXPECT(last_has("is a directory"));
    EXPECT_EQ_I(tosac_outset_add(s, at("fifo"), &wp, g_d), TOSAC_ERR_IO);
    EXPECT(last_has("not a regular file"));
    EXPECT_EQ_I(tosac_outset_add(s, at("no/such/x"), &wp, g_d), TOSAC_ERR_IO);
    EXPECT(last_has("No such file or directory"));
    /* two outputs that are one new file, and an input named after an output */
    EXPECT_EQ_I(tosac_outset_add(s, at("new.txt"), &wp, g_d), TOSAC_OK);
    EXPECT_EQ_I(tosac_outset_add(s, at("dir/../new.txt"), &wp, g_d), TOSAC_ERR_INVALID_ARG);
    EXPECT(last_has("is also the output"));
    put(at("out.txt"), "old");
    EXPECT_EQ_I(tosac_outset_add(s, at("out.txt"), &wp, g_d), TOSAC_OK);
    EXPECT_EQ_I(tosac_outset_add_input(s, at("out.txt"), g_d), TOSAC_ERR_INVALID_ARG);
    tosac_outset_destroy(s);
    EXPECT_STREQ(get(at("in.txt")), "input");
    EXPECT_STREQ(get(at("out.txt")), "old");
    EXPECT(access(at("new.txt"), F_OK) != 0);
    EXPECT_EQ_I(temps(), 0);
    /* the library writers follow the same rules */
    const int64_t shape[1] = {1};
    const float one = 1.0f;
    EXPECT_EQ_I(tosac_npy_write_file(at("fifo"), "<f4", 1, shape, &one, 4, g_d), TOSAC_ERR_IO);
    EXPECT_EQ_I(tosac_npy_write_file(at("dir"), "<f4", 1, shape, &one, 4, g_d), TOSAC_ERR_IO);
    EXPECT_EQ_I(temps(), 0);
}

static void test_commit(void)
{
    put(at("a.txt"), "old a");
    put(at("stale.txt"), "stale");
    put(at("target.txt"), "old target");
    EXPECT_EQ_I(symlink("target.txt", at("link.txt")), 0);
    EXPECT_EQ_I(chmod(at("a.txt"), 0600), 0);
    tosac_outset *s = tosac_outset_create();
    const char *wa = NULL, *wb = NULL, *wl = NULL;
    EXPECT_EQ_I(tosac_outset_add(s, at("a.txt"), &wa, g_d), TOSAC_OK);
    EXPECT_EQ_I(tosac_outset_add(s, at("b.txt"), &wb, g_d), TOSAC_OK);
    EXPECT_EQ_I(tosac_outset_add(s, at("link.txt"), &wl, g_d), TOSAC_OK);
    EXPECT_EQ_I(tosac_outset_add_stale(s, at("stale.txt"), g_d), TOSAC_OK);
    EXPECT_EQ_I(tosac_outset_add_stale(s, at("absent.txt"), g_d), TOSAC_OK);
    EXPECT_EQ_I(temps(), 3); /* made when added, so an unwritable folder shows before any work */
    /* the writers write the temporaries (a library writer given one writes it as it is) */
    EXPECT_EQ_I(tosac_outfile_write(wa, fill_text, "new a", g_d), TOSAC_OK);
    EXPECT_EQ_I(tosac_outfile_write_bytes(wb, "new b", 5, g_d), TOSAC_OK);
    EXPECT_EQ_I(tosac_outfile_write_bytes(wl, "new target", 10, g_d), TOSAC_OK);
    EXPECT_EQ_I(temps(), 3);
    EXPECT_STREQ(get(at("a.txt")), "old a"); /* nothing replaced before the commit */
    EXPECT(access(at("b.txt"), F_OK) != 0);
    EXPECT_EQ_I(tosac_outset_commit(s, g_d), TOSAC_OK);
    tosac_outset_destroy(s);
    EXPECT_STREQ(get(at("a.txt")), "new a");
    EXPECT_STREQ(get(at("b.txt")), "new b");
    EXPECT_STREQ(get(at("target.txt")), "new target");
    struct stat st;
    EXPECT(lstat(at("link.txt"), &st) == 0 && S_ISLNK(st.st_mode)); /* the link stays a link */
    EXPECT(stat(at("a.txt"), &st) == 0 && (st.st_mode & 0777) == 0600); /* permissions kept */
    EXPECT(access(at("stale.txt"), F_OK) != 0);
    EXPECT_EQ_I(temps(), 0);

    /* not committed: everything stays as it was */
    s = tosac_outset_create();
    EXPECT_EQ_I(tosac_outset_add(s, at("a.txt"), &wa, g_d), TOSAC_OK);
    EXPECT_EQ_I(tosac_outset_add(s, at("c.txt"), &wb, g_d), TOSAC_OK);
    EXPECT_EQ_I(tosac_outfile_write_bytes(wa, "newer", 5, g_d), TOSAC_OK);
    tosac_outset_destroy(s);
    EXPECT_STREQ(get(at("a.txt")), "new a");
    EXPECT(access(at("c.txt"), F_OK) != 0);
    EXPECT_EQ_I(temps(), 0);
}

static void test_devices(void)
{
    struct stat st;
    if (stat("/dev/null", &st) != 0 || !S_ISCHR(st.st_mode) || stat("/dev/full", &st) != 0) {
        fprintf(stderr, "no /dev/null or /dev/full\n");
        EXPECT(false);
        return;
    }
    tosac_outset *s = tosac_outset_create();
    const char *wp = NULL;
    EXPECT_EQ_I(tosac_outset_add(s, "/dev/null", &wp, g_d), TOSAC_OK);
    EXPECT_STREQ(wp, "/dev/null"); /* in place: no temporary */
    EXPECT_EQ_I(tosac_outfile_write_bytes(wp, "x", 1, g_d), TOSAC_OK);
    EXPECT_EQ_I(tosac_outset_commit(s, g_d), TOSAC_OK);
    tosac_outset_destroy(s);
    EXPECT(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
    /* a write error on a device: reported with the OS reason, the device is kept */
    tosac_diag_clear(g_d);
    EXPECT_EQ_I(tosac_outfile_write_bytes("/dev/full", "x", 1, g_d), TOSAC_ERR_IO);
    EXPECT(last_has("/dev/full") && last_has("No space left on device"));
    EXPECT(stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode));
}

/* A child makes two temporaries, then is killed by `sig`: they are gone and the child died of it. */
static void killed_by(int sig)
{
    pid_t pid = fork();
    if (pid == 0) {
        tosac_outfile_catch_signals();
        tosac_outset *s = tosac_outset_create();
        const char *wp;
        if (tosac_outset_add(s, at("k1.txt"), &wp, NULL) != TOSAC_OK ||
            tosac_outset_add(s, at("k2.txt"), &wp, NULL) != TOSAC_OK || temps() != 2)
            _exit(7);
        raise(sig);
        _exit(8); /* not reached */
    }
    int status = 0;
    EXPECT(pid > 0 && waitpid(pid, &status, 0) == pid);
    EXPECT(WIFSIGNALED(status) && WTERMSIG(status) == sig);
    EXPECT_EQ_I(temps(), 0);
    EXPECT(access(at("k1.txt"), F_OK) != 0);
}

static void test_signals(void)
{
    killed_by(SIGINT);
    killed_by(SIGTERM);
    killed_by(SIGHUP);
}

int main(void)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/tosac_outfile_test_XXXXXX");
    if (!mkdtemp(g_dir)) return 1;
    g_d = tosac_diag_create();
    RUN(test_refusals);
    RUN(test_commit);
    RUN(test_devices);
    RUN(test_signals);
    tosac_diag_destroy(g_d);
    if (!t_failures) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
        if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
    }
    return test_summary();
}
