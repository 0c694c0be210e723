#include "replica/wire.h"

#include <cstring>
#include <vector>

#include "persist/codec.h"

namespace cellar::replica {

namespace {

using detail::put_bytes;
using detail::put_u32;
using detail::put_u64;

void put_u8(std::string& out, unsigned v) { out.push_back(static_cast<char>(v)); }
void put_bool(std::string& out, bool v) { put_u8(out, v ? 1 : 0); }

bool get_bool(detail::reader& r, bool& v) {
  std::uint8_t b = 0;
  if (!r.u8(b) || b > 1) return false;
  v = b == 1;
  return true;
}

template <class T>
bool get_u64(detail::reader& r, T& v) {
  std::uint64_t x = 0;
  if (!r.u64(x)) return false;
  v = static_cast<T>(x);
  return true;
}

void put_configuration(std::string& out, const raft_configuration& c) {
  put_u32(out, c.n);
  for (unsigned i = 0; i < c.n; ++i) {
    put_u64(out, c.servers[i].id);
    put_bytes(out, c.servers[i].address ? c.servers[i].address : "");
    put_u32(out, static_cast<std::uint32_t>(c.servers[i].role));
  }
}

bool get_configuration(detail::reader& r, raft_configuration& c) {
  std::uint32_t n = 0;
  if (!r.u32(n)) return false;
  for (std::uint32_t i = 0; i < n; ++i) {
    std::uint64_t id = 0;
    std::string address;
    std::uint32_t role = 0;
    if (!r.u64(id) || !r.bytes(address) || !r.u32(role)) return false;
    if (raft_configuration_add(&c, id, address.c_str(), static_cast<int>(role)) != 0) return false;
  }
  return true;
}

// The entries of an AppendEntries message: an array and one batch, both from raft_malloc.
bool get_entries(detail::reader& r, raft_append_entries& a) {
  std::uint32_t n = 0;
  if (!r.u32(n)) return false;
  a.entries = nullptr;
  a.n_entries = 0;
  if (n == 0) return true;
  struct parsed {
    std::uint64_t term;
    std::uint32_t type;
    std::string_view data;
  };
  std::vector<parsed> in;
  std::size_t total = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    parsed p{};
    if (!r.u64(p.term) || !r.u32(p.type) || !r.bytes_view(p.data)) return false;
    total += p.data.size();
    in.push_back(p);
  }
  auto* entries = static_cast<raft_entry*>(raft_calloc(n, sizeof(raft_entry)));
  auto* batch = static_cast<char*>(raft_malloc(total > 0 ? total : 1));
  if (entries == nullptr || batch == nullptr) {
    raft_free(entries);
    raft_free(batch);
    return false;
  }
  char* cursor = batch;
  for (std::uint32_t i = 0; i < n; ++i) {
    entries[i].term = in[i].term;
    entries[i].type = static_cast<unsigned short>(in[i].type);
    entries[i].buf.base = cursor;
    entries[i].buf.len = in[i].data.size();
    entries[i].batch = batch;
    if (!in[i].data.empty()) std::memcpy(cursor, in[i].data.data(), in[i].data.size());
    cursor += in[i].data.size();
  }
  a.entries = entries;
  a.n_entries = n;
  return true;
}

}  // namespace

std::string encode_configuration(const raft_configuration& c) {
  std::string out;
  put_configuration(out, c);
  return out;
}

bool decode_configuration(std::string_view bytes, raft_configuration& c) {
  detail::reader r(bytes);
  if (get_configuration(r, c) && r.done()) return true;
  raft_configuration_close(&c);
  raft_configuration_init(&c);
  return false;
}

