#include "engine/time_wait.h"

#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "common/unique_fd.h"

namespace cedana::engine {
namespace {

struct DiagRequest {
  nlmsghdr header;
  inet_diag_req_v2 body;
};

DiagRequest MakeRequest(uint16_t type, uint16_t flags, uint8_t family) {
  DiagRequest r{};
  r.header.nlmsg_len = sizeof r;
  r.header.nlmsg_type = type;
  r.header.nlmsg_flags = flags;
  r.body.sdiag_family = family;
  r.body.sdiag_protocol = IPPROTO_TCP;
  r.body.idiag_states = 1u << TCP_TIME_WAIT;
  return r;
}

Status Send(int fd, const DiagRequest& r) {
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(fd, &r, sizeof r, 0, reinterpret_cast<const sockaddr*>(&kernel), sizeof kernel) < 0)
    return ErrnoStatus(errno, "sending a sock_diag request");
  return OkStatus();
}

// Reads replies until the dump's end or one acknowledgement; `each` sees every socket message.
template <typename Each>
Status Receive(int fd, Each each) {
  alignas(nlmsghdr) char buf[32 * 1024];
  for (;;) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "reading sock_diag replies");
    }
    int left = static_cast<int>(n);
    for (auto* h = reinterpret_cast<nlmsghdr*>(buf); NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
      if (h->nlmsg_type == NLMSG_DONE) return OkStatus();
      if (h->nlmsg_type == NLMSG_ERROR) {
        int err = -static_cast<const nlmsgerr*>(NLMSG_DATA(h))->error;
        return err == 0 ? OkStatus() : ErrnoStatus(err, "sock_diag");
      }
      each(*static_cast<const inet_diag_msg*>(NLMSG_DATA(h)));
    }
  }
}

}  // namespace

Result<int> EndTimeWait(const std::set<uint16_t>& ports) {
  if (ports.empty()) return 0;
  UniqueFd fd(::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG));
  if (!fd.valid()) return ErrnoStatus(errno, "opening a sock_diag socket");
  int ended = 0;
  for (uint8_t family : {uint8_t{AF_INET}, uint8_t{AF_INET6}}) {
    // All of the family's TIME_WAIT sockets first, then one SOCK_DESTROY each (by its full id,
    // cookie included): a request cannot be sent while a dump is being read.
    std::vector<inet_diag_sockid> found;
    CEDANA_RETURN_IF_ERROR(
        Send(fd.get(), MakeRequest(SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, family)));
    CEDANA_RETURN_IF_ERROR(Receive(fd.get(), [&](const inet_diag_msg& m) {
      if (m.idiag_state == TCP_TIME_WAIT && ports.count(ntohs(m.id.idiag_sport)) > 0)
        found.push_back(m.id);
    })) << "listing TIME_WAIT sockets";
    for (const inet_diag_sockid& id : found) {
      DiagRequest destroy = MakeRequest(SOCK_DESTROY, NLM_F_REQUEST | NLM_F_ACK, family);
      destroy.body.id = id;
      CEDANA_RETURN_IF_ERROR(Send(fd.get(), destroy));
      Status s = Receive(fd.get(), [](const inet_diag_msg&) {});
      if (s.ok()) ++ended;
      // ENOENT: it ended by itself meanwhile.
      else if (s.error_number() != ENOENT)
        return s.WithContext(
            fmt::format("ending a TIME_WAIT socket on port {}", ntohs(id.idiag_sport)));
    }
  }
  return ended;
}

}  // namespace cedana::engine
