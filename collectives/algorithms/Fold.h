// The fold that lets the power-of-two algorithms (recursive doubling, recursive halving) run on
// any n, as MPICH does (Thakur, Rabenseifner & Gropp 2005). With p the largest power of two <= n
// and rem = n - p, the first 2*rem ranks pair up: each odd one hands its data to the even one
// below it (the host) and sits out; the p remaining ranks ("new ranks" 0..p-1) run the
// power-of-two algorithm; the hosts send the result back. New rank q stands for the consecutive
// original ranks [first(q), first(q+1)), which keeps block ranges contiguous in allgather and
// reduce-scatter. Costs two extra rounds, so the algorithms are at their best on powers of two.
#pragma once

#include <vector>

namespace cb {

struct Fold {
  int n = 1;
  int p = 1;    // largest power of two <= n
  int rem = 0;  // n - p: the number of folded pairs

  explicit Fold(int nranks) : n(nranks) {
    while (p * 2 <= n) p *= 2;
    rem = n - p;
  }
  // Odd rank among the first 2*rem: gives its data to rank - 1, then waits for the result.
  bool extra(int rank) const { return rank < 2 * rem && rank % 2 == 1; }
  // Even rank among the first 2*rem: takes rank + 1's data and sends it the result at the end.
  bool host(int rank) const { return rank < 2 * rem && rank % 2 == 0; }
  // Rank inside the power-of-two group; -1 for extra ranks.
  int newRank(int rank) const {
    if (rank < 2 * rem) return rank % 2 ? -1 : rank / 2;
    return rank - rem;
  }
  // First original rank new rank q stands for (also its real rank); first(p) == n.
  int first(int q) const { return q < rem ? 2 * q : q + rem; }
  int realRank(int q) const { return first(q); }
};

// One round of recursive halving as new rank q sees it: it exchanges with new rank q ^ mask,
// keeps the half [keepLo, keepHi) of its window of new ranks that holds q and gives the other
// half [giveLo, giveHi).
struct HalvingRound {
  int mask, peer;
  int keepLo, keepHi, giveLo, giveHi;
};
// The rounds of new rank q among p (a power of two), mask p/2 down to 1: the window halves from
// [0, p) to [q, q + 1).
inline std::vector<HalvingRound> halvingRounds(int q, int p) {
  std::vector<HalvingRound> rounds;
  int lo = 0, hi = p;
  for (int mask = p / 2; mask >= 1; mask /= 2) {
    const int mid = lo + mask;
    const bool lower = q < mid;
    HalvingRound r{
        mask, q ^ mask, lower ? lo : mid, lower ? mid : hi, lower ? mid : lo, lower ? hi : mid};
    rounds.push_back(r);
    lo = r.keepLo;
    hi = r.keepHi;
  }
  return rounds;
}

}  // namespace cb
