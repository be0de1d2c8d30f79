// The models a training proxy replays: their layers, the parameter tensors of each layer (what
// data parallelism reduces), the forward FLOPs per sample (what the modelled compute costs) and
// the activation each layer hands to the next (what pipeline stages send).
//
// Presets carry the published shapes:
//   | model       | params | layers | hidden | heads    | FFN   | seq  |
//   | ResNet-50   | 25.6 M | 50     | -      | -        | -     | 224x224 image |
//   | BERT-large  | 340 M  | 24     | 1024   | 16       | 4096  | 512  |
//   | GPT-2 XL    | 1.56 B | 48     | 1600   | 25       | 6400  | 1024 |
//   | Llama-2 7B  | 6.7 B  | 32     | 4096   | 32       | 11008 | 4096 |
//   | Llama-2 13B | 13 B   | 40     | 5120   | 40       | 13824 | 4096 |
//   | Llama-2 70B | 69 B   | 80     | 8192   | 64 (8 KV)| 28672 | 4096 |
//   | GPT-3       | 175 B  | 96     | 12288  | 96       | 49152 | 2048 |
// A transformer block holds the attention projections (Q, K, V, O; K and V narrower with grouped
// KV heads) and the MLP (two matrices, three with SwiGLU as in Llama); its forward costs
// 2 * params * s + 4 * s^2 * h FLOPs per sample (the usual 24 s h^2 + 4 s^2 h when FFN = 4h).
// Backward costs twice the forward. ResNet-50 is built conv by conv (bottleneck blocks 3-4-6-3),
// FLOPs = 2 * weights * output positions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cb::proxy {

struct Layer {
  std::string name;
  std::vector<uint64_t> tensors;     // parameter counts of its tensors, in forward order
  double fwdFlopsPerSample = 0;      // forward FLOPs for one sample (all its tokens)
  uint64_t activationPerSample = 0;  // elements of the output handed to the next layer
  bool block = false;                // a transformer block (TP splits it; PP balances on it)
  uint64_t params() const;
};

struct Model {
  std::string name;
  bool transformer = false;
  int hidden = 0, heads = 0, kvHeads = 0, ffn = 0, seq = 0, vocab = 0;
  bool swiglu = false;
  uint64_t publishedParams = 0;  // the headline figure (0 for custom models)
  int totalBlocks = 0;           // blocks of the whole model
  int slicedBlocks = 0;          // blocks kept by --layers (== totalBlocks when not sliced)
  std::vector<Layer> layers;     // in forward order
  uint64_t params() const;
  double fwdFlopsPerSample() const;
  bool sliced() const { return slicedBlocks < totalBlocks; }
  // Tokens per sample (seq for transformers, 1 image for CNNs).
  int tokensPerSample() const { return transformer ? seq : 1; }
};

// Shape of a transformer, from a preset or the user.
struct TransformerShape {
  std::string name = "custom";
  int blocks = 0, hidden = 0, heads = 0, kvHeads = 0, ffn = 0, seq = 0, vocab = 0;
  bool swiglu = false;
  bool tiedHead = true;  // the output projection shares the embedding's weights
  bool learnedPositions = false;
  uint64_t publishedParams = 0;
};

std::vector<std::string> presetNames();  // "resnet50", "bert-large", ...
// A preset by name (case-insensitive; "llama2-7b", "gpt3", "gpt-3-175b"... accepted); seq 0 keeps
// the published sequence. Throws UsageError naming the presets for an unknown name.
Model presetModel(std::string_view name, int seq = 0);
Model transformerModel(const TransformerShape& s);  // throws UsageError on a bad shape
// A model from a JSON file: either a transformer shape
//   {"name": "my-13b", "blocks": 40, "hidden": 5120, "heads": 40, "ffn": 13824, "seq": 4096,
//    "vocab": 32000, "kv_heads": 40, "mlp": "swiglu" | "gelu", "tied_head": false}
// or explicit layers
//   {"name": "mlp", "layers": [{"name": "fc1", "params": 1048576, "fwd_flops": 2.1e6,
//                                "activation": 1024}, ...]}
// Throws UsageError naming the file and what is wrong.
Model modelFromJsonText(std::string_view text, std::string_view what);
Model modelFromJsonFile(const std::string& path);
// Keeps the first `blocks` blocks (CNN: the first `blocks` layers) and drops the embedding and
// head, so a model too big for the machine runs as a slice. Throws UsageError if out of range.
void sliceModel(Model& m, int blocks);

}  // namespace cb::proxy
