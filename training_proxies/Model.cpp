#include "training_proxies/Model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <numeric>

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

std::string lower(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c != '_' && c != ' ') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// ResNet-50 (He et al. 2016) for 224x224 images, one layer per convolution (batch-norm scale and
// shift counted with it) and the final fully connected layer: 25.6 M parameters, about 4.1 G
// multiply-adds (8.2 GFLOPs) per image forward.
Model resnet50() {
  Model m;
  m.name = "resnet50";
  m.publishedParams = 25'600'000;
  auto conv = [&](std::string name, uint64_t in, uint64_t out, uint64_t k, uint64_t spatial) {
    Layer l;
    l.name = std::move(name);
    const uint64_t w = in * out * k * k;
    l.tensors = {w, 2 * out};
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

TransformerShape shape(const char* name, int blocks, int hidden, int heads, int kvHeads, int ffn,
                       int seq, int vocab, bool swiglu, bool tied, bool learnedPos,
                       uint64_t published) {
  TransformerShape s;
  s.name = name;
  s.blocks = blocks;
  s.hidden = hidden;
  s.heads = heads;
  s.kvHeads = kvHeads;
  s.ffn = ffn;
  s.seq = seq;
  s.vocab = vocab;
  s.swiglu = swiglu;
  s.tiedHead = tied;
  s.learnedPositions = learnedPos;
  s.publishedParams = published;
  return s;
}

const std::vector<Preset>& transformerPresets() {
  static const std::vector<Preset> k = {
      {"bert-large",
       shape("bert-large", 24, 1024, 16, 16, 4096, 512, 30522, false, true, true, 340'000'000)},
      {"gpt2-xl",
       shape("gpt2-xl", 48, 1600, 25, 25, 6400, 1024, 50257, false, true, true, 1'560'000'000)},
      {"llama2-7b",
       shape("llama2-7b", 32, 4096, 32, 32, 11008, 4096, 32000, true, false, false, 6'700'000'000)},
      {"llama2-13b", shape("llama2-13b", 40, 5120, 40, 40, 13824, 4096, 32000, true, false, false,
                           13'000'000'000)},
      {"llama2-70b", shape("llama2-70b", 80, 8192, 64, 8, 28672, 4096, 32000, true, false, false,
                           69'000'000'000)},
      {"gpt3-175b", shape("gpt3-175b", 96, 12288, 96, 96, 49152, 2048, 50257, false, true, true,
                          175'000'000'000)},
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
  m.publishedParams = s.publishedParams;
  m.totalBlocks = m.slicedBlocks = s.blocks;
  const uint64_t h = s.hidden, f = s.ffn, seq = s.seq;
  const uint64_t kvDim = h / s.heads * kv;
  if (s.vocab > 0) {
    Layer emb;
    emb.name = "embedding";
    emb.tensors = {static_cast<uint64_t>(s.vocab) * h};
    if (s.learnedPositions) emb.tensors.push_back(seq * h);
    emb.activationPerSample = seq * h;
    m.layers.push_back(std::move(emb));
  }
  for (int b = 0; b < s.blocks; ++b) {
    Layer l;
    l.name = fmt::format("block{}", b);
    l.block = true;
    // attention: Q, K, V, O; MLP: up (and gate with SwiGLU), down; two norms.
    l.tensors = {h * h, h * kvDim, h * kvDim, h * h, h * f};
    if (s.swiglu) l.tensors.push_back(h * f);
    l.tensors.push_back(f * h);
    l.tensors.push_back(2 * h);
    double weights = 0;
    for (size_t i = 0; i + 1 < l.tensors.size(); ++i) weights += static_cast<double>(l.tensors[i]);
    l.fwdFlopsPerSample =
        2.0 * weights * static_cast<double>(seq) +
        4.0 * static_cast<double>(seq) * static_cast<double>(seq) * static_cast<double>(h);
    l.activationPerSample = seq * h;
    m.layers.push_back(std::move(l));
  }
  if (s.vocab > 0) {
    Layer head;
    head.name = "head";
    head.tensors = {h};  // final norm
    if (!s.tiedHead) head.tensors.push_back(static_cast<uint64_t>(s.vocab) * h);
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
    if (j.contains("layers") && j["layers"].is_array()) {
      Model m;
      m.name = name;
      for (const auto& jl : j["layers"]) {
        Layer l;
        l.name = jl.value("name", fmt::format("layer{}", m.layers.size()));
        if (jl.contains("tensors")) {
          l.tensors = jl["tensors"].get<std::vector<uint64_t>>();
        } else {
          l.tensors = {jl.at("params").get<uint64_t>()};
        }
        l.fwdFlopsPerSample = jl.value("fwd_flops", 0.0);
        l.activationPerSample = jl.value("activation", uint64_t{0});
        l.block = true;
        if (l.fwdFlopsPerSample < 0) throw UsageError(fmt::format("{}: negative fwd_flops", what));
        m.layers.push_back(std::move(l));
      }
      if (m.layers.empty()) throw UsageError(fmt::format("{}: \"layers\" is empty", what));
      m.totalBlocks = m.slicedBlocks = static_cast<int>(m.layers.size());
      return m;
    }
    TransformerShape s;
    s.name = name;
    s.blocks = j.at("blocks").get<int>();
    s.hidden = j.at("hidden").get<int>();
    s.heads = j.at("heads").get<int>();
    s.kvHeads = j.value("kv_heads", 0);
    s.ffn = j.value("ffn", 4 * s.hidden);
    s.seq = j.at("seq").get<int>();
    s.vocab = j.value("vocab", 0);
    std::string mlp = j.value("mlp", std::string("gelu"));
    if (mlp != "gelu" && mlp != "swiglu") {
      throw UsageError(fmt::format("{}: mlp must be gelu or swiglu, not '{}'", what, mlp));
    }
    s.swiglu = mlp == "swiglu";
    s.tiedHead = j.value("tied_head", true);
    return transformerModel(s);
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(fmt::format("{}: {}", what, e.what()));
  }
}

Model modelFromJsonFile(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw UsageError(fmt::format("cannot read model file {}", path));
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
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
}

}  // namespace cb::proxy
