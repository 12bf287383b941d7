// SPDX-License-Identifier: Apache-2.0
/* attnmeta info: version and commit, the library's file, and for each
 * backend its module file, targets, devices and driver and runtime versions. */
#define _GNU_SOURCE /* realpath, dl_iterate_phdr */
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "cli.h"
#include "cli_options.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: attnmeta info\n"
          "Prints the library's version and source commit and the file it was loaded\n"
          "from, then for each backend (cpu, cuda, hip) the file of its module, the\n"
          "targets it was built for, the devices it sees (or why it is unavailable) and\n"
          "the versions of the GPU driver and runtime it runs on, then the backend\n"
          "'auto' picks (ATTNMETA_BACKEND forces one). A missing GPU module or device\n"
          "is reported, not an error.\n"
          "  -h, --help   this text\n" CLI_EXIT_STATUS_HELP);
}

/* Prints the file `kind` was loaded from, links resolved. */
static void print_module_path(const char *label, attnmeta_backend kind) {
  const char *path = "";
  char *real;
  attnmeta_backend_module_path(kind, &path);
  real = path[0] ? realpath(path, NULL) : NULL;
  printf("%s%s\n", label, real ? real : path[0] ? path : "(the loader does not say)");
  free(real);
}

/* A version number as `kind`'s runtime writes it (CUDA 13000: "13.0"; HIP
 * 60241134: "6.2.41134"); 0: "none". */
static void format_version(attnmeta_backend kind, int v, char *buf, size_t size) {
  if (v <= 0)
    snprintf(buf, size, "none");
  else if (kind == ATTNMETA_BACKEND_HIP)
    snprintf(buf, size, "%d.%d.%d", v / 10000000, v / 100000 % 100, v % 100000);
  else
    snprintf(buf, size, "%d.%d", v / 1000, v % 1000 / 10);
}

/* The driver and runtime versions `kind`'s backend runs on. */
static void print_runtime_versions(attnmeta_backend kind) {
  int driver = 0, runtime = 0;
  char driver_text[32], runtime_text[32];
  const attnmeta_status st = attnmeta_backend_runtime_versions(kind, &driver, &runtime);
  if (st == ATTNMETA_OK) {
    format_version(kind, driver, driver_text, sizeof driver_text);
    format_version(kind, runtime, runtime_text, sizeof runtime_text);
    printf("              driver: %s (%d), runtime: %s (%d)\n", driver_text, driver, runtime_text,
           runtime);
  } else if (kind == ATTNMETA_BACKEND_CPU) {
    printf("              driver/runtime: none (the CPU backend uses no GPU runtime)\n");
  } else {
    printf("              driver/runtime: unknown (%s)\n",
           st == ATTNMETA_ERR_NOT_SUPPORTED ? "the module predates the version query"
                                            : attnmeta_status_string(st));
  }
}

/* The GPU driver and runtime libraries the backends loaded, links resolved
 * (a driver's file name carries its full version, e.g.
 * libcuda.so.570.86.15): sorted, each once. */
#define MAX_RUNTIME_LIBS 16
typedef struct runtime_libs {
  char *path[MAX_RUNTIME_LIBS];
  int n;
} runtime_libs;

static int collect_runtime_lib(struct dl_phdr_info *info, size_t size, void *data) {
  static const char *const names[] = {"libcuda.so", "libcudart.so", "libamdhip64.so",
                                      "libhsa-runtime64.so"};
  runtime_libs *libs = data;
  const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
  char *real;
  (void)size;
  if (!base || libs->n == MAX_RUNTIME_LIBS) return 0;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    if (strncmp(base + 1, names[i], strlen(names[i])) != 0) continue;
    real = realpath(info->dlpi_name, NULL);
    if (!real) return 0;
    for (int j = 0; j < libs->n; ++j)
      if (strcmp(libs->path[j], real) == 0) {
        free(real);
        return 0;
      }
    libs->path[libs->n++] = real;
    return 0;
  }
  return 0;
}

static int by_text(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void print_runtime_libs(void) {
  runtime_libs libs = {{NULL}, 0};
  dl_iterate_phdr(collect_runtime_lib, &libs);
  qsort(libs.path, (size_t)libs.n, sizeof libs.path[0], by_text);
  for (int i = 0; i < libs.n; ++i) {
    printf("GPU runtime library: %s\n", libs.path[i]);
    free(libs.path[i]);
  }
}

int cli_info(int argc, char **argv) {
  static const attnmeta_backend kinds[] = {ATTNMETA_BACKEND_CPU, ATTNMETA_BACKEND_CUDA,
                                           ATTNMETA_BACKEND_HIP};
  attnmeta_context *ctx = NULL;
  size_t i;
  cli_args a;
  cli_args_init(&a, "attnmeta info", argc, argv);
  while (cli_next(&a)) {
    if (cli_is_help(&a)) return cli_help(&a, usage);
    return cli_unknown(&a);
  }
  printf("attnmeta %s, commit %s (header %d.%d.%d)\n", attnmeta_version_string(),
         attnmeta_build_commit(), ATTNMETA_VERSION_MAJOR, ATTNMETA_VERSION_MINOR,
         ATTNMETA_VERSION_PATCH);
  print_module_path("library: ", ATTNMETA_BACKEND_CPU);
  for (i = 0; i < sizeof kinds / sizeof kinds[0]; ++i) {
    const char *targets = "";
    int count = 0;
    attnmeta_status st = attnmeta_backend_targets(kinds[i], &targets);
    if (st != ATTNMETA_OK) {
      attnmeta_status open_st = attnmeta_open(&ctx, kinds[i], 0);
      printf("backend %-5s unavailable: %s\n", attnmeta_backend_name(kinds[i]),
             open_st == ATTNMETA_OK ? attnmeta_status_string(st) : attnmeta_open_error());
      attnmeta_close(ctx);
      ctx = NULL;
      continue;
    }
    attnmeta_backend_device_count(kinds[i], &count);
    printf("backend %-5s built for: %s; devices: %d\n", attnmeta_backend_name(kinds[i]), targets,
           count);
    if (kinds[i] != ATTNMETA_BACKEND_CPU)
      print_module_path("              module: ", kinds[i]);
    if (count == 0) {
      if (attnmeta_open(&ctx, kinds[i], 0) != ATTNMETA_OK)
        printf("              %s\n", attnmeta_open_error());
      attnmeta_close(ctx);
      ctx = NULL;
    }
    for (int d = 0; d < count; ++d) {
      if (attnmeta_open(&ctx, kinds[i], d) == ATTNMETA_OK) {
        printf("  device %d: %s\n", d, attnmeta_context_device_name(ctx));
        attnmeta_close(ctx);
        ctx = NULL;
      } else {
        printf("  device %d: cannot open: %s\n", d, attnmeta_open_error());
      }
    }
    print_runtime_versions(kinds[i]);
  }
  if (attnmeta_open(&ctx, ATTNMETA_BACKEND_AUTO, 0) == ATTNMETA_OK) {
    printf("default backend: %s (%s)\n", attnmeta_backend_name(attnmeta_context_backend(ctx)),
           attnmeta_context_device_name(ctx));
    attnmeta_close(ctx);
  } else {
    printf("default backend: none: %s\n", attnmeta_open_error());
  }
  print_runtime_libs();
  return 0;
}
