// RAII statements and transactions over the SQLite C API (see Sqlite.h).
#include "results/Sqlite.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <bit>
#include <chrono>
#include <thread>

#include "core/Clock.h"

namespace cb::sql {

void fail(sqlite3* db, int rc, std::string_view what) {
  const char* file = db ? sqlite3_db_filename(db, "main") : nullptr;
  const char* message = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  std::string detail = message ? message : sqlite3_errstr(rc);
  throw SqliteError(fmt::format("database '{}': {}: {}", file && *file ? file : "?", what, detail),
                    rc & 0xff, detail);
}

void exec(sqlite3* db, std::string_view sql) {
  // sqlite3_exec runs every statement of the text (migrations hold several); rows are dropped.
  std::string text(sql);
  int rc = sqlite3_exec(db, text.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) fail(db, rc, fmt::format("'{}' failed", sql));
}

std::vector<unsigned char> encodeDoubles(std::span<const double> values) {
  std::vector<unsigned char> bytes(values.size() * 8);
  for (size_t i = 0; i < values.size(); ++i) {
    uint64_t bits = std::bit_cast<uint64_t>(values[i]);
    for (int b = 0; b < 8; ++b) bytes[i * 8 + b] = static_cast<unsigned char>(bits >> (8 * b));
  }
  return bytes;
}

std::vector<double> decodeDoubles(const void* data, size_t bytes) {
  std::vector<double> values(bytes / 8);
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < values.size(); ++i) {
    uint64_t bits = 0;
    for (int b = 0; b < 8; ++b) bits |= static_cast<uint64_t>(p[i * 8 + b]) << (8 * b);
    values[i] = std::bit_cast<double>(bits);
  }
  return values;
}

Statement::Statement(sqlite3* db, std::string_view sql) : db_(db) {
  int rc = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr);
  if (rc != SQLITE_OK) fail(db, rc, fmt::format("cannot prepare '{}'", sql));
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement::Statement(Statement&& other) noexcept : db_(other.db_), stmt_(other.stmt_) {
  other.stmt_ = nullptr;
}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    db_ = other.db_;
    stmt_ = other.stmt_;
    other.stmt_ = nullptr;
  }
  return *this;
}

namespace {
void checkBind(sqlite3* db, int rc, int index) {
  if (rc != SQLITE_OK) fail(db, rc, fmt::format("cannot bind parameter {}", index));
}
}  // namespace

Statement& Statement::bind(int index, int64_t value) {
  checkBind(db_, sqlite3_bind_int64(stmt_, index, value), index);
  return *this;
}

Statement& Statement::bind(int index, double value) {
  checkBind(db_, sqlite3_bind_double(stmt_, index, value), index);
  return *this;
}

Statement& Statement::bind(int index, std::string_view text) {
  checkBind(
      db_,
      sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
      index);
  return *this;
}

Statement& Statement::bindBlob(int index, std::span<const unsigned char> bytes) {
  // A zero-length blob, not NULL: "kept, but no iterations" differs from "not kept".
  checkBind(
      db_,
      sqlite3_bind_blob64(stmt_, index, bytes.empty() ? static_cast<const void*>("") : bytes.data(),
                          bytes.size(), SQLITE_TRANSIENT),
      index);
  return *this;
}

Statement& Statement::bindNull(int index) {
  checkBind(db_, sqlite3_bind_null(stmt_, index), index);
  return *this;
}

bool Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  std::string sql = sqlite3_sql(stmt_) ? sqlite3_sql(stmt_) : "";
  sqlite3_reset(stmt_);  // so the statement can be reused after a handled error
  fail(db_, rc, fmt::format("'{}' failed", sql));
}

void Statement::run() {
  while (step()) {
  }
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool Statement::isNullAt(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

int64_t Statement::int64At(int column) const { return sqlite3_column_int64(stmt_, column); }

double Statement::doubleAt(int column) const { return sqlite3_column_double(stmt_, column); }

std::string Statement::textAt(int column) const {
  const auto* text = sqlite3_column_text(stmt_, column);
  int bytes = sqlite3_column_bytes(stmt_, column);
  return text ? std::string(reinterpret_cast<const char*>(text), bytes) : std::string();
}

std::vector<double> Statement::doublesAt(int column) const {
  const void* data = sqlite3_column_blob(stmt_, column);
  int bytes = sqlite3_column_bytes(stmt_, column);
  return data ? decodeDoubles(data, static_cast<size_t>(bytes)) : std::vector<double>();
}

void retryBusy(const std::function<void()>& attempt, double seconds) {
  Deadline deadline = Deadline::after(seconds);
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    try {
      attempt();
      return;
    } catch (const SqliteError& e) {
      if (e.code() != SQLITE_BUSY) throw;
      if (deadline.expired()) {
        throw SqliteError(
            fmt::format("{} (still locked by another process after {:g} s)", e.what(), seconds),
            e.code(), e.detail());
      }
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(100));
  }
}

Transaction::Transaction(sqlite3* db, double lockWaitSeconds)
    : db_(db), lockWaitSeconds_(lockWaitSeconds) {
  retryBusy([&] { exec(db_, "BEGIN IMMEDIATE"); }, lockWaitSeconds_);
  open_ = true;
}

Transaction::~Transaction() {
  if (open_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  // A COMMIT that returns BUSY leaves the transaction open and may simply be retried.
  retryBusy([&] { exec(db_, "COMMIT"); }, lockWaitSeconds_);
  open_ = false;
}

}  // namespace cb::sql
