/*
 * osu_allreduce_ref: an independent re-implementation of the measurement loop of the OSU
 * micro-benchmarks' osu_allreduce (c/mpi/collective/osu_allreduce.c and c/util/osu_util.c of
 * OMB 7.x), written from reading that source, so collbench's MPI_Allreduce figures can be checked
 * against the established definition on a machine where OMB itself can't be installed
 * (docs/MEASUREMENT.md). What it keeps from OSU:
 *   - float elements, MPI_SUM, MPI_COMM_WORLD; sizes from 4 B (the first size with at least one
 *     float) doubling up to -m MAX bytes (default 1 MiB, OSU's MAX_MSG_SIZE_COLL);
 *   - per size: MPI_Barrier, then iterations + warm-up rounds of
 *       t_start = MPI_Wtime(); MPI_Allreduce(...); t_stop = MPI_Wtime(); MPI_Barrier();
 *     summing t_stop - t_start over the rounds after the first `warm-up` ones;
 *   - per rank latency = sum / iterations (us); then MPI_Reduce MIN, MAX and SUM over ranks:
 *     "Avg Latency(us)" = SUM / nranks, min and max with -f;
 *   - 1000 iterations + 100 warm-up up to 8 KiB, 100 + 10 above (-i and -x set both, as in OSU).
 * One addition, -M: every rank keeps its per-iteration times (OSU's -G graph mode keeps rank 0's,
 * omb_graph_data->data[i - skip]); rank 0 gathers them and prints two more columns: the median over
 * iterations of the per-iteration average over ranks (collbench's -a 1 --stat median), a figure
 * that a noisy machine's preempted iterations can't drag as they drag the mean, and the median of
 * rank 0's own times (collbench's -a 0 --stat median).
 * And -t: MPI_Init_thread(MPI_THREAD_FUNNELED) instead of OSU's MPI_Init, to show what that
 * level costs: Open MPI turns its internal locking on for any level above SINGLE, which is why
 * collbench asks for SINGLE (docs/MEASUREMENT.md).
 * And -B: the barrier after each round is MPI_Ibarrier completed by an MPI_Test loop (collbench's
 * Communicator::barrier, which honours a deadline) instead of MPI_Barrier.
 * Usage: mpirun -np N osu_allreduce_ref [-m [MIN:]MAX] [-i ITERS] [-x WARMUP] [-f] [-M] [-t] [-B]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
  kLargeMessage = 8192,
  kLoopSmall = 1000,
  kSkipSmall = 100,
  kLoopLarge = 100,
  kSkipLarge = 10,
};

typedef struct {
  long min_bytes, max_bytes;
  int iterations, skip, iterations_large, skip_large;
  int full;
  int median;
  int funneled;
  int nonblocking_barrier;
} Options;

static int parse_sizes(const char* text, Options* o) {
  const char* colon = strchr(text, ':');
  char* end = NULL;
  if (colon) {
    o->min_bytes = strtol(text, &end, 10);
    if (end != colon || o->min_bytes < 1) return -1;
    text = colon + 1;
  }
  o->max_bytes = strtol(text, &end, 10);
  return (*end != '\0' || o->max_bytes < 1 || o->max_bytes < o->min_bytes) ? -1 : 0;
}

static int parse_options(int argc, char** argv, Options* o) {
  int c;
  o->min_bytes = 1;
  o->max_bytes = 1L << 20;
  o->iterations = kLoopSmall;
  o->skip = kSkipSmall;
  o->iterations_large = kLoopLarge;
  o->skip_large = kSkipLarge;
  o->full = 0;
  o->median = 0;
  o->funneled = 0;
  o->nonblocking_barrier = 0;
  while ((c = getopt(argc, argv, "m:i:x:fMtBh")) != -1) {
    switch (c) {
      case 'm':
        if (parse_sizes(optarg, o)) return -1;
        break;
      case 'i':
        o->iterations = o->iterations_large = atoi(optarg);
        if (o->iterations < 1) return -1;
        break;
      case 'x':
        o->skip = o->skip_large = atoi(optarg);
        if (o->skip < 0) return -1;
        break;
      case 'f': o->full = 1; break;
      case 'M': o->median = 1; break;
      case 't': o->funneled = 1; break;
      case 'B': o->nonblocking_barrier = 1; break;
      default: return -1;
    }
  }
  return optind == argc ? 0 : -1;
}

/* The barrier after each round: MPI's, or collbench's kind (-B). */
static void round_barrier(const Options* o) {
  if (!o->nonblocking_barrier) {
    MPI_Barrier(MPI_COMM_WORLD);
    return;
  }
  MPI_Request req;
  int done = 0;
  MPI_Ibarrier(MPI_COMM_WORLD, &req);
  while (!done) MPI_Test(&req, &done, MPI_STATUS_IGNORE);
}

