// The MPI world: under mpirun/srun each process is a rank. MpiWorld initializes MPI at thread
// level SINGLE (only the main thread calls MPI; see MpiWorld.cpp for why not FUNNELED) and
// finalizes it on destruction.
#pragma once

#include <memory>
#include <string>
#include <vector>

// The C API only: Open MPI's deprecated C++ bindings would otherwise be compiled into every
// file that includes this header and fail to link without libmpi_cxx.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include "core/Communicator.h"
#include "core/SharedMemory.h"

namespace cb {

// True when the environment says a launcher started us (OMPI_COMM_WORLD_SIZE, PMI_SIZE,
// PMIX_RANK, or SLURM_PROCID together with PMI variables).
bool launchedByMpiLauncher();
// MPI_Get_library_version (callable before MPI_Init), first line only.
std::string mpiLibraryVersion();

class MpiWorld {
 public:
  MpiWorld();       // MPI_Init_thread; throws MpiError
  ~MpiWorld();      // finalize()
  void finalize();  // MPI_Finalize, once
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;
  Communicator& world() { return *world_; }

 private:
  // How long the ranks may take to meet when setting up the rank board (core/RankBoard.h).
  static constexpr double kBoardSetUpSeconds = 120;
  void setUpRankBoard();

  std::unique_ptr<Communicator> world_;
  SharedHostBuffer board_;    // the host's lowest rank: the rank board's memory
  PeerMapping boardMapping_;  // the other ranks of the host: the lowest rank's board, mapped
};

// Tags on an MPI communicator. Communicator::send/recv accept tags in [0, kMpiReservedTagBase);
// the tags above are reserved so collbench's own traffic never matches a user's message:
// MpiTransport (schedules) uses kMpiScheduleTag, the mpi sendrecv variant kMpiSendRecvTag.
// MPI guarantees MPI_TAG_UB >= 32767, so every one of them is valid everywhere.
constexpr int kMpiReservedTagBase = 32760;
constexpr int kMpiSendRecvTag = 32766;
constexpr int kMpiScheduleTag = 32767;

// The MPI communicator behind a Communicator of kind kMpi (throws UsageError otherwise).
MPI_Comm mpiCommOf(const Communicator& comm);
// The MPI_COMM_WORLD rank of each rank of `comm`.
std::vector<int> worldRanksOf(MPI_Comm comm);
// Wraps a duplicate of `comm`.
std::unique_ptr<Communicator> makeMpiCommunicator(MPI_Comm comm);
// Throws MpiError("<what>: <MPI error string>") unless rc == MPI_SUCCESS.
void checkMpi(int rc, const char* what);

}  // namespace cb