std::string encode_message(const raft_message& m, raft_id from, std::string_view from_address, lease_stamps stamps) {
  std::string out;
  put_u8(out, m.type);
  put_u64(out, from);
  put_bytes(out, from_address);
  switch (m.type) {
    case RAFT_IO_REQUEST_VOTE: {
      const auto& v = m.request_vote;
      put_u64(out, v.term);
      put_u64(out, v.candidate_id);
      put_u64(out, v.last_log_index);
      put_u64(out, v.last_log_term);
      put_bool(out, v.disrupt_leader);
      put_bool(out, v.pre_vote);
      break;
    }
    case RAFT_IO_REQUEST_VOTE_RESULT: {
      const auto& v = m.request_vote_result;
      put_u64(out, v.term);
      put_bool(out, v.vote_granted);
      put_u8(out, static_cast<unsigned>(v.pre_vote));
      break;
    }
    case RAFT_IO_APPEND_ENTRIES: {
      const auto& a = m.append_entries;
      put_u64(out, a.term);
      put_u64(out, a.prev_log_index);
      put_u64(out, a.prev_log_term);
      put_u64(out, a.leader_commit);
      put_u32(out, a.n_entries);
      for (unsigned i = 0; i < a.n_entries; ++i) {
        put_u64(out, a.entries[i].term);
        put_u32(out, a.entries[i].type);
        put_bytes(out, std::string_view(static_cast<const char*>(a.entries[i].buf.base), a.entries[i].buf.len));
      }
      break;
    }
    case RAFT_IO_APPEND_ENTRIES_RESULT: {
      const auto& a = m.append_entries_result;
      put_u64(out, a.term);
      put_u64(out, a.rejected);
      put_u64(out, a.last_log_index);
      break;
    }
    case RAFT_IO_INSTALL_SNAPSHOT: {
      const auto& s = m.install_snapshot;
      put_u64(out, s.term);
      put_u64(out, s.last_index);
      put_u64(out, s.last_term);
      put_configuration(out, s.conf);
      put_u64(out, s.conf_index);
      put_bytes(out, std::string_view(static_cast<const char*>(s.data.base), s.data.len));
      break;
    }
    case RAFT_IO_TIMEOUT_NOW: {
      const auto& t = m.timeout_now;
      put_u64(out, t.term);
      put_u64(out, t.last_log_index);
      put_u64(out, t.last_log_term);
      break;
    }
    default: break;
  }
  put_u64(out, stamps.sent);
  put_u64(out, stamps.echo);
  return out;
}

bool decode_message(std::string_view bytes, raft_message& m, std::string& from_address, lease_stamps* stamps) {
  std::memset(&m, 0, sizeof m);
  detail::reader r(bytes);
  std::uint8_t type = 0;
  if (!r.u8(type) || !get_u64(r, m.server_id) || !r.bytes(from_address)) return false;
  m.type = type;
  m.server_address = from_address.c_str();
  bool ok = false;
  switch (type) {
    case RAFT_IO_REQUEST_VOTE: {
      auto& v = m.request_vote;
      ok = get_u64(r, v.term) && get_u64(r, v.candidate_id) && get_u64(r, v.last_log_index) &&
           get_u64(r, v.last_log_term) && get_bool(r, v.disrupt_leader) && get_bool(r, v.pre_vote);
      break;
    }
    case RAFT_IO_REQUEST_VOTE_RESULT: {
      auto& v = m.request_vote_result;
      std::uint8_t pre = 0;
      ok = get_u64(r, v.term) && get_bool(r, v.vote_granted) && r.u8(pre) && pre <= raft_tribool_false;
      v.pre_vote = static_cast<raft_tribool>(pre);
      break;
    }
    case RAFT_IO_APPEND_ENTRIES: {
      auto& a = m.append_entries;
      ok = get_u64(r, a.term) && get_u64(r, a.prev_log_index) && get_u64(r, a.prev_log_term) &&
           get_u64(r, a.leader_commit) && get_entries(r, a);
      break;
    }
    case RAFT_IO_APPEND_ENTRIES_RESULT: {
      auto& a = m.append_entries_result;
      ok = get_u64(r, a.term) && get_u64(r, a.rejected) && get_u64(r, a.last_log_index);
      break;
    }
    case RAFT_IO_INSTALL_SNAPSHOT: {
      auto& s = m.install_snapshot;
      raft_configuration_init(&s.conf);
      std::string_view data;
      ok = get_u64(r, s.term) && get_u64(r, s.last_index) && get_u64(r, s.last_term) && get_configuration(r, s.conf) &&
           get_u64(r, s.conf_index) && r.bytes_view(data);
      if (ok) {
        s.data.base = raft_malloc(data.empty() ? 1 : data.size());
        s.data.len = data.size();
        ok = s.data.base != nullptr;
        if (ok && !data.empty()) std::memcpy(s.data.base, data.data(), data.size());
      }
      break;
    }
    case RAFT_IO_TIMEOUT_NOW: {
      auto& t = m.timeout_now;
      ok = get_u64(r, t.term) && get_u64(r, t.last_log_index) && get_u64(r, t.last_log_term);
      break;
    }
    default: return false;
  }
  lease_stamps got;
  ok = ok && get_u64(r, got.sent) && get_u64(r, got.echo);
  if (ok && r.done()) {
    if (stamps != nullptr) *stamps = got;
    return true;
  }
  release_message(m);
  return false;
}

void release_message(raft_message& m) {
  if (m.type == RAFT_IO_APPEND_ENTRIES && m.append_entries.entries != nullptr) {
    raft_free(m.append_entries.entries[0].batch);
    raft_free(m.append_entries.entries);
    m.append_entries.entries = nullptr;
    m.append_entries.n_entries = 0;
  } else if (m.type == RAFT_IO_INSTALL_SNAPSHOT) {
    raft_configuration_close(&m.install_snapshot.conf);
    raft_configuration_init(&m.install_snapshot.conf);
    raft_free(m.install_snapshot.data.base);
    m.install_snapshot.data.base = nullptr;
  }
}

}  // namespace cellar::replica
