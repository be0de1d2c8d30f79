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
// A transformer block holds its two norms, the attention projections (Q, K, V, O; K and V
// narrower with grouped KV heads) and the MLP (two matrices, three with SwiGLU as in Llama), with
// biases where the model has them (GPT-2, GPT-3, BERT: LayerNorm weight and bias, a bias on every
// linear; Llama: RMSNorm weight only, no biases); its forward costs 2 * matrix weights * s +
// 4 * s^2 * h FLOPs per sample (the usual 24 s h^2 + 4 s^2 h when FFN = 4h). Parameter counts are
// exact: GPT-2 XL 1,557,611,200 and BERT-large 335,141,888 (Hugging Face, BertModel with pooler),
// Llama-2 6,738,415,616 / 13,015,864,320 / 68,976,648,192, ResNet-50 25,557,032 (torchvision);
// GPT-3's "175 B" is the paper's rounded figure (the shape gives 174.6 B).
// Backward costs twice the forward. ResNet-50 is built conv by conv (bottleneck blocks 3-4-6-3),
// FLOPs = 2 * weights * output positions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cb::proxy {

// How tensor parallelism (Megatron-LM) holds a tensor: split over the t ranks (column- and
// row-parallel weights, column-parallel biases), split by vocabulary rows (VocabParallelEmbedding
// and the output layer: ceil(V / t) rows of h each), or replicated (norms, row-parallel biases,
// position embeddings).
enum class TensorSplit : uint8_t { kSplit, kVocab, kReplicated };

enum class LayerKind : uint8_t { kOther, kEmbedding, kBlock, kHead };

struct Layer {
  std::string name;
  LayerKind kind = LayerKind::kOther;
  std::vector<uint64_t> tensors;     // parameter counts of its tensors, in forward order
  std::vector<TensorSplit> split;    // per tensor (empty: every tensor kSplit)
  double fwdFlopsPerSample = 0;      // forward FLOPs for one sample (all its tokens)
  uint64_t activationPerSample = 0;  // elements of the output handed to the next layer
  bool block = false;                // a transformer block (TP splits it; PP balances on it)
  // Buffers DDP broadcasts from rank 0 before each forward (broadcast_buffers): batch-norm
  // running mean and variance (floats) and its num_batches_tracked (int64).
  uint64_t bufferFloats = 0, bufferInts = 0;
  uint64_t params() const;
  TensorSplit splitOf(size_t i) const { return i < split.size() ? split[i] : TensorSplit::kSplit; }
};

struct Model {
  std::string name;
  bool transformer = false;
  int hidden = 0, heads = 0, kvHeads = 0, ffn = 0, seq = 0, vocab = 0;
  bool swiglu = false;
  bool biases = false;            // LayerNorm with bias and biased linears (GPT-2/3, BERT)
  bool tiedHead = false;          // the output layer shares the word embedding's weight
  bool learnedPositions = false;  // a learned position embedding (GPT-2/3, BERT)
  uint64_t publishedParams = 0;   // the published figure (0 for custom models)
  bool publishedExact = false;    // the published figure is an exact count, not a rounded one
  int totalBlocks = 0;            // blocks of the whole model
  int slicedBlocks = 0;           // blocks kept by --layers (== totalBlocks when not sliced)
  std::vector<Layer> layers;      // in forward order
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
  int positions = 0;  // rows of the learned position table (0: seq)
  bool biases = false;
  int tokenTypes = 0;          // BERT's token-type embedding rows
  bool embeddingNorm = false;  // BERT: LayerNorm after the embeddings
  bool finalNorm = true;       // a norm before the head (BERT is post-LN: none)
  bool pooler = false;         // BERT's pooler (h x h + h)
  uint64_t publishedParams = 0;
  bool publishedExact = false;
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
