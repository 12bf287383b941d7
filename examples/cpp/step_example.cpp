// SPDX-License-Identifier: Apache-2.0
// attnmeta from C++: the same C API behind small RAII owners. Builds one
// step of the DeepSeek sparse-indexer decode metadata with decode context
// parallelism (2 ranks, this is rank 1), checks every value, and exits 0 when
// all are right.
//
//   step_example_cpp [auto|cpu|cuda|hip]    (default auto; ATTNMETA_BACKEND
//                                             overrides auto)
#include <attnmeta/attnmeta.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct ContextCloser {
  void operator()(attnmeta_context *ctx) const { attnmeta_close(ctx); }
};
using Context = std::unique_ptr<attnmeta_context, ContextCloser>;

void check(attnmeta_status status, const attnmeta_context *ctx, const char *what) {
  if (status != ATTNMETA_OK) {
    throw std::runtime_error(std::string(what) + ": " + attnmeta_status_string(status) + ": " +
                             (ctx ? attnmeta_last_error(ctx) : attnmeta_open_error()));
  }
}

Context open_context(attnmeta_backend kind) {
  attnmeta_context *raw = nullptr;
  check(attnmeta_open(&raw, kind, 0), nullptr, "attnmeta_open");
  return Context(raw);
}

// A device buffer of n elements of T, freed with its context's backend.
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer(attnmeta_context *ctx, size_t n) : ctx_(ctx), n_(n) {
    void *p = nullptr;
    check(attnmeta_device_alloc(ctx_, n * sizeof(T), &p), ctx_, "attnmeta_device_alloc");
    ptr_ = static_cast<T *>(p);
  }
  DeviceBuffer(attnmeta_context *ctx, const std::vector<T> &host) : DeviceBuffer(ctx, host.size()) {
    check(attnmeta_copy_to_device(ctx_, ptr_, host.data(), n_ * sizeof(T)), ctx_,
          "attnmeta_copy_to_device");
  }
  ~DeviceBuffer() { attnmeta_device_free(ctx_, ptr_); }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  T *get() const { return ptr_; }
  std::vector<T> to_host() const {
    std::vector<T> host(n_);
    check(attnmeta_copy_to_host(ctx_, host.data(), ptr_, n_ * sizeof(T)), ctx_,
          "attnmeta_copy_to_host");
    return host;
  }

 private:
  attnmeta_context *ctx_;
  size_t n_;
  T *ptr_ = nullptr;
};

bool expect(const char *name, const std::vector<int32_t> &got, const std::vector<int32_t> &want) {
  std::printf("%-18s", name);
  for (int32_t v : got) std::printf(" %3d", static_cast<int>(v));
  std::printf("\n");
  bool good = got == want;
  for (size_t i = 0; !good && i < got.size() && i < want.size(); ++i) {
    if (got[i] != want[i]) {
      std::fprintf(stderr, "mismatch: %s[%zu] = %d, expected %d\n", name, i,
                   static_cast<int>(got[i]), static_cast<int>(want[i]));
    }
  }
  return good;
}

attnmeta_backend parse_backend(const char *text) {
  if (!std::strcmp(text, "auto")) return ATTNMETA_BACKEND_AUTO;
  if (!std::strcmp(text, "cpu")) return ATTNMETA_BACKEND_CPU;
  if (!std::strcmp(text, "cuda")) return ATTNMETA_BACKEND_CUDA;
  if (!std::strcmp(text, "hip")) return ATTNMETA_BACKEND_HIP;
  throw std::invalid_argument(std::string("unknown backend ") + text +
                              " (expected auto, cpu, cuda or hip)");
}

int run(int argc, char **argv) {
  const attnmeta_backend kind = argc > 1 ? parse_backend(argv[1]) : ATTNMETA_BACKEND_AUTO;
  std::printf("attnmeta %s (built against header %d.%d.%d)\n", attnmeta_version_string(),
              ATTNMETA_VERSION_MAJOR, ATTNMETA_VERSION_MINOR, ATTNMETA_VERSION_PATCH);
  Context ctx = open_context(kind);
  std::printf("backend %s, device %s\n", attnmeta_backend_name(attnmeta_context_backend(ctx.get())),
              attnmeta_context_device_name(ctx.get()));

  // 3 requests with 2, 1 and 3 draft tokens, padded to 8 tokens; persistent
  // outputs of capacity 10; a block table with 3 columns in rows of 4.
  const int32_t R = 3, T = 8, C = 10, cols = 3, stride = 4;
  DeviceBuffer<int32_t> qsl(ctx.get(), std::vector<int32_t>{0, 2, 3, 6});
  DeviceBuffer<int32_t> seq_lens(ctx.get(), std::vector<int32_t>{5, 1, 4});
  DeviceBuffer<int32_t> table(ctx.get(), std::vector<int32_t>{10, 11, 12, -9,  //
                                                              20, 21, 22, -9,  //
                                                              30, 31, 32, -9});
  DeviceBuffer<int32_t> local_lens(ctx.get(), C), global_lens(ctx.get(), T);
  DeviceBuffer<int32_t> table_out(ctx.get(), static_cast<size_t>(T) * cols);
  DeviceBuffer<int32_t> indices(ctx.get(), T), per_req(ctx.get(), R);
  DeviceBuffer<int32_t> error_word(ctx.get(), std::vector<int32_t>{0});

  attnmeta_step step;
  attnmeta_step_init(&step);
  step.query_start_loc = qsl.get();
  step.num_reqs = R;
  step.num_tokens = T;
  step.capacity = C;
  step.seq_lens = seq_lens.get();
  step.block_table = table.get();
  step.block_table_cols = cols;
  step.block_table_stride = stride;
  step.dcp_world_size = 2;
  step.dcp_rank = 1;
  step.seq_lens_out = local_lens.get();
  step.global_seq_lens_out = global_lens.get();
  step.block_table_out = table_out.get();
  step.block_table_out_stride = cols;
  step.req_indices_out = indices.get();
  step.per_req_lens_out = per_req.get();
  step.error_word = error_word.get();
  check(attnmeta_build_step(ctx.get(), &step, nullptr), ctx.get(), "attnmeta_build_step");
  check(attnmeta_synchronize(ctx.get(), nullptr), ctx.get(), "attnmeta_synchronize");

  bool good = true;
  good &= expect("global_seq_lens", global_lens.to_host(), {4, 5, 1, 2, 3, 4, 0, 0});
  good &= expect("seq_lens (rank 1)", local_lens.to_host(), {2, 2, 0, 1, 1, 2, 0, 0, 0, 0});
  good &= expect("req_indices", indices.to_host(), {0, 0, 1, 2, 2, 2, 3, 4});
  good &= expect("per_req_lens", per_req.to_host(), {2, 1, 3});
  good &= expect("block_table_out", table_out.to_host(),
                 {10, 11, 12, 10, 11, 12, 20, 21, 22, 30, 31, 32,  //
                  30, 31, 32, 30, 31, 32, 0, 0, 0, 0, 0, 0});
  good &= expect("error_word", error_word.to_host(), {0});
  if (!good) {
    std::fprintf(stderr, "step_example_cpp: FAILED\n");
    return 1;
  }
  std::printf("step_example_cpp: all values as expected\n");
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "step_example_cpp: %s\n", e.what());
    return 1;
  }
}
