// SPDX-License-Identifier: Apache-2.0
/* attnmeta bench: the JSON report and the GPU and CPU tables. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_bench_parts.h"

static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; ++s) {
    const unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
    else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
    else fputc(ch, f);
  }
  fputc('"', f);
}

static void json_stat(FILE *f, const char *name, attnmeta_stat s, double scale) {
  fprintf(f, "\"%s\": {\"median\": %.6g, \"min\": %.6g, \"max\": %.6g}", name, s.median * scale,
          s.min * scale, s.max * scale);
}

/* Stats by name, `sep` between them. */
typedef struct named_stat {
  const char *name;
  attnmeta_stat stat;
} named_stat;

static void json_stats(FILE *f, const char *sep, const named_stat *stats, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (i) fputs(sep, f);
    json_stat(f, stats[i].name, stats[i].stat, 1.0);
  }
}

static void json_config(FILE *f, const attnmeta_launch_config *c) {
  fprintf(f, "{\"block\": %d, \"grid\": %d, \"stage\": %d, \"vector\": %d, \"lanes\": %d}",
          c->block, c->grid, c->stage, c->vector, c->lanes);
}


static double bound_us(const run_info *ri, double bytes) {
  const double floor = ri->empty.graph_us_per_node.median;
  const double bw = ri->peak_copy.bytes_per_second.median;
  const double copy = bw > 0 ? bytes / bw * 1e6 : 0.0;
  return floor > copy ? floor : copy;
}

