// Point-to-point on device buffers over NCCL, as a Transport: every send and receive of an
// exchange posted as ncclSend/ncclRecv inside one ncclGroupStart/End on the rank's stream, then
// waited for with the deadline (DeviceCallRunner: its watchdog aborts the communicator when a
// peer never comes). What a replay moves outside the registry's collectives on device memory
// (all_to_allv, batches of send/recv) goes through here, as PyTorch's ProcessGroupNCCL runs
// them. Sends and receives to the rank itself are allowed (NCCL copies them). Receives that
// reduce are not: they belong to the CUDA schedule executor.
#pragma once

#include <memory>

#include "collectives/Team.h"
#include "core/Transport.h"

namespace cb {

// Collective over the team (it acquires the team's NCCL communicator from the rank's pool).
// Throws EnvironmentError without a usable GPU.
std::unique_ptr<Transport> makeNcclPointToPoint(Team& team, double setupSeconds);

}  // namespace cb
