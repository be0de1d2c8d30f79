// Thin RAII layer over the SQLite C API for the store: a prepared statement with bound
// parameters, a write transaction that retries while another process holds the lock, and the
// mapping of SQLite result codes to DatabaseError. Internal to results/.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/Error.h"

struct sqlite3;
struct sqlite3_stmt;

namespace cb::sql {

// A DatabaseError that keeps the SQLite result code, so Store::open can word the common cases
// (not SQLite, corrupt) for the user.
class SqliteError : public DatabaseError {
 public:
  SqliteError(const std::string& what, int code, std::string detail)
      : DatabaseError(what), code_(code), detail_(std::move(detail)) {}
  int code() const { return code_; }  // primary result code (SQLITE_BUSY, SQLITE_CORRUPT, ...)
  const std::string& detail() const { return detail_; }  // SQLite's own message

 private:
  int code_;
  std::string detail_;
};

// Throws SqliteError "database '<file>': <what>: <sqlite message>" for result code `rc`.
[[noreturn]] void fail(sqlite3* db, int rc, std::string_view what);

// Runs constant SQL text without parameters (PRAGMAs, DDL), possibly several statements.
// Throws SqliteError.
void exec(sqlite3* db, std::string_view sql);

// Calls `attempt` until it does not throw SQLITE_BUSY, or until `seconds` have passed (then the
// busy error propagates, worded as still locked). The connection's busy timeout already waits
// inside SQLite; this loop covers writers holding the lock longer (a large import) and the calls
// where SQLite returns BUSY without consulting the busy handler (journal mode changes).
void retryBusy(const std::function<void()>& attempt, double seconds);

// Little-endian float64 array <-> bytes, whatever the host byte order.
std::vector<unsigned char> encodeDoubles(std::span<const double> values);
std::vector<double> decodeDoubles(const void* data, size_t bytes);

class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql);  // prepares; throws DatabaseError
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are 1-based, as in SQLite.
  Statement& bind(int index, int64_t value);
  Statement& bind(int index, int value) { return bind(index, static_cast<int64_t>(value)); }
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view text);
  Statement& bindBlob(int index, std::span<const unsigned char> bytes);
  Statement& bindNull(int index);
  // Binds ?1, ?2, ... to the values, in order.
  template <class... Values>
  Statement& bindAll(const Values&... values) {
    int index = 1;
    (bind(index++, values), ...);
    return *this;
  }

  // Advances: true when a row is available, false when done. Throws DatabaseError.
  bool step();
  // Steps to completion (statements that return no rows).
  void run();
  // Ready to bind and run again.
  void reset();

  // Columns are 0-based, as in SQLite. A NULL reads as 0, "" or empty: ask isNullAt first
  // where NULL means unknown.
  bool isNullAt(int column) const;
  int64_t int64At(int column) const;
  double doubleAt(int column) const;
  std::string textAt(int column) const;
  std::vector<double> doublesAt(int column) const;  // a little-endian float64 BLOB

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
};

// BEGIN IMMEDIATE (takes the write lock up front, so the transaction never fails half-way on a
// lock upgrade); retries while another connection holds the lock, beyond the busy timeout,
// up to `lockWaitSeconds`. Rolls back on destruction unless committed.
class Transaction {
 public:
  explicit Transaction(sqlite3* db, double lockWaitSeconds = 120);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  sqlite3* db_;
  bool open_ = false;
  double lockWaitSeconds_;
};

}  // namespace cb::sql
