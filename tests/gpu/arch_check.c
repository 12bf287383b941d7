// SPDX-License-Identifier: Apache-2.0
/*
 * Architecture check of the CUDA backend: a module that holds no code for the
 * device must be refused at attnmeta_open with ATTNMETA_ERR_UNSUPPORTED_ARCH
 * and a message naming the device's architecture and the module's targets,
 * never fail later at a launch.
 *
 *   attnmeta_gpu_arch_check                       any module: opening either
 *       succeeds, or is refused as above because the device's architecture is
 *       not among the module's targets.
 *   attnmeta_gpu_arch_check --expect-unsupported  the module (e.g. one built
 *       with -DATTNMETA_CUDA_ARCHITECTURES=80-real, found through
 *       ATTNMETA_MODULE_DIR) must be refused as above.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_check.h"

#define NAME "attnmeta_gpu_arch_check"

/* Is `word` one of the space-separated words of `list`? */
static int has_word(const char *list, const char *word) {
  const size_t n = strlen(word);
  const char *p = list;
  while ((p = strstr(p, word)) != NULL) {
    const int starts = p == list || p[-1] == ' ';
    const int ends = p[n] == '\0' || p[n] == ' ';
    if (starts && ends) return 1;
    p += n;
  }
  return 0;
}

static void check_refusal(attnmeta_status st, const attnmeta_context *ctx, const char *msg,
                          const char *arch, const char *targets) {
  AMG_CHECK(st == ATTNMETA_ERR_UNSUPPORTED_ARCH,
            "attnmeta_open(CUDA) returned %s, expected ATTNMETA_ERR_UNSUPPORTED_ARCH (%s)",
            attnmeta_status_string(st), msg);
  AMG_CHECK(ctx == NULL, "a refused open left a context");
  AMG_CHECK(strstr(msg, arch) != NULL, "the message does not name the device's architecture %s: %s",
            arch, msg);
  AMG_CHECK(targets[0] && strstr(msg, targets) != NULL,
            "the message does not name the module's targets \"%s\": %s", targets, msg);
}

int main(int argc, char **argv) {
  const int expect_unsupported = argc > 1 && strcmp(argv[1], "--expect-unsupported") == 0;
  const char *dir = getenv("ATTNMETA_MODULE_DIR");
  const char *targets = "";
  attnmeta_context *ctx = NULL, *fallback = NULL;
  attnmeta_status st;
  int major = 0, minor = 0, in_targets;
  char arch[32], msg[1024];

  if (argc > 1 && !expect_unsupported) {
    fprintf(stderr, "usage: %s [--expect-unsupported]\n", argv[0]);
    return 2;
  }
  amg_require_device(NAME);
  AMG_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  AMG_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
  snprintf(arch, sizeof arch, "sm_%d%d", major, minor);

  st = attnmeta_backend_targets(ATTNMETA_BACKEND_CUDA, &targets);
  AMG_CHECK(st == ATTNMETA_OK, "attnmeta_backend_targets(CUDA): %s", attnmeta_status_string(st));
  in_targets = has_word(targets, arch);
  printf("%s: device 0 is %s; module (ATTNMETA_MODULE_DIR=%s) built for: %s\n", NAME, arch,
         dir && dir[0] ? dir : "unset", targets);

  st = attnmeta_open(&ctx, ATTNMETA_BACKEND_CUDA, 0);
  snprintf(msg, sizeof msg, "%s", attnmeta_open_error());
  printf("%s: attnmeta_open(CUDA) -> %s%s%s\n", NAME, attnmeta_status_string(st),
         msg[0] ? ": " : "", msg);

  if (expect_unsupported) {
    AMG_CHECK(!in_targets,
              "the module was built for %s, the device's own architecture: this check needs "
              "a module without it", arch);
    check_refusal(st, ctx, msg, arch, targets);
  } else if (st == ATTNMETA_OK) {
    /* Code for the device, or PTX the driver compiled for it. */
    AMG_CHECK(strstr(attnmeta_context_device_name(ctx), arch) != NULL,
              "device name \"%s\" does not name %s", attnmeta_context_device_name(ctx), arch);
  } else {
    AMG_CHECK(!in_targets, "the module lists %s but was refused: %s", arch, msg);
    check_refusal(st, ctx, msg, arch, targets);
  }
  attnmeta_close(ctx);

  /* Whatever the CUDA module did, AUTO still opens a backend or says why. */
  st = attnmeta_open(&fallback, ATTNMETA_BACKEND_AUTO, 0);
  AMG_CHECK(st == ATTNMETA_OK || st == ATTNMETA_ERR_UNSUPPORTED_ARCH,
            "attnmeta_open(AUTO) returned %s: %s", attnmeta_status_string(st),
            attnmeta_open_error());
  printf("%s: attnmeta_open(AUTO) -> %s (%s)\n", NAME, attnmeta_status_string(st),
         st == ATTNMETA_OK ? attnmeta_context_device_name(fallback) : attnmeta_open_error());
  attnmeta_close(fallback);
  return amg_finish(NAME);
}
