// Verification data: integer-valued inputs chosen so that every reduction is exact in the element
// type whatever the order of operations (sums stay inside the type's exact-integer range; products
// are +-1 or +-2; avg sums are multiples of n), so results are compared bit for bit. Each check
// round uses a new seed, hence a new pattern.
#pragma once

#include <cstdint>

#include "core/Collective.h"

namespace cb {

// Fills rank `rank`'s send buffer (sendCount(args, n) elements).
void fillInput(const CollArgs& args, int rank, int nranks, uint64_t seed, void* send);
// Writes what rank `rank` must hold in its receive buffer (recvCount elements). Returns false
// when the collective defines nothing there for this rank (reduce: non-root ranks).
bool expectedOutput(const CollArgs& args, int rank, int nranks, uint64_t seed, void* expected);
// Number of elements that differ bit for bit.
int64_t countWrong(DataType t, const void* got, const void* expected, size_t count);

}  // namespace cb
