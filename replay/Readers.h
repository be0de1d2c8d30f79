// Trace readers: each turns one rank's file into a RankTrace (replay/Trace.h).
//   Chakra .et: the varint-framed protobuf stream, decoded by a small hand-written reader of the
//     published field numbers (ChakraReader.cpp says why not libprotobuf);
//   PyTorch ET JSON: schemas 1.0.1 (flat nodes), 1.0.2 and 1.1.x (record_param_comms nodes, the
//     `## process_group:init ##` node, all_to_allv split sizes);
//   Kineto JSON: NCCL kernels and their durations, matched to the nccl:* annotations (old style)
//     or read from the kernels' own collective arguments (new style).
// Any file may be gzip-compressed. A file a reader cannot use is a UsageError of one line that
// names the file and the node.
#pragma once

#include <string>
#include <string_view>

#include "replay/Trace.h"

namespace cb::replay {

// The file's bytes, gunzipped when it is gzip (zlib). UsageError when it cannot be read.
std::string readTraceBytes(const std::string& path);

// The format from the content: JSON with traceEvents (Kineto), JSON with nodes (PyTorch ET),
// anything else Chakra protobuf.
RankTrace readTrace(const std::string& path);
RankTrace parseTrace(const std::string& name, std::string_view bytes);

RankTrace readChakra(const std::string& name, std::string_view bytes);
RankTrace readPytorchEt(const std::string& name, std::string_view json);
RankTrace readKineto(const std::string& name, std::string_view json);

// Copies the recorded durations and gaps of a Kineto trace onto the ops of an ET trace of the
// same rank (the same job recorded both). The two must list the same collectives in the same
// order with the same element counts (an all_to_allv in ET is an all_to_all in Kineto); a
// UsageError names the first op that differs.
void attachDurations(RankTrace& et, const RankTrace& kineto);

}  // namespace cb::replay