/* Writes the report into f, opened before the run (the caller closes it). */
int bench_write_json(FILE *f, const run_info *ri, const options *o,
                      const bench_case *cases, const int *case_ids, int ncases,
                      const variant *variants, int nvariants, result (*res)[MAX_CASES]) {
  const named_stat floors[] = {{"empty_graph_node_us", ri->empty.graph_us_per_node},
                               {"empty_launch_host_us", ri->empty.launch_host_us},
                               {"empty_launch_complete_us", ri->empty.launch_complete_us}};
  fprintf(f, "{\n  \"tool\": \"attnmeta bench\",\n  \"date\": ");
  json_string(f, ri->date);
  fprintf(f, ",\n  \"library_version\": ");
  json_string(f, attnmeta_version_string());
  fprintf(f, ",\n  \"backend\": ");
  json_string(f, ri->backend);
  fprintf(f, ",\n  \"device\": %d,\n  \"device_name\": ", o->device);
  json_string(f, ri->device_name);
  fprintf(f, ",\n  \"module_targets\": ");
  json_string(f, ri->targets);
  fprintf(f, ",\n  \"repeats\": %d,\n  \"steps_per_graph\": %d,\n  \"target_ms_per_repeat\": %g,\n",
          o->repeats, o->steps, o->target_ms);
  fprintf(f, "  \"floors\": {\n    ");
  json_stats(f, ",\n    ", floors, sizeof floors / sizeof floors[0]);
  fprintf(f, ",\n    \"empty_timed_as_graph\": %d,\n    \"copy_bytes\": %zu,\n    ", ri->empty.graph,
          ri->peak_copy.bytes);
  json_stat(f, "copy_bytes_per_s", ri->peak_copy.bytes_per_second, 1.0);
  fprintf(f, ",\n    ");
  json_stat(f, "copy_us", ri->peak_copy.us_per_copy, 1.0);
  fprintf(f, "\n  },\n  \"anchor_source\": ");
  json_string(f, ANCHOR_SOURCE);
  fprintf(f, ",\n  \"anchor_copy_bytes_per_s\": %.6g,\n  \"variants\": [\n", ANCHOR_COPY_BYTES_PER_S);
  for (int vi = 0; vi < nvariants; ++vi) {
    fprintf(f, "    {\"label\": ");
    json_string(f, variants[vi].label);
    fprintf(f, ", \"config\": ");
    json_config(f, &variants[vi].config);
    fprintf(f, ",\n     \"cases\": [\n");
    for (int k = 0; k < ncases; ++k) {
      const bench_case *c = &cases[case_ids[k]];
      const result *r = &res[vi][k];
      const anchor *a = bench_anchor_of(c->name);
      const int actual = bench_case_tokens(c);
      const double bytes = bench_case_bytes(c);
      fprintf(f, "      {\"case\": ");
      json_string(f, c->name);
      fprintf(f, ", \"label\": ");
      json_string(f, c->label);
      fprintf(f,
              ", \"num_reqs\": %d, \"actual_tokens\": %d, \"num_tokens\": %d, \"capacity\": %d, "
              "\"cols\": %d, \"bytes\": %.0f, \"input_sets\": %d, \"checked\": %d, \"ok\": %d, "
              "\"skipped\": %d",
              c->num_reqs, actual, actual + c->pad, bench_case_capacity(actual + c->pad), c->cols, bytes,
              r->nsets, r->checked, r->ok, r->skipped);
      if (r->error[0]) {
        fprintf(f, ", \"error\": ");
        json_string(f, r->error);
      }
      if (r->ok) {
        const double gpu = r->graph.us_per_step.median;
        const named_stat eager[] = {{"host_us_per_step", r->eager.host_us_per_call},
                                    {"complete_us_per_step", r->eager.complete_us_per_step},
                                    {"device_us_per_step", r->eager.device_us_per_step}};
        fprintf(f, ",\n       \"graph\": {");
        json_stat(f, "us_per_step", r->graph.us_per_step, 1.0);
        fprintf(f,
                ", \"graph_nodes\": %lld, \"kernel_nodes\": %lld, \"launches_per_step\": %.6g, "
                "\"steps_per_graph\": %d, \"replays\": %d, \"repeats\": %d, \"timed_as_graph\": %d}",
                (long long)r->graph.graph_nodes, (long long)r->graph.kernel_nodes,
                r->graph.kernel_nodes_per_step, r->graph.steps_per_graph, r->graph.replays,
                r->graph.repeats, r->graph.graph);
        fprintf(f, ",\n       \"eager\": {");
        json_stats(f, ", ", eager, sizeof eager / sizeof eager[0]);
        fprintf(f, ", \"iterations\": %d}", r->eager.iterations);
        fprintf(f, ",\n       \"same_bytes_copy\": {\"bytes\": %zu, ", r->copy.bytes);
        json_stat(f, "bytes_per_s", r->copy.bytes_per_second, 1.0);
        fprintf(f, "}");
        fprintf(f, ",\n       \"achieved_bytes_per_s\": %.6g, \"ratio_to_same_bytes_copy\": %.6g",
                gpu > 0 ? bytes / (gpu * 1e-6) : 0.0,
                gpu > 0 && r->copy.bytes_per_second.median > 0
                    ? bytes / (gpu * 1e-6) / r->copy.bytes_per_second.median
                    : 0.0);
        if (ri->is_gpu) {
          fprintf(f,
                  ",\n       \"bound_us\": %.6g, "
                  "\"target_us\": %.6g, \"ratio_to_target\": %.6g, "
                  "\"ratio_host_to_empty_launch\": %.6g",
                  bound_us(ri, bytes), 1.3 * bound_us(ri, bytes),
                  gpu / (1.3 * bound_us(ri, bytes)),
                  ri->empty.launch_host_us.median > 0
                      ? r->eager.host_us_per_call.median / ri->empty.launch_host_us.median
                      : 0.0);
        }
        if (vi == 0 && (r->cold.ok || r->cold.error[0])) {
          fprintf(f, ",\n       \"cold\": {\"ok\": %d, \"cache_bytes\": %lld", r->cold.ok,
                  (long long)r->cold.cache_bytes);
          if (r->cold.ok) {
            fprintf(f, ", ");
            json_stat(f, "us_per_step", r->cold.us_per_step, 1.0);
            fprintf(f, ", \"input_sets\": %d, \"scrub_us\": %.6g, \"ratio_to_warm\": %.6g, "
                       "\"ratio_to_target\": %.6g, \"method\": ",
                    r->cold.input_sets, r->cold.scrub_us,
                    gpu > 0 ? r->cold.us_per_step.median / gpu : 0.0,
                    ri->is_gpu ? r->cold.us_per_step.median / (1.3 * bound_us(ri, bytes)) : 0.0);
            json_string(f, r->cold.method);
            if (a && ri->is_gpu)
              fprintf(f, ", \"ratio_to_triton_gpu\": %.6g",
                      r->cold.us_per_step.median / a->triton_gpu_us);
          } else {
            fprintf(f, ", \"error\": ");
            json_string(f, r->cold.error);
          }
          fprintf(f, "}");
        }
        if (a && ri->is_gpu) {
          fprintf(f,
                  ",\n       \"anchor\": {\"floor_us\": %g, \"torch_gpu_us\": %g, "
                  "\"triton_gpu_us\": %g, \"torch_host_us\": %g, \"triton_host_us\": %g, "
                  "\"torch_launches\": %d, \"triton_launches\": %d}, \"ratio_to_triton_gpu\": "
                  "%.6g, \"ratio_to_triton_host\": %.6g",
                  a->floor_us, a->torch_gpu_us, a->triton_gpu_us, a->torch_host_us,
                  a->triton_host_us, a->torch_launches, a->triton_launches, gpu / a->triton_gpu_us,
                  r->eager.host_us_per_call.median / a->triton_host_us);
        }
      }
      fprintf(f, "}%s\n", k + 1 < ncases ? "," : "");
    }
    fprintf(f, "     ]}%s\n", vi + 1 < nvariants ? "," : "");
  }
  fprintf(f, "  ]\n}\n");
  return ferror(f) != 0;
}

