// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "runtime/wire.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace dist_train {
namespace {

int MillisLeft(Deadline deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                  deadline - Clock::now())
                  .count();
  return left < 0 ? 0 : static_cast<int>(std::min<int64_t>(left, 1 << 30));
}

Status WaitFor(int fd, short events, Deadline deadline,
               const std::string& what) {
  for (;;) {
    pollfd p{fd, events, 0};
    int n = poll(&p, 1, MillisLeft(deadline));
    if (n > 0) return Status::OK();
    if (n == 0) return Status::Timeout("timed out " + what);
    if (errno != EINTR)
      return Status::IOError("poll: " + std::string(strerror(errno)));
  }
}

void Tune(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  fcntl(fd, F_SETFD, FD_CLOEXEC);
}

}  // namespace

Deadline DeadlineIn(double seconds) {
  seconds = std::min(seconds, kMaxWaitSeconds);
  return Clock::now() +
         std::chrono::microseconds(static_cast<int64_t>(seconds * 1e6));
}

Conn::~Conn() { Close(); }
Conn::Conn(Conn&& o) noexcept
    : fd_(o.fd_), peer_(std::move(o.peer_)), lost_(o.lost_) {
  o.fd_ = -1;
}
Conn& Conn::operator=(Conn&& o) noexcept {
  if (this != &o) {
    Close();
    fd_ = o.fd_, peer_ = std::move(o.peer_), lost_ = o.lost_, o.fd_ = -1;
  }
  return *this;
}

void Conn::WatchForLoss() {
  int on = 1, idle = kLossIdleSeconds, probe = kLossProbeSeconds,
      probes = kLossProbes;
  unsigned int user_ms = kLossSeconds * 1000u;
  setsockopt(fd_, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
  setsockopt(fd_, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
  setsockopt(fd_, IPPROTO_TCP, TCP_KEEPINTVL, &probe, sizeof(probe));
  setsockopt(fd_, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof(probes));
  setsockopt(fd_, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_ms, sizeof(user_ms));
}

Status Conn::Gone(const char* call, int err) {
  if (err == ETIMEDOUT || err == EHOSTUNREACH || err == ENETUNREACH) {
    lost_ = true;
    return Status::Unavailable(peer_ +
                               " stopped answering: its machine or "
                               "its network is gone (" +
                               call + ": " + strerror(err) + ")");
  }
  return Status::Unavailable(peer_ + " is gone (" + call + ": " +
                             strerror(err) + ")");
}
void Conn::Close() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

Status Conn::SendAll(const void* data, size_t len, Deadline deadline) {
  const char* p = static_cast<const char*>(data);
  while (len > 0) {
    ssize_t n = send(fd_, p, len, MSG_NOSIGNAL);
    if (n > 0) {
      p += n, len -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      DT_RETURN_IF_ERROR(
          WaitFor(fd_, POLLOUT, deadline, "sending to " + peer_));
      continue;
    }
    return Gone("send", errno);
  }
  return Status::OK();
}

Status Conn::RecvAll(void* data, size_t len, Deadline deadline) {
  char* p = static_cast<char*>(data);
  while (len > 0) {
    ssize_t n = recv(fd_, p, len, 0);
    if (n > 0) {
      p += n, len -= static_cast<size_t>(n);
      continue;
    }
    if (n == 0) return Status::Unavailable(peer_ + " closed the connection");
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      DT_RETURN_IF_ERROR(
          WaitFor(fd_, POLLIN, deadline, "waiting for " + peer_));
      continue;
    }
    return Gone("recv", errno);
  }
  return Status::OK();
}

Status Conn::SendFrame(FrameType type, const std::string& payload,
                       Deadline deadline) {
  std::string frame;
  PutU32(&frame, static_cast<uint32_t>(payload.size() + 1));
  frame += static_cast<char>(type);
  frame += payload;
  return SendAll(frame.data(), frame.size(), deadline);
}

Status Conn::RecvFrame(FrameType* type, std::string* payload, Deadline deadline,
                       size_t max_len) {
  unsigned char head[5];
  DT_RETURN_IF_ERROR(RecvAll(head, sizeof(head), deadline));
  uint32_t len = (uint32_t{head[0]} << 24) | (uint32_t{head[1]} << 16) |
                 (uint32_t{head[2]} << 8) | head[3];
  if (len == 0 || len - 1 > max_len) {
    return Status::InvalidArgument(peer_ + " sent a frame of " +
                                   std::to_string(len) + " bytes (limit " +
                                   std::to_string(max_len) + ")");
  }
  *type = static_cast<FrameType>(head[4]);
  payload->resize(len - 1);
  return RecvAll(payload->data(), payload->size(), deadline);
}

Status Listen(int port, int* fd, int* bound_port, const std::string& addr) {
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return Status::IOError(std::string("socket: ") + strerror(errno));
  int one = 1;
  setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (!addr.empty() && inet_pton(AF_INET, addr.c_str(), &a.sin_addr) != 1) {
    close(s);
    return Status::InvalidArgument("cannot listen on '" + addr +
                                   "': not an IPv4 address");
  }
  if (bind(s, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      listen(s, 1024) != 0) {
    int err = errno;
    close(s);
    if (err == EADDRINUSE)
      return Status::Unavailable("port " + std::to_string(port) + " is in use");
    if (err == EADDRNOTAVAIL)  // as ConnectOnce says it
      return Status::InvalidArgument("cannot use local address '" + addr +
                                     "': " + strerror(err));
    return Status::IOError("listen on " + (addr.empty() ? "" : addr + " ") +
                           "port " + std::to_string(port) + ": " +
                           strerror(err));
  }
  socklen_t len = sizeof(a);
  getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  fcntl(s, F_SETFL, fcntl(s, F_GETFL) | O_NONBLOCK);
  *fd = s;
  *bound_port = ntohs(a.sin_port);
  return Status::OK();
}

Status Accept(int listen_fd, Deadline deadline, Conn* out) {
  for (;;) {
    sockaddr_in a{};
    socklen_t len = sizeof(a);
    int c =
        accept4(listen_fd, reinterpret_cast<sockaddr*>(&a), &len, SOCK_CLOEXEC);
    if (c >= 0) {
      Tune(c);
      char ip[INET_ADDRSTRLEN] = "?";
      inet_ntop(AF_INET, &a.sin_addr, ip, sizeof(ip));
      *out = Conn(c, std::string(ip) + ":" + std::to_string(ntohs(a.sin_port)));
      return Status::OK();
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK)
      return Status::IOError(std::string("accept: ") + strerror(errno));
    DT_RETURN_IF_ERROR(
        WaitFor(listen_fd, POLLIN, deadline, "waiting for peers to connect"));
  }
}

Status ConnectOnce(const std::string& host, int port, double attempt_timeout,
                   Conn* out, const std::string& local_addr) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  int rc =
      getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
  if (rc != 0) {
    std::string msg = "cannot resolve '" + host + "': " + gai_strerror(rc);
    // A temporary DNS failure is worth another try; a bad name is not.
    return rc == EAI_AGAIN ? Status::Unavailable(msg)
                           : Status::InvalidArgument(msg);
  }
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  std::string peer = host + ":" + std::to_string(port);
  Conn conn(s, peer);
  if (!local_addr.empty()) {
    sockaddr_in me{};
    me.sin_family = AF_INET;
    if (inet_pton(AF_INET, local_addr.c_str(), &me.sin_addr) != 1 ||
        bind(s, reinterpret_cast<sockaddr*>(&me), sizeof(me)) != 0) {
      freeaddrinfo(res);
      return Status::InvalidArgument("cannot use local address '" + local_addr +
                                     "': " + strerror(errno));
    }
  }
  rc = connect(s, res->ai_addr, res->ai_addrlen);
  freeaddrinfo(res);
  if (rc != 0 && errno != EINPROGRESS)
    return Status::Unavailable(peer + ": " + strerror(errno));
  if (rc != 0) {
    DT_RETURN_IF_ERROR(WaitFor(s, POLLOUT, DeadlineIn(attempt_timeout),
                               "connecting to " + peer));
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) return Status::Unavailable(peer + ": " + strerror(err));
  }
  Tune(s);
  *out = std::move(conn);
  return Status::OK();
}

