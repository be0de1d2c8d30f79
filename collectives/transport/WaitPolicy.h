// How the host transports' ranks wait for a peer: the pause of a spin loop, and yields that stop
// when they hand the CPU to another process.
#pragma once

namespace cb {

// Tells the core this is a spin-wait (x86 PAUSE, Arm YIELD): the sibling hyperthread gets the
// pipeline and leaving the loop does not flush it. Not sched_yield: the thread keeps its CPU.
inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// A yield hands this CPU to another runnable thread. Among a world's own ranks (more ranks than
// CPUs) that is the fastest hand-off there is, but beside a CPU-bound process (a compile) it gives
// that process a whole time slice while the peer's data has long arrived, and no wake-up ends it
// (the yielder is not asleep): under one compile on a 2-core VM, 2-rank 256 KiB-1 MiB allreduce
// p10s of 4-12 ms instead of 24-115 us, in 9 runs of 10. So every yield is timed, and one that
// comes back after kSlowYieldUs stops yields in this process for kYieldPauseMs: its ranks sleep
// until woken instead.
constexpr long kSlowYieldUs = 500;
constexpr long kYieldPauseMs = 100;

// False while yields are paused.
bool yieldsAllowed();
// One sched_yield (or `yield`, for tests), timed; a slow one pauses yields.
void timedYield(void (*yield)() = nullptr);

}  // namespace cb
