#include "adapters/MetricsScrape.h"

#include <fmt/format.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "core/Error.h"

namespace cb {
namespace {

class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

using SteadyClock = std::chrono::steady_clock;

int msLeft(SteadyClock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
  return static_cast<int>(std::max<int64_t>(0, left.count()));
}

bool waitReadable(int fd, SteadyClock::time_point deadline) {
  pollfd p{fd, POLLIN, 0};
  while (true) {
    int rc = ::poll(&p, 1, msLeft(deadline));
    if (rc > 0) return true;
    if (rc == 0) return false;
    if (errno != EINTR)
      throw EnvironmentError(fmt::format("--listen: poll: {}", std::strerror(errno)));
  }
}

void sendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the client went away: nothing more to tell it
    data.remove_prefix(static_cast<size_t>(n));
  }
}

// The request line of one request ("GET /metrics HTTP/1.1"), "" if the client sent none in time.
std::string readRequestLine(int fd, SteadyClock::time_point deadline) {
  std::string request;
  char buf[1024];
  while (request.find("\r\n\r\n") == std::string::npos && request.size() < 16384) {
    if (!waitReadable(fd, deadline)) break;
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    request.append(buf, static_cast<size_t>(n));
  }
  return request.substr(0, request.find("\r\n"));
}

}  // namespace

void serveMetricsOnce(const std::string& body, int port, double timeoutS) {
  Socket listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (listener.fd() < 0)
    throw EnvironmentError(fmt::format("--listen: socket: {}", std::strerror(errno)));
  int one = 1;
  ::setsockopt(listener.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::bind(listener.fd(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listener.fd(), 8) != 0) {
    throw EnvironmentError(fmt::format("--listen {}: cannot listen on 127.0.0.1:{} ({})", port,
                                       port, std::strerror(errno)));
  }
  socklen_t len = sizeof addr;
  ::getsockname(listener.fd(), reinterpret_cast<sockaddr*>(&addr), &len);
  fmt::print(stderr, "collbench: serving http://127.0.0.1:{}/metrics for one scrape ({} s)\n",
             ntohs(addr.sin_port), timeoutS);
  std::fflush(stderr);
  const auto deadline = SteadyClock::now() + std::chrono::duration_cast<SteadyClock::duration>(
                                                 std::chrono::duration<double>(timeoutS));
  while (waitReadable(listener.fd(), deadline)) {
    Socket client(::accept4(listener.fd(), nullptr, nullptr, SOCK_CLOEXEC));
    if (client.fd() < 0) continue;
    // A client that connects and says nothing gets 5 s, not the whole deadline.
    const auto requestDeadline = std::min(deadline, SteadyClock::now() + std::chrono::seconds(5));
    const std::string line = readRequestLine(client.fd(), requestDeadline);
    const bool get = line.rfind("GET ", 0) == 0;
    const bool head = line.rfind("HEAD ", 0) == 0;
    const size_t pathStart = line.find(' ') + 1;
    const std::string path =
        line.substr(pathStart, line.find_first_of(" ?", pathStart) - pathStart);
    if ((get || head) && path == "/metrics") {
      sendAll(client.fd(),
              fmt::format("HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; "
                          "charset=utf-8\r\nContent-Length: {}\r\nConnection: "
                          "close\r\n\r\n",
                          body.size()));
      if (get) sendAll(client.fd(), body);
      return;
    }
    const std::string_view notFound = "not found: collbench serves /metrics\n";
    sendAll(client.fd(), fmt::format("HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\n"
                                     "Content-Length: {}\r\nConnection: close\r\n\r\n{}",
                                     notFound.size(), notFound));
  }
  throw TimeoutError(fmt::format("--listen: no scrape of /metrics within {} s", timeoutS));
}

}  // namespace cb