/* The cold figures of the first variant, after the warm tables. */
static void print_cold_table(const run_info *ri, const bench_case *cases, const int *case_ids,
                             int ncases, const variant *variants, result (*res)[MAX_CASES]) {
  int any = 0;
  for (int k = 0; k < ncases; ++k) any |= res[0][k].cold.ok || res[0][k].cold.error[0];
  if (!any) return;
  printf("\ncold (variant %s): inputs out of the %.0f MB L2; warm = the table above\n",
         variants[0].label, (double)ri->cache_bytes / 1e6);
  printf("%-34s %8s %8s %6s %7s %7s  %s\n", "case", "warm us", "cold us", "ratio", "/target",
         "/triton", "how");
  for (int k = 0; k < ncases; ++k) {
    const bench_case *c = &cases[case_ids[k]];
    const result *r = &res[0][k];
    const anchor *a = bench_anchor_of(c->name);
    const double bytes = bench_case_bytes(c);
    char tri[16] = "-";
    if (!r->ok) continue;
    if (!r->cold.ok) {
      printf("%-34s %8.2f %8s  %s\n", c->label, r->graph.us_per_step.median, "n/a", r->cold.error);
      continue;
    }
    char target[16] = "-";
    if (a && ri->is_gpu)
      snprintf(tri, sizeof tri, "%.2f", r->cold.us_per_step.median / a->triton_gpu_us);
    if (ri->is_gpu)
      snprintf(target, sizeof target, "%.2f", r->cold.us_per_step.median / (1.3 * bound_us(ri, bytes)));
    printf("%-34s %8.2f %8.2f %6.2f %7s %7s  %s\n", c->label, r->graph.us_per_step.median,
           r->cold.us_per_step.median, r->cold.us_per_step.median / r->graph.us_per_step.median,
           target, tri, r->cold.method);
  }
}

