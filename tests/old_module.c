/*
 * A backend module as built before the top-k operation was appended to the
 * backend table: ABI 2, a table of AM_BACKEND_TABLE_MIN_SIZE bytes (or, with
 * OLD_MODULE_TOO_SHORT, shorter still). Its launch_topk slot holds a
 * function that aborts, so a dispatcher that reads past table_size fails
 * the test loudly. It claims one device and launches nothing.
 */
#include <stdio.h>
#include <stdlib.h>

#include "am_backend.h"
#include "attnmeta/attnmeta.h"

static int old_device_count(int *count, char *msg, size_t msg_size) {
  (void)msg;
  (void)msg_size;
  *count = 1;
  return ATTNMETA_OK;
}

static int old_open(int device, void **state, char *name, size_t name_size, char *msg,
                    size_t msg_size) {
  (void)device;
  (void)msg;
  (void)msg_size;
  *state = NULL;
  snprintf(name, name_size, "an old module's device");
  return ATTNMETA_OK;
}

static void old_close(void *state) { (void)state; }

static int old_processor_count(void *state) {
  (void)state;
  return 1;
}

static int old_unsupported(char *msg, size_t msg_size) {
  snprintf(msg, msg_size, "the old test module does nothing");
  return ATTNMETA_ERR_NOT_SUPPORTED;
}

static int old_launch_step(void *state, const am_step_params *params, const am_launch_shape *shape,
                           void *stream, char *msg, size_t msg_size) {
  (void)state;
  (void)params;
  (void)shape;
  (void)stream;
  return old_unsupported(msg, msg_size);
}

static int old_launch_topk(void *state, const am_topk_params *params, const am_launch_shape *shape,
                           void *stream, char *msg, size_t msg_size) {
  (void)state;
  (void)params;
  (void)shape;
  (void)stream;
  (void)msg;
  (void)msg_size;
  abort(); /* past the table this module declares: never to be called */
}

static am_backend_table old_table;

__attribute__((visibility("default"))) const am_backend_table *attnmeta_backend_entry(void) {
  old_table.abi_version = AM_BACKEND_ABI;
#ifdef OLD_MODULE_TOO_SHORT
  old_table.table_size = (uint32_t)AM_BACKEND_TABLE_MIN_SIZE - (uint32_t)sizeof(void *);
#else
  old_table.table_size = (uint32_t)AM_BACKEND_TABLE_MIN_SIZE;
#endif
  old_table.name = "hip";
  old_table.targets = "none";
  old_table.device_count = old_device_count;
  old_table.open = old_open;
  old_table.close = old_close;
  old_table.launch_step = old_launch_step;
  old_table.processor_count = old_processor_count;
  old_table.launch_topk = old_launch_topk;
  return &old_table;
}
