/*
 * Output files: the one way tosac writes a file (the library writers and every CLI command).
 *
 * An output set gathers the files one command writes. Each output is checked when it is added:
 * it must not be a directory, nor an existing file other than a regular file or a character
 * device, nor the same file (device and inode) as an input of the set or another output. A
 * regular file (or a new one) is written to a fresh temporary file next to it
 * ("PATH.tmp-PID-N", same directory so the rename is atomic; a symbolic link is followed and the
 * file it names is replaced); tosac_outset_commit renames every temporary into place only after
 * the caller has written all of them, and tosac_outset_destroy removes the temporaries of a set
 * that was not committed. A character device (/dev/null, a terminal) is written in place: no
 * temporary, no rename, never deleted, even when writing fails (/dev/full).
 *
 * The temporaries of every live set are also listed in a process-wide table so that
 * tosac_outfile_catch_signals (called by the CLI) can unlink them on SIGINT, SIGTERM and SIGHUP.
 */
#ifndef TOSAC_CORE_OUTFILE_H
#define TOSAC_CORE_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "tosac/status.h"

typedef struct tosac_outset tosac_outset;

/* NULL when out of memory. */
tosac_outset *tosac_outset_create(void);
/* Removes the temporaries of a set that was not committed, then frees it (NULL is fine). */
void tosac_outset_destroy(tosac_outset *s);
/* Records a file the command reads: no output may be the same file. A path that does not exist
   is ignored (its reader reports that). */
tosac_status tosac_outset_add_input(tosac_outset *s, const char *path, tosac_diag *d);
/* Adds output `path` (checked as above; for a regular file its temporary is created now, so an
   unwritable folder is reported before any work). *write_path is where the writer writes (the
   temporary, or `path` itself for a character device); it lives as long as the set. */
tosac_status tosac_outset_add(tosac_outset *s, const char *path, const char **write_path, tosac_diag *d);
/* A regular file at `path` is removed by the commit (a stale companion of an output, e.g. the
   quantization sidecar next to a program that is no longer quantized). */
tosac_status tosac_outset_add_stale(tosac_outset *s, const char *path, tosac_diag *d);
/* Removes the stale files, then renames every temporary into place (in the order added). */
tosac_status tosac_outset_commit(tosac_outset *s, tosac_diag *d);

/* Writes one file: fill() writes the bytes to fd (returns false with errno set on failure).
   `path` is either the write path of a live output set (written as it is) or any other path
   (written as a one-file output set: the rules above, without inputs). */
typedef bool (*tosac_outfile_fill)(int fd, void *ctx);
tosac_status tosac_outfile_write(const char *path, tosac_outfile_fill fill, void *ctx, tosac_diag *d);
/* tosac_outfile_write of `len` bytes. */
tosac_status tosac_outfile_write_bytes(const char *path, const void *bytes, size_t len, tosac_diag *d);
/* write(2) until all of it is written (EINTR retried; a zero write is EIO). */
bool tosac_write_all(int fd, const void *bytes, size_t len);

/* Installs handlers that unlink every live temporary on SIGINT, SIGTERM and SIGHUP, then let the
   signal take its default action (signals the process ignores stay ignored). For programs only:
   the library never installs handlers by itself. */
void tosac_outfile_catch_signals(void);

#endif