void bench_print_gpu_table(const run_info *ri, const bench_case *cases, const int *case_ids,
                            int ncases, const variant *variants, int nvariants,
                            result (*res)[MAX_CASES]) {
  printf("\nattnmeta bench on %s (%s), library %s, %s\n", ri->backend, ri->device_name,
         attnmeta_version_string(), ri->date);
  printf("floors: empty kernel %.2f us/node in a graph, %.2f us host per eager launch; "
         "device copy %.0f GB/s (read + write, %zu-byte copies)\n",
         ri->empty.graph_us_per_node.median, ri->empty.launch_host_us.median,
         ri->peak_copy.bytes_per_second.median / 1e9, ri->peak_copy.bytes);
  printf("GPU us = device time per step, graph of 50 steps replayed (median); host us = eager "
         "issue per step;\nbound = max(empty node, bytes / copy bandwidth); /target = GPU / "
         "(1.3 x bound) (goal <= 1);\n/triton = GPU / Triton-pair anchor (goal <= 0.5); "
         "/launch = host / empty launch (goal <= 1.5)\n");
  for (int vi = 0; vi < nvariants; ++vi) {
    printf("\nvariant %s\n", variants[vi].label);
    printf("%-32s %6s %10s %8s %6s %8s %7s %8s %7s %7s %8s %7s %s\n", "case", "T", "bytes",
           "GPU us", "launch", "bound us", "/target", "triton", "/triton", "host us", "/launch",
           "GB/s", "check");
    for (int k = 0; k < ncases; ++k) {
      const bench_case *c = &cases[case_ids[k]];
      const result *r = &res[vi][k];
      const anchor *a = bench_anchor_of(c->name);
      const double bytes = bench_case_bytes(c);
      if (!r->ok) {
        printf("%-32s %6d %10.0f  %s\n", c->label, bench_case_tokens(c) + c->pad, bytes, r->error);
        continue;
      }
      const double gpu = r->graph.us_per_step.median, bound = bound_us(ri, bytes);
      char tri[16] = "-", trir[16] = "-";
      if (a) {
        snprintf(tri, sizeof tri, "%.2f", a->triton_gpu_us);
        snprintf(trir, sizeof trir, "%.2f", gpu / a->triton_gpu_us);
      }
      printf("%-32s %6d %10.0f %8.2f %6.2f %8.2f %7.2f %8s %7s %7.2f %8.2f %7.0f %s\n", c->label,
             bench_case_tokens(c) + c->pad, bytes, gpu, r->graph.kernel_nodes_per_step, bound,
             gpu / (1.3 * bound), tri, trir, r->eager.host_us_per_call.median,
             ri->empty.launch_host_us.median > 0
                 ? r->eager.host_us_per_call.median / ri->empty.launch_host_us.median
                 : 0.0,
             gpu > 0 ? bytes / (gpu * 1e-6) / 1e9 : 0.0, r->checked == 1 ? "ok" : "FAIL");
    }
  }
  print_cold_table(ri, cases, case_ids, ncases, variants, res);
}

void bench_print_cpu_table(const run_info *ri, const bench_case *cases, const int *case_ids,
                            int ncases, const variant *variants, int nvariants,
                            result (*res)[MAX_CASES]) {
  printf("\nattnmeta bench on %s (%s), library %s, %s\n", ri->backend, ri->device_name,
         attnmeta_version_string(), ri->date);
  printf("floors: empty call %.3f us; memcpy %.1f GB/s (read + write, %zu-byte copies)\n",
         ri->empty.graph_us_per_node.median, ri->peak_copy.bytes_per_second.median / 1e9,
         ri->peak_copy.bytes);
  printf("us/step = wall time per step in a loop (median); GB/s = bytes moved per second;\n"
         "memcpy = memcpy of the same bytes (read + write); %% = step / memcpy (goal >= 50 %%)\n");
  for (int vi = 0; vi < nvariants; ++vi) {
    printf("\nvariant %s\n", variants[vi].label);
    printf("%-32s %6s %10s %9s %9s %8s %9s %6s %s\n", "case", "T", "bytes", "us/step", "min",
           "GB/s", "memcpy", "%", "check");
    for (int k = 0; k < ncases; ++k) {
      const bench_case *c = &cases[case_ids[k]];
      const result *r = &res[vi][k];
      const double bytes = bench_case_bytes(c);
      if (!r->ok) {
        printf("%-32s %6d %10.0f  %s\n", c->label, bench_case_tokens(c) + c->pad, bytes, r->error);
        continue;
      }
      const double us = r->graph.us_per_step.median;
      const double bw = us > 0 ? bytes / (us * 1e-6) : 0.0;
      const double mem = r->copy.bytes_per_second.median;
      printf("%-32s %6d %10.0f %9.2f %9.2f %8.2f %9.2f %5.0f%% %s\n", c->label,
             bench_case_tokens(c) + c->pad, bytes, us, r->graph.us_per_step.min, bw / 1e9, mem / 1e9,
             mem > 0 ? 100.0 * bw / mem : 0.0, r->checked == 1 ? "ok" : "FAIL");
    }
  }
  print_cold_table(ri, cases, case_ids, ncases, variants, res);
}
