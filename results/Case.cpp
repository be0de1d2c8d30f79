// Case keys, CASE patterns and size filters (see Case.h).
#include "results/Case.h"

#include <fmt/format.h>

#include <charconv>

#include "core/Error.h"
#include "core/Size.h"
#include "core/Text.h"

namespace cb {

namespace {

constexpr uint64_t kNoLimit = std::numeric_limits<uint64_t>::max();

int parseInt(std::string_view text, std::string_view what) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0) {
    throw UsageError(fmt::format("{} '{}' is not a non-negative whole number", what, text));
  }
  return value;
}

std::vector<std::string_view> splitParts(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t end = text.find(sep, start);
    parts.push_back(trim(text.substr(start, end == std::string_view::npos ? end : end - start)));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

}  // namespace

CaseKey CaseKey::of(const ResultRecord& r) {
  // The key encodes an unknown nranks as 0 and no root as -1 (its text form omits root < 0).
  return CaseKey{r.collective,         r.variant,          r.dtype, r.op, r.sizeBytes, r.placement,
                 r.nranks.value_or(0), r.root.value_or(-1)};
}

std::string CaseKey::toString() const {
  std::string text = fmt::format("{}:{}:{}:{}:{}:{}:{}", collective, variant, dtype, op,
                                 compactSize(sizeBytes), placement, nranks);
  if (root >= 0) text += fmt::format(":root={}", root);
  return text;
}

CaseKey CaseKey::series() const {
  CaseKey key = *this;
  key.sizeBytes = 0;
  return key;
}

std::string CaseKey::seriesString() const {
  std::string text =
      fmt::format("{}:{}:{}:{}:*:{}:{}", collective, variant, dtype, op, placement, nranks);
  if (root >= 0) text += fmt::format(":root={}", root);
  return text;
}

std::string compactSize(uint64_t bytes) {
  static constexpr const char* kSuffixes[] = {"K", "M", "G", "T"};
  if (bytes == 0) return "0";
  int unit = -1;
  uint64_t value = bytes;
  while (unit < 3 && value % 1024 == 0) {
    value /= 1024;
    ++unit;
  }
  return unit < 0 ? std::to_string(value) : fmt::format("{}{}", value, kSuffixes[unit]);
}

std::pair<uint64_t, uint64_t> parseSizeRange(std::string_view text, std::string_view what) {
  std::string_view t = trim(text);
  if (t.empty()) throw UsageError(fmt::format("{}: empty size", what));
  auto parseEnd = [&](std::string_view s) {
    try {
      return parseSize(s);
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("{} '{}': {}", what, text, e.what()));
    }
  };
  size_t dash = t.find('-');
  if (dash == std::string_view::npos) {
    uint64_t v = parseEnd(t);
    return {v, v};
  }
  std::string_view lo = trim(t.substr(0, dash)), hi = trim(t.substr(dash + 1));
  if (lo.empty() && hi.empty()) throw UsageError(fmt::format("{} '{}': no size", what, text));
  uint64_t a = lo.empty() ? 0 : parseEnd(lo);
  uint64_t b = hi.empty() ? kNoLimit : parseEnd(hi);
  if (a > b) {
    throw UsageError(fmt::format("{} '{}': the range is empty ({} > {})", what, text, lo, hi));
  }
  return {a, b};
}

SizeFilter SizeFilter::parse(std::string_view text) {
  SizeFilter f;
  f.text_ = std::string(trim(text));
  for (const std::string& item : splitList(text)) {
    f.ranges_.push_back(parseSizeRange(item, "--sizes"));
  }
  return f;
}

bool SizeFilter::contains(uint64_t bytes) const {
  if (ranges_.empty()) return true;
  for (const auto& [lo, hi] : ranges_) {
    if (bytes >= lo && bytes <= hi) return true;
  }
  return false;
}

CasePattern CasePattern::parse(std::string_view text) {
  std::vector<std::string_view> parts = splitParts(text, ':');
  constexpr size_t kMaxParts = 8;
  if (parts.size() > kMaxParts) {
    throw UsageError(fmt::format(
        "CASE '{}' has {} parts; expected at most collective:variant:dtype:op:size:placement:"
        "nranks:root=R",
        text, parts.size()));
  }
  CasePattern p;
  auto given = [&](size_t i) { return i < parts.size() && !parts[i].empty() && parts[i] != "*"; };
  if (given(0)) p.collective = toLower(parts[0]);
  if (given(1)) p.variant = std::string(parts[1]);
  if (given(2)) p.dtype = toLower(parts[2]);
  if (given(3)) p.op = toLower(parts[3]);
  if (given(4)) p.sizes = parseSizeRange(parts[4], fmt::format("CASE '{}': size", text));
  if (given(5)) {
    std::string placement = toLower(parts[5]);
    if (placement != "out" && placement != "in") {
      throw UsageError(
          fmt::format("CASE '{}': placement '{}' is not one of out, in", text, parts[5]));
    }
    p.placement = placement;
  }
  if (given(6)) p.nranks = parseInt(parts[6], fmt::format("CASE '{}': nranks", text));
  if (given(7)) {
    std::string_view r = parts[7];
    if (r.starts_with("root=")) r.remove_prefix(5);
    p.root = parseInt(r, fmt::format("CASE '{}': root", text));
  }
  return p;
}

bool CasePattern::matches(const CaseKey& key) const {
  return (!collective || *collective == key.collective) && (!variant || *variant == key.variant) &&
         (!dtype || *dtype == key.dtype) && (!op || *op == key.op) &&
         (!sizes || (key.sizeBytes >= sizes->first && key.sizeBytes <= sizes->second)) &&
         (!placement || *placement == key.placement) && (!nranks || *nranks == key.nranks) &&
         (!root || *root == key.root);
}

}  // namespace cb