Status Resolve(const std::string& host, std::string* ip) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_family = AF_INET;
  int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (rc != 0) {
    return Status::InvalidArgument("cannot resolve '" + host +
                                   "': " + gai_strerror(rc));
  }
  char buf[INET_ADDRSTRLEN] = "";
  inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr,
            buf, sizeof(buf));
  freeaddrinfo(res);
  *ip = buf;
  return Status::OK();
}

namespace {

// A UDP socket, bound to (connect = false) or aimed at `ip`.
int UdpSocket(const std::string& ip, bool connect_it) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(connect_it ? 9 : 0);
  if (inet_pton(AF_INET, ip.c_str(), &a.sin_addr) != 1) return -1;
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return -1;
  auto* sa = reinterpret_cast<sockaddr*>(&a);
  if ((connect_it ? connect(s, sa, sizeof(a)) : bind(s, sa, sizeof(a))) != 0) {
    close(s);
    return -1;
  }
  return s;
}

}  // namespace

Status RouteSource(const std::string& ip, std::string* addr) {
  int s = UdpSocket(ip, true);
  if (s < 0) return Status::Unavailable("no route to " + ip);
  *addr = LocalAddress(s);
  close(s);
  return Status::OK();
}

bool IsLocalAddress(const std::string& ip) {
  int s = UdpSocket(ip, false);
  if (s >= 0) close(s);
  return s >= 0;
}

std::string LocalAddress(int fd) {
  sockaddr_in a{};
  socklen_t len = sizeof(a);
  char ip[INET_ADDRSTRLEN] = "127.0.0.1";
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    inet_ntop(AF_INET, &a.sin_addr, ip, sizeof(ip));
  }
  return ip;
}

}  // namespace dist_train
