// Verification data: integer-valued inputs chosen so that every reduction is exact in the element
// type whatever the order of operations (sums stay inside the type's exact-integer range; products
// are +-1 or +-2; avg sums are multiples of n), so results are compared bit for bit. Each check
// round uses a new seed, hence a new pattern.
//
// One exception, floating-point avg on a rank count that is not a power of two: NCCL computes it
// as sum(x * (1/n)) with 1/n rounded to the element type (ncclDevPreMulSum), which is not exact and
// depends on the order of the sum. There the inputs are kept small enough that NCCL's rounding
// error stays below 0.5, and an element is right when it lies within that error bound of the exact
// average (see withinAvgBound): both NCCL's formula and sum-then-divide pass, a wrong integer
// does not.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "core/Collective.h"

namespace cb {

// Fills rank `rank`'s send buffer (sendCount(args, n) elements).
void fillInput(const CollArgs& args, int rank, int nranks, uint64_t seed, void* send);
// Writes what rank `rank` must hold in its receive buffer (recvCount elements). Returns false
// when the collective defines nothing there for this rank (reduce: non-root ranks).
bool expectedOutput(const CollArgs& args, int rank, int nranks, uint64_t seed, void* expected);
// Number of elements that differ bit for bit.
int64_t countWrong(DataType t, const void* got, const void* expected, size_t count);

// Element ranges of the same patterns: elements [first, first + count) of the send buffer and of
// the expected receive buffer (fillInput / expectedOutput are the whole-buffer cases).
void fillInputRange(const CollArgs& args, int rank, int nranks, uint64_t seed, size_t first,
                    size_t count, void* out);
bool expectedRange(const CollArgs& args, int rank, int nranks, uint64_t seed, size_t first,
                   size_t count, void* out);
// Number of wrong elements for this collective: bit for bit, except floating-point avg at a rank
// count that is not a power of two (within NCCL's rounding bound, see the top of this file).
int64_t countWrong(const CollArgs& args, int nranks, const void* got, const void* expected,
                   size_t count);

// Moves bytes between the host and a point's buffer: (byte offset in the buffer, host pointer,
// bytes). The engine binds them to DataBuffer::upload / download.
using UploadFn = std::function<void(size_t offset, const void* host, size_t bytes)>;
using DownloadFn = std::function<void(size_t offset, void* host, size_t bytes)>;

// Chunked forms for the engine's check rounds: host memory stays at a few chunks per thread
// whatever the buffer size (8 GiB per rank would otherwise need four 8 GiB host copies).
// Writes `bytes` of the 0xa5 poison pattern through `upload`.
void uploadPoison(const UploadFn& upload, size_t bytes);
// Writes this rank's send buffer for `seed` through `upload`.
void uploadInput(const CollArgs& args, int rank, int nranks, uint64_t seed, const UploadFn& upload);
// Downloads the receive buffer and counts wrong elements against the expected output, on
// `threads` threads (each with its own chunk buffers; `download` must be thread-safe). Returns
// -1 when the collective defines nothing there for this rank (reduce: non-root ranks).
int64_t checkOutput(const CollArgs& args, int rank, int nranks, uint64_t seed,
                    const DownloadFn& download, int threads);
// Elements per chunk of the functions above.
constexpr size_t kVerifyChunkElements = size_t{1} << 20;

}  // namespace cb