static int compare_doubles(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* Median of n values (sorts them). */
static double median(double* v, int n) {
  qsort(v, (size_t)n, sizeof *v, compare_doubles);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void* page_aligned(size_t bytes) {
  void* p = NULL;
  long page = sysconf(_SC_PAGESIZE);
  if (posix_memalign(&p, page > 0 ? (size_t)page : 4096, bytes)) return NULL;
  return p;
}

int main(int argc, char** argv) {
  int rank, nranks;
  Options o;
  /* As OSU: options first, then MPI (the thread level depends on them). */
  int bad_usage = parse_options(argc, argv, &o);
  if (!bad_usage && o.funneled) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  } else {
    MPI_Init(&argc, &argv);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (bad_usage) {
    if (rank == 0) {
      fprintf(stderr,
              "usage: osu_allreduce_ref [-m [MIN:]MAX] [-i ITERS] [-x WARMUP] [-f] [-M] [-t] "
              "[-B]\n");
    }
    MPI_Finalize();
    return 2;
  }
  if (nranks < 2) {
    if (rank == 0) fprintf(stderr, "This test requires at least two processes\n");
    MPI_Finalize();
    return 2;
  }
  float* sendbuf = page_aligned((size_t)o.max_bytes);
  float* recvbuf = page_aligned((size_t)o.max_bytes);
  int most = o.iterations > o.iterations_large ? o.iterations : o.iterations_large;
  double* samples = malloc(sizeof(double) * (size_t)most);
  double* gathered = malloc(sizeof(double) * (size_t)most * (size_t)nranks);
  if (!sendbuf || !recvbuf || !samples || !gathered) {
    fprintf(stderr, "rank %d: could not allocate %ld bytes\n", rank, o.max_bytes);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  /* OSU's set_buffer: the send buffer holds 1s, the receive buffer 0s (touching every page). */
  for (long i = 0; i < o.max_bytes / (long)sizeof(float); ++i) {
    sendbuf[i] = 1.0f;
    recvbuf[i] = 0.0f;
  }
  if (rank == 0) {
    printf("# OSU MPI Allreduce Latency Test (collbench's re-implementation of its loop)\n");
    printf("%-10s%18s", "# Size", "Avg Latency(us)");
    if (o.full) printf("%18s%18s%12s", "Min Latency(us)", "Max Latency(us)", "Iterations");
    if (o.median) printf("%18s%18s", "Med Avg(us)", "Med Rank0(us)");
    printf("\n");
    fflush(stdout);
  }
  int iterations = o.iterations, skip = o.skip;
  for (long size = o.min_bytes; size <= o.max_bytes; size *= 2) {
    int count = (int)(size / (long)sizeof(float));
    if (count == 0) continue;
    if (size > kLargeMessage) {
      iterations = o.iterations_large;
      skip = o.skip_large;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double timer = 0.0;
    for (int i = 0; i < iterations + skip; ++i) {
      double t_start = MPI_Wtime();
      MPI_Allreduce(sendbuf, recvbuf, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      double t_stop = MPI_Wtime();
      round_barrier(&o);
      if (i >= skip) {
        timer += t_stop - t_start;
        samples[i - skip] = (t_stop - t_start) * 1e6;
      }
    }
    double latency = timer * 1e6 / iterations;
    double min_time = 0.0, max_time = 0.0, avg_time = 0.0;
    MPI_Reduce(&latency, &min_time, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&latency, &max_time, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&latency, &avg_time, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    avg_time /= nranks;
    double median_avg = 0.0, median_rank0 = 0.0;
    if (o.median) {
      MPI_Gather(samples, iterations, MPI_DOUBLE, gathered, iterations, MPI_DOUBLE, 0,
                 MPI_COMM_WORLD);
      if (rank == 0) {
        median_rank0 = median(samples, iterations); /* sorts rank 0's copy, not `gathered` */
        for (int i = 0; i < iterations; ++i) {
          double sum = 0.0;
          for (int r = 0; r < nranks; ++r) sum += gathered[(size_t)r * iterations + i];
          samples[i] = sum / nranks;
        }
        median_avg = median(samples, iterations);
      }
    }
    if (rank == 0) {
      printf("%-10ld%18.2f", size, avg_time);
      if (o.full) printf("%18.2f%18.2f%12d", min_time, max_time, iterations);
      if (o.median) printf("%18.2f%18.2f", median_avg, median_rank0);
      printf("\n");
      fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  free(gathered);
  free(samples);
  free(sendbuf);
  free(recvbuf);
  MPI_Finalize();
  return 0;
}
