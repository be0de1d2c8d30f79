#include "training_proxies/Model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>

#include "core/Error.h"

namespace cb::proxy {

uint64_t Layer::params() const {
  return std::accumulate(tensors.begin(), tensors.end(), uint64_t{0});
}

uint64_t Model::params() const {
  uint64_t p = 0;
  for (const auto& l : layers) p += l.params();
  return p;
}

double Model::fwdFlopsPerSample() const {
  double f = 0;
  for (const auto& l : layers) f += l.fwdFlopsPerSample;
  return f;
}

namespace {

// Bounds of a model read from JSON or the command line: far beyond any published model (GPT-3:
// 96 blocks, hidden 12288, seq 2048, vocab 50257) and small enough that no product of them
// overflows the 64-bit parameter and byte counts.
constexpr int64_t kMaxDimension = 1 << 18;  // hidden, ffn, heads
constexpr int64_t kMaxBlocks = 1 << 16;     // blocks, layers
constexpr int64_t kMaxCount = 1 << 24;      // seq, vocab
// Parameters (or activation elements) of one tensor.
constexpr int64_t kMaxTensor = int64_t{1} << 40;

std::string lower(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c != '_' && c != ' ') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// ResNet-50 (He et al. 2016) for 224x224 images, one layer per convolution (batch-norm scale and
// shift counted with it) and the final fully connected layer: 25,557,032 parameters (torchvision's
// count, the "25.6 M" of the paper), about 4.1 G multiply-adds (8.2 GFLOPs) per image forward.
Model resnet50() {
  Model m;
  m.name = "resnet50";
  m.publishedParams = 25'557'032;
  m.publishedExact = true;
  auto conv = [&](std::string name, uint64_t in, uint64_t out, uint64_t k, uint64_t spatial) {
    Layer l;
    l.name = std::move(name);
    const uint64_t w = in * out * k * k;
    l.tensors = {w, 2 * out};
    l.bufferFloats = 2 * out;
    l.bufferInts = 1;
    l.fwdFlopsPerSample = 2.0 * static_cast<double>(w) * static_cast<double>(spatial * spatial);
    l.activationPerSample = out * spatial * spatial;
    m.layers.push_back(std::move(l));
  };
  conv("conv1", 3, 64, 7, 112);
  struct Stage {
    int blocks;
    uint64_t mid, out, spatial;
  };
  const Stage stages[] = {
      {3, 64, 256, 56}, {4, 128, 512, 28}, {6, 256, 1024, 14}, {3, 512, 2048, 7}};
  uint64_t in = 64;
  int s = 2;
  for (const Stage& st : stages) {
    for (int b = 0; b < st.blocks; ++b) {
      std::string p = fmt::format("conv{}_{}", s, b + 1);
      conv(p + "a", in, st.mid, 1, st.spatial);
      conv(p + "b", st.mid, st.mid, 3, st.spatial);
      conv(p + "c", st.mid, st.out, 1, st.spatial);
      if (b == 0) conv(p + "_down", in, st.out, 1, st.spatial);
      in = st.out;
    }
    ++s;
  }
  Layer fc;
  fc.name = "fc";
  fc.tensors = {2048 * 1000, 1000};
  fc.fwdFlopsPerSample = 2.0 * 2048 * 1000;
  fc.activationPerSample = 1000;
  m.layers.push_back(std::move(fc));
  for (auto& l : m.layers) l.block = true;  // every layer is a unit for PP balancing and slicing
  m.totalBlocks = m.slicedBlocks = static_cast<int>(m.layers.size());
  return m;
}

struct Preset {
  const char* name;
  TransformerShape shape;
};

// GPT-style (GPT-2, GPT-3): pre-LN LayerNorms with biases, biased linears, learned positions,
// the head tied to the word embedding.
TransformerShape gptShape(const char* name, int blocks, int hidden, int heads, int seq,
                          uint64_t published, bool exact) {
  return {.name = name,
          .blocks = blocks,
          .hidden = hidden,
          .heads = heads,
          .kvHeads = heads,
          .ffn = 4 * hidden,
          .seq = seq,
          .vocab = 50257,
          .tiedHead = true,
          .learnedPositions = true,
          .positions = seq,
          .biases = true,
          .publishedParams = published,
          .publishedExact = exact};
}

// Llama-2: RMSNorm (weight only), no biases, SwiGLU, rotary positions (no table), untied head.
TransformerShape llamaShape(const char* name, int blocks, int hidden, int heads, int kvHeads,
                            int ffn, uint64_t published) {
  return {.name = name,
          .blocks = blocks,
          .hidden = hidden,
          .heads = heads,
          .kvHeads = kvHeads,
          .ffn = ffn,
          .seq = 4096,
          .vocab = 32000,
          .swiglu = true,
          .tiedHead = false,
          .publishedParams = published,
          .publishedExact = true};
}

TransformerShape bertLarge() {
  TransformerShape s = gptShape("bert-large", 24, 1024, 16, 512, 335'141'888, true);
  s.vocab = 30522;
  s.tokenTypes = 2;
  s.embeddingNorm = true;
  s.finalNorm = false;
  s.pooler = true;
  return s;
}

const std::vector<Preset>& transformerPresets() {
  static const std::vector<Preset> k = {
      {"bert-large", bertLarge()},
      {"gpt2-xl", gptShape("gpt2-xl", 48, 1600, 25, 1024, 1'557'611'200, true)},
      {"llama2-7b", llamaShape("llama2-7b", 32, 4096, 32, 32, 11008, 6'738'415'616)},
      {"llama2-13b", llamaShape("llama2-13b", 40, 5120, 40, 40, 13824, 13'015'864'320)},
      {"llama2-70b", llamaShape("llama2-70b", 80, 8192, 64, 8, 28672, 68'976'648'192)},
      {"gpt3-175b", gptShape("gpt3-175b", 96, 12288, 96, 2048, 175'000'000'000, false)},
  };
  return k;
}

std::string canonicalName(std::string_view name) {
  std::string n = lower(name);
  if (n == "resnet-50" || n == "resnet50") return "resnet50";
  if (n == "bert-large" || n == "bertlarge" || n == "bert") return "bert-large";
  if (n == "gpt2-xl" || n == "gpt-2-xl" || n == "gpt2xl") return "gpt2-xl";
  for (const char* b : {"7b", "13b", "70b"}) {
    if (n == fmt::format("llama2-{}", b) || n == fmt::format("llama-2-{}", b) ||
        n == fmt::format("llama2{}", b)) {
      return fmt::format("llama2-{}", b);
    }
  }
  if (n == "gpt3" || n == "gpt-3" || n == "gpt3-175b" || n == "gpt-3-175b") return "gpt3-175b";
  return n;
}

}  // namespace

std::vector<std::string> presetNames() {
  std::vector<std::string> names{"resnet50"};
  for (const auto& p : transformerPresets()) names.push_back(p.name);
  return names;
}

Model transformerModel(const TransformerShape& s) {
  auto need = [&](int v, const char* what) {
    if (v < 1) throw UsageError(fmt::format("model {}: {} must be at least 1", s.name, what));
  };
  need(s.blocks, "blocks");
  need(s.hidden, "hidden");
  need(s.heads, "heads");
  need(s.ffn, "ffn");
  need(s.seq, "seq");
  // The command line's --hidden, --blocks... come here unchecked; the JSON reader checks first.
  auto most = [&](int v, int64_t hi, const char* what) {
    if (v > hi) throw UsageError(fmt::format("model {}: {} {} is above {}", s.name, what, v, hi));
  };
  most(s.blocks, kMaxBlocks, "blocks");
  most(s.hidden, kMaxDimension, "hidden");
  most(s.heads, kMaxDimension, "heads");
  most(s.ffn, kMaxDimension, "ffn");
  most(s.seq, kMaxCount, "seq");
  most(s.vocab, kMaxCount, "vocab");
  if (s.kvHeads < 0 || s.vocab < 0) {
    throw UsageError(fmt::format("model {}: kv_heads and vocab can't be negative", s.name));
  }
  if (s.hidden % s.heads != 0) {
    throw UsageError(fmt::format("model {}: hidden {} is not a multiple of heads {}", s.name,
                                 s.hidden, s.heads));
  }
  const int kv = s.kvHeads > 0 ? s.kvHeads : s.heads;
  if (s.heads % kv != 0) {
    throw UsageError(
        fmt::format("model {}: heads {} is not a multiple of kv_heads {}", s.name, s.heads, kv));
  }
  Model m;
  m.name = s.name;
  m.transformer = true;
  m.hidden = s.hidden;
  m.heads = s.heads;
  m.kvHeads = kv;
  m.ffn = s.ffn;
  m.seq = s.seq;
  m.vocab = s.vocab;
  m.swiglu = s.swiglu;
  m.biases = s.biases;
  m.tiedHead = s.tiedHead && s.vocab > 0;
  m.learnedPositions = s.learnedPositions && s.vocab > 0;
  m.publishedParams = s.publishedParams;
  m.publishedExact = s.publishedExact;
  m.totalBlocks = m.slicedBlocks = s.blocks;
  const uint64_t h = s.hidden, f = s.ffn, seq = s.seq;
  const uint64_t kvDim = h / s.heads * kv;
  const uint64_t norm = s.biases ? 2 * h : h;  // LayerNorm weight + bias, or RMSNorm weight
  using S = TensorSplit;
  auto add = [](Layer& l, uint64_t n, S split) {
    l.tensors.push_back(n);
    l.split.push_back(split);
  };
  if (s.vocab > 0) {
    Layer emb;
    emb.name = "embedding";
    emb.kind = LayerKind::kEmbedding;
    add(emb, static_cast<uint64_t>(s.vocab) * h, S::kVocab);
    if (s.learnedPositions) {
      add(emb, static_cast<uint64_t>(std::max(s.positions, s.seq)) * h, S::kReplicated);
    }
    if (s.tokenTypes > 0) add(emb, static_cast<uint64_t>(s.tokenTypes) * h, S::kReplicated);
    if (s.embeddingNorm) add(emb, norm, S::kReplicated);
    emb.activationPerSample = seq * h;
    m.layers.push_back(std::move(emb));
  }
  for (int b = 0; b < s.blocks; ++b) {
    Layer l;
    l.name = fmt::format("block{}", b);
    l.kind = LayerKind::kBlock;
    l.block = true;
    // Megatron: Q, K, V and the MLP's first matrices are column-parallel (their biases split
    // too), O and the MLP's last matrix row-parallel (their biases added after the all-reduce,
    // replicated); norms replicated.
    add(l, norm, S::kReplicated);
    add(l, h * h, S::kSplit);
    add(l, h * kvDim, S::kSplit);
    add(l, h * kvDim, S::kSplit);
    if (s.biases) add(l, h + 2 * kvDim, S::kSplit);
    add(l, h * h, S::kSplit);
    if (s.biases) add(l, h, S::kReplicated);
    add(l, norm, S::kReplicated);
    add(l, h * f, S::kSplit);
    if (s.biases) add(l, f, S::kSplit);
    if (s.swiglu) add(l, h * f, S::kSplit);
    add(l, f * h, S::kSplit);
    if (s.biases) add(l, h, S::kReplicated);
    const double weights =
        static_cast<double>(2 * h * h + 2 * h * kvDim + (s.swiglu ? 3 : 2) * h * f);
    l.fwdFlopsPerSample =
        2.0 * weights * static_cast<double>(seq) +
        4.0 * static_cast<double>(seq) * static_cast<double>(seq) * static_cast<double>(h);
    l.activationPerSample = seq * h;
    m.layers.push_back(std::move(l));
  }
  if (s.vocab > 0) {
    Layer head;
    head.name = "head";
    head.kind = LayerKind::kHead;
    if (s.finalNorm) add(head, norm, S::kReplicated);
    if (s.pooler) add(head, h * h + h, S::kReplicated);
    // A tied head holds no weight of its own on a single stage (the embedding's is reused); the
    // proxy adds the copy a pipeline's last stage holds (Megatron's shared embedding weight).
    if (!s.tiedHead) add(head, static_cast<uint64_t>(s.vocab) * h, S::kVocab);
    head.fwdFlopsPerSample = 2.0 * static_cast<double>(seq) * static_cast<double>(h) * s.vocab;
    head.activationPerSample = seq * static_cast<uint64_t>(s.vocab);
    m.layers.push_back(std::move(head));
  }
  return m;
}

Model presetModel(std::string_view name, int seq) {
  std::string n = canonicalName(name);
  if (n == "resnet50") {
    if (seq > 0) throw UsageError("--seq does not apply to resnet50 (224x224 images)");
    return resnet50();
  }
  for (const auto& p : transformerPresets()) {
    if (n == p.name) {
      TransformerShape s = p.shape;
      if (seq > 0) s.seq = seq;
      return transformerModel(s);
    }
  }
  std::string list;
  for (const auto& p : presetNames()) list += (list.empty() ? "" : ", ") + p;
  throw UsageError(
      fmt::format("unknown model '{}' (presets: {}; or custom, --model-json)", name, list));
}

namespace {

// A whole number in [lo, hi] at key (a JSON integer; 8.0 and "8" are refused, not converted).
int64_t wholeNumber(const nlohmann::json& v, std::string_view key, int64_t lo, int64_t hi,
                    std::string_view what) {
  bool whole = v.is_number_integer() || v.is_number_unsigned();
  if (!whole || (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(hi)) ||
      (v.is_number_integer() && (v.get<int64_t>() < lo || v.get<int64_t>() > hi))) {
    throw UsageError(fmt::format("{}: \"{}\" must be a whole number in {}..{}, not {}", what, key,
                                 lo, hi, v.dump()));
  }
  return v.get<int64_t>();
}

int64_t field(const nlohmann::json& j, std::string_view key, int64_t lo, int64_t hi,
              std::string_view what, std::optional<int64_t> fallback = std::nullopt) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    if (fallback) return *fallback;
    throw UsageError(fmt::format("{}: \"{}\" is missing", what, key));
  }
  return wholeNumber(*it, key, lo, hi, what);
}

}  // namespace

Model modelFromJsonText(std::string_view text, std::string_view what) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(fmt::format("{}: not valid JSON ({})", what, e.what()));
  }
  if (!j.is_object()) throw UsageError(fmt::format("{}: expected a JSON object", what));
  try {
    std::string name = j.value("name", std::string("custom"));
    if (j.contains("layers")) {
      if (!j["layers"].is_array()) {
        throw UsageError(fmt::format("{}: \"layers\" must be a list of layers", what));
      }
      Model m;
      m.name = name;
      for (const auto& jl : j["layers"]) {
        if (!jl.is_object()) throw UsageError(fmt::format("{}: a layer must be an object", what));
        Layer l;
        l.name = jl.value("name", fmt::format("layer{}", m.layers.size()));
        if (jl.contains("tensors")) {
          if (!jl["tensors"].is_array() || jl["tensors"].empty()) {
            throw UsageError(
                fmt::format("{}: layer {}: \"tensors\" must be a non-empty list", what, l.name));
          }
          for (const auto& t : jl["tensors"]) {
            l.tensors.push_back(
                static_cast<uint64_t>(wholeNumber(t, "tensors", 1, kMaxTensor, what)));
          }
        } else {
          l.tensors = {static_cast<uint64_t>(field(jl, "params", 1, kMaxTensor, what))};
        }
        if (auto f = jl.find("fwd_flops"); f != jl.end()) {
          if (!f->is_number() || !std::isfinite(f->get<double>()) || f->get<double>() < 0 ||
              f->get<double>() > 1e18) {
            throw UsageError(fmt::format("{}: \"fwd_flops\" must be a number in 0..1e18, not {}",
                                         what, f->dump()));
          }
          l.fwdFlopsPerSample = f->get<double>();
        }
        l.activationPerSample =
            static_cast<uint64_t>(field(jl, "activation", 0, kMaxTensor, what, 0));
        l.block = true;
        l.split.assign(l.tensors.size(), TensorSplit::kReplicated);
        m.layers.push_back(std::move(l));
      }
      if (m.layers.empty()) throw UsageError(fmt::format("{}: \"layers\" is empty", what));
      if (m.layers.size() > static_cast<size_t>(kMaxBlocks)) {
        throw UsageError(fmt::format("{}: more than {} layers", what, kMaxBlocks));
      }
      m.totalBlocks = m.slicedBlocks = static_cast<int>(m.layers.size());
      return m;
    }
    TransformerShape s;
    s.name = name;
    s.blocks = static_cast<int>(field(j, "blocks", 1, kMaxBlocks, what));
    s.hidden = static_cast<int>(field(j, "hidden", 1, kMaxDimension, what));
    s.heads = static_cast<int>(field(j, "heads", 1, kMaxDimension, what));
    s.kvHeads = static_cast<int>(field(j, "kv_heads", 1, kMaxDimension, what, 0));
    s.ffn = static_cast<int>(field(j, "ffn", 1, kMaxDimension, what, 4 * int64_t{s.hidden}));
    s.seq = static_cast<int>(field(j, "seq", 1, kMaxCount, what));
    s.vocab = static_cast<int>(field(j, "vocab", 0, kMaxCount, what, 0));
    std::string mlp = j.value("mlp", std::string("gelu"));
    if (mlp != "gelu" && mlp != "swiglu") {
      throw UsageError(fmt::format("{}: mlp must be gelu or swiglu, not '{}'", what, mlp));
    }
    s.swiglu = mlp == "swiglu";
    s.tiedHead = j.value("tied_head", true);
    s.biases = j.value("biases", false);
    s.learnedPositions = j.value("learned_positions", false);
    return transformerModel(s);
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(fmt::format("{}: {}", what, e.what()));
  }
}

Model modelFromJsonFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw UsageError(fmt::format("--model-json {}: is a directory, not a JSON file", path));
  }
  std::ifstream f(path);
  if (!f) throw UsageError(fmt::format("--model-json {}: cannot read the file", path));
  std::string text;
  char chunk[65536];
  // A model is a few lines; a larger file is not one (and /dev/zero would never end).
  while (f.read(chunk, sizeof chunk) || f.gcount() > 0) {
    text.append(chunk, static_cast<size_t>(f.gcount()));
    if (text.size() > (16u << 20)) {
      throw UsageError(fmt::format("--model-json {}: larger than 16 MiB, not a model", path));
    }
  }
  return modelFromJsonText(text, path);
}

void sliceModel(Model& m, int blocks) {
  if (blocks < 1 || blocks > m.totalBlocks) {
    throw UsageError(
        fmt::format("--layers {} is out of range for {} (1..{})", blocks, m.name, m.totalBlocks));
  }
  if (blocks == m.totalBlocks) return;
  std::vector<Layer> kept;
  for (auto& l : m.layers) {
    if (l.block && static_cast<int>(kept.size()) < blocks) kept.push_back(std::move(l));
  }
  m.layers = std::move(kept);
  m.slicedBlocks = blocks;
  m.tiedHead = false;  // no embedding, no head: nothing to tie
  m.learnedPositions = false;
}

}  // namespace cb::proxy
