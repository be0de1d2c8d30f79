// Every algorithm and backend variant registers an info record here. The bench engine asks the
// registry which variants exist for a collective, whether each can run in the current world
// (a reason when not: "unsupported", never "failed"), and prepares one for a size.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collectives/Team.h"
#include "core/Buffer.h"
#include "core/Clock.h"
#include "core/Collective.h"
#include "core/Communicator.h"

namespace cb {

// Options of the hand-written algorithms (backend "hand": schedules run by an executor).
struct ScheduleOptions {
  std::string transport;  // host executor's transport; "" = the team's default
  size_t chunkBytes = 0;  // pipelining chunk for algorithms that pipeline (0 = default)
  int ranksPerNode = 0;   // hierarchical algorithms: emulate nodes of this size (0 = hosts)
};

// Options of the GPU variants (collectives/nccl), with nccl-tests' flags.
struct GpuLaunchOptions {
  int blockingWait = 0;        // -z 1: nccl-tests loop waits and barriers after each call
  int graphLaunches = 0;       // -G N: CUDA graphs, N launches (collectives/nccl/GpuOptions.h)
  int bufferRegistration = 0;  // -R: 0 none, 1 ncclCommRegister, 2 symmetric windows
  // The largest send or receive side, in bytes, of any point the run will measure (the sweep
  // sets it): -R 2 allocates and registers its windows once at this size. 0: unknown (windows
  // then grow to the largest size seen).
  size_t largestBytes = 0;
};

// What the CLI parsed for every family, one part per family: each family's unsupported() and
// prepare() read their own part (and the deadline), nothing else. (The vendor MPI backend has no
// options.)
struct VariantOptions {
  ScheduleOptions schedule;
  GpuLaunchOptions gpu;
  double prepareTimeoutSeconds = 300;  // deadline for prepare() (NCCL init, bootstrap); -T
};

// nccl-tests moves the buffers of each call of a batch (src/common.cu, startColl: call i at
// `bytes * (i % steps)` inside buffers allocated for the largest size), so small sizes are not
// timed on one cache-resident address; steps = 1 keeps every call at the start.
struct BatchShift {
  size_t bytes = 0;
  int steps = 1;
  size_t at(int call) const { return steps > 1 ? bytes * static_cast<size_t>(call % steps) : 0; }
  bool operator==(const BatchShift&) const = default;
};

// A variant bound to a communicator, collective, dtype, op, root and count. run() executes one
// collective call on the given buffers (laid out as the in-place rules say when aliased).
class PreparedCollective {
 public:
  virtual ~PreparedCollective() = default;
  // One complete call: returns when the result is in `recv` (device work synchronized).
  virtual void run(const void* send, void* recv, Deadline d) = 0;
  // Device variants time on the device (CUDA events around the call); when this returns a
  // value after run(), the engine uses it instead of its host clock.
  virtual std::optional<double> lastDeviceSeconds() const { return std::nullopt; }
  // What the library reported about the calls made since the last note (e.g. "NCCL ran
  // Ring/LL"), for the point's message; nullopt when there is nothing to say.
  virtual std::optional<std::string> note() { return std::nullopt; }
  // Whatever a batch of `calls` needs set up before it is timed (device variants with -G: the
  // graph is captured and instantiated here). The nccl-tests loop calls it before the barrier
  // that starts the timed batch, as nccl-tests does, so no rank's clock runs while a later rank
  // still captures.
  virtual void prepareBatch(const void* send, void* recv, int calls, BatchShift shift, Deadline d) {
    (void)send, (void)recv, (void)calls, (void)shift, (void)d;
  }
  // nccl-tests' batch: `calls` calls issued back to back and waited for once, call i on the
  // buffers moved by shift.at(i). Device variants enqueue them all, wait once, and return the
  // seconds per call they timed themselves (host clock, as nccl-tests; set-up copies excluded;
  // with -G: one graph of the calls launched N times, / N). The default runs them one after
  // another and returns nullopt: the caller's clock times the batch.
  virtual std::optional<double> runBatch(const void* send, void* recv, int calls, BatchShift shift,
                                         Deadline d) {
    for (int i = 0; i < calls; ++i) {
      run(static_cast<const char*>(send) + shift.at(i), static_cast<char*>(recv) + shift.at(i), d);
    }
    return std::nullopt;
  }
};

struct VariantInfo {
  Collective coll;
  std::string name;         // "mpi", "ring", "nccl", ...; unique per collective
  std::string backend;      // "mpi" (vendor MPI), "hand" (schedule), "nccl"
  std::string description;  // one line, shown by `collbench list`
  std::string constraints;  // e.g. "power-of-two ranks"; "" if none
  std::string cost;         // alpha-beta formula, e.g. "2(n-1)a + 2(n-1)/n*S*b"
  MemoryKind memory = MemoryKind::kHost;
  // Allocator for this variant's buffers on a given rank (null: pageable host memory).
  std::function<std::unique_ptr<BufferAllocator>(const Communicator&)> allocator;
  // Why it can't run with this team or for these args (std::nullopt: it can). May be collective
  // (the default transport is found once per team): every rank asks in the same order.
  std::function<std::optional<std::string>(Team&, const CollArgs&, const VariantOptions&)>
      unsupported;
  // Binds the variant to the team and a size. Collective. Uses the team's cached transports:
  // nothing a run sets up once is set up here again.
  std::function<std::unique_ptr<PreparedCollective>(Team&, const CollArgs&, const VariantOptions&)>
      prepare;
  // Device variants whose library also moves point-to-point data (NCCL's ncclSend/ncclRecv): a
  // Transport on device buffers, for what a replay runs outside the registry's collectives
  // (all_to_allv, send/recv batches). Null for the others. Collective over the team.
  std::function<std::unique_ptr<Transport>(Team&, const VariantOptions&)> deviceTransport;
};

class Registry {
 public:
  // The registry with every variant built into this binary.
  static const Registry& builtin();
  // The engines' options hold a registry or null (the CLI passes an extended one for NCCL's plan
  // columns): that one, else builtin().
  static const Registry& orBuiltin(const Registry* r) { return r ? *r : builtin(); }
  void add(VariantInfo info);
  const std::vector<VariantInfo>& all() const { return variants_; }
  std::vector<const VariantInfo*> forCollective(Collective c) const;
  const VariantInfo* find(Collective c, std::string_view name) const;  // nullptr if none

 private:
  std::vector<VariantInfo> variants_;
};

// Registration hooks, one per family; Registry::builtin() calls each once.
void registerMpiVariants(Registry& r);
void registerScheduleVariants(Registry& r);
#if defined(COLLBENCH_HAVE_CUDA)
void registerNcclVariants(Registry& r);
// The hand-written algorithm `name` of `c` run by the CUDA executor on device buffers (what
// --transport cuda selects), or nullptr if there is no such algorithm.
const VariantInfo* deviceScheduleVariant(Collective c, std::string_view name);
#endif
// The variant that runs for `v` on `transport`: with "cuda", a hand-written algorithm's device
// twin (deviceScheduleVariant), so that `list --transport cuda` and the sweep judge and run the
// same thing; otherwise `v` itself.
const VariantInfo* variantOnTransport(const VariantInfo* v, std::string_view transport);
// Visible CUDA devices in this process (0 without a driver, a device or a GPU build).
int visibleGpuCount();

}  // namespace cb
