/* Helpers the tests share for what a run leaves in files and on stderr: a file's text,
 * counting a string in it, stderr captured around a call, the profiler's raw records,
 * removing a scratch directory, and a device round trip. Opt-in (include it after
 * harness.h where wanted): the names are short and would clash in other tests. */
#ifndef HWRT_TEST_HARNESS_FILES_H
#define HWRT_TEST_HARNESS_FILES_H

#include "harness.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The text of the file at path, NUL-terminated, in a static buffer of 2 MiB (the next
 * call reuses it; a longer file is cut there); NULL if it cannot be opened. */
static inline char *slurp(const char *path)
{
    static char buf[1 << 21];
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

/* How many times `what` stands in text (non-overlapping). */
static inline int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)); p += strlen(what)) n++;
    return n;
}

/* stderr (fd 2) into a pipe from err_begin() until err_end(), which puts fd 2 back and
 * returns what was written (a static buffer of 16 KiB, reused by the next capture). A
 * pipe, not a file: a test that limits file sizes (RLIMIT_FSIZE) still sees everything.
 * The pipe holds 1 MiB (64 KiB where it cannot grow): more would block the writer. */
static int err_pipe_[2], err_saved_ = -1;

static inline void err_begin(void)
{
    fflush(stderr);
    err_saved_ = dup(2);
    if (pipe(err_pipe_) != 0) { perror("pipe"); exit(1); }
#ifdef F_SETPIPE_SZ
    (void)fcntl(err_pipe_[1], F_SETPIPE_SZ, 1 << 20);
#endif
    dup2(err_pipe_[1], 2);
    close(err_pipe_[1]);
}

static inline char *err_end(void)
{
    static char copy[1 << 14];
    fflush(stderr);
    dup2(err_saved_, 2);                     /* the pipe's last writer closed: EOF below */
    close(err_saved_);
    size_t n = 0;
    ssize_t r;
    while (n < sizeof copy - 1 && (r = read(err_pipe_[0], copy + n, sizeof copy - 1 - n)) > 0)
        n += (size_t)r;
    copy[n] = 0;
    close(err_pipe_[0]);
    return copy;
}

/* What fn() writes on stderr (err_begin/err_end around it). */
static inline char *stderr_of(void (*fn)(void))
{
    err_begin();
    fn();
    return err_end();
}

/* Each line of the profiler's raw files of the sessions under dir (dir/raw/prof_*.tsv),
 * passed to fn with arg; returns how many files were read (0: none, or no dir/raw). */
static inline int prof_raw_lines(const char *dir, void (*fn)(const char *line, void *arg),
                                 void *arg)
{
    char raw[600], path[1200], line[4096];
    snprintf(raw, sizeof raw, "%s/raw", dir);
    DIR *d = opendir(raw);
    int files = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (strncmp(e->d_name, "prof_", 5)) continue;
        snprintf(path, sizeof path, "%s/%s", raw, e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        files++;
        while (fgets(line, sizeof line, f)) fn(line, arg);
        fclose(f);
    }
    if (d) closedir(d);
    return files;
}

/* rm -rf dir; 0 when done, else -1 with a line on stderr naming it. */
static inline int remove_tree(const char *dir)
{
    char cmd[1100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) == 0) return 0;
    fprintf(stderr, "could not remove %s\n", dir);
    return -1;
}

/* Device 0 of the sim in use and checked: 64 ints there and back, equal (the caller
 * shuts down when it wants). */
static inline void sim_round_trip(void)
{
    OK(hwrt_set_device("sim", 0));
    int in[64], out[64] = {0};
    for (int i = 0; i < 64; i++) in[i] = i * 3 + 1;
    void *p = NULL;
    OK(hwrt_malloc(&p, sizeof in));
    OK(hwrt_memcpy(p, in, sizeof in, HWRT_MEMCPY_HOST_TO_DEVICE));
    OK(hwrt_memcpy(out, p, sizeof out, HWRT_MEMCPY_DEVICE_TO_HOST));
    EXPECT(!memcmp(in, out, sizeof in));
    OK(hwrt_free(p));
}

#endif
