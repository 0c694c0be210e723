#include "cluster/snapshot_sweep.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <functional>
#include <map>
#include <sstream>

#include "cluster/layout.h"

namespace cellar::cluster {

using detail::snapshot_manifest;

namespace {

class zk_client_calls final : public tombstone_zk {
 public:
  explicit zk_client_calls(zk_client& zk) : zk_(zk) {}
  status sync(const std::string& path) override { return zk_.sync(path); }
  status ensure_path(const std::string& path) override { return zk_.ensure_path(path); }
  result<std::vector<std::string>> children(const std::string& path) override { return zk_.children(path); }
  result<znode> get(const std::string& path) override { return zk_.get(path); }
  result<std::optional<znode_stat>> exists(const std::string& path) override { return zk_.exists(path); }
  result<std::string> create(const std::string& path, std::string_view data) override { return zk_.create(path, data); }
  result<znode_stat> set(const std::string& path, std::string_view data, std::int32_t version) override {
    return zk_.set(path, data, version);
  }
  status remove(const std::string& path, std::int32_t version) override { return zk_.remove(path, version); }

 private:
  zk_client& zk_;
};

std::string claim_znode(const std::string& name) { return std::string(layout::snapshot_writes) + "/s_" + name; }

// Changes the entries of tombstone `path` by compare-and-set, read again after a concurrent
// change. `change` gets the entries (nullptr for a tombstone that cannot be decoded) and
// returns false when it changes nothing; no entries left removes the tombstone.
status update(tombstone_zk& zk, const std::string& path,
              const std::function<bool(std::vector<tombstone_entry>& entries, bool decoded)>& change) {
  // Each round loses only to another node's change of the same tombstone, which is rare:
  // a bound, not a retry policy.
  constexpr int rounds = 50;
  status last;
  for (int round = 0; round < rounds; ++round) {
    std::vector<tombstone_entry> entries;
    bool there = false;
    bool decoded = true;
    std::int32_t version = any_version;
    if (auto z = zk.get(path); z) {
      there = true;
      version = z->stat.version;
      if (auto d = decode_tombstone(z->data); d)
        entries = std::move(*d);
      else
        decoded = false;
    } else if (z.error().code() != code::not_found) {
      return z.error();
    }
    if (!change(entries, decoded)) return status::ok();
    if (entries.empty()) {
      if (!there) return status::ok();
      last = zk.remove(path, version);
      if (last || last.code() == code::not_found) return status::ok();
    } else if (there) {
      auto s = zk.set(path, encode_tombstone(entries), version);
      if (s) return status::ok();
      last = s.error();
    } else {
      auto c = zk.create(path, encode_tombstone(entries));
      if (c) return status::ok();
      last = c.error();
      if (last.code() == code::not_found)
        if (auto st = zk.ensure_path(layout::snapshot_deleted); !st) return st;
    }
    // Changed or removed meanwhile (CONFLICT, NOT_FOUND), or made (ALREADY_EXISTS): again.
    if (last.code() != code::conflict && last.code() != code::not_found && last.code() != code::already_exists)
      return last;
  }
  return status{code::conflict, "tombstone " + path + " kept changing: " + last.to_string()};
}

bool same(const snapshot_manifest& a, const std::string& b_encoded) { return detail::encode_manifest(a) == b_encoded; }

// Takes `nodes` out of the entries of `entries` that `which` selects, dropping those left
// with no node; true when anything changed.
bool take_out(std::vector<tombstone_entry>& entries, const std::set<std::string>& nodes,
              const std::function<bool(const tombstone_entry&)>& which) {
  bool changed = false;
  for (auto& e : entries) {
    if (!which(e)) continue;
    const auto before = e.pending.size();
    std::erase_if(e.pending, [&](const std::string& n) { return nodes.count(n) != 0; });
    changed |= e.pending.size() != before;
  }
  const auto before = entries.size();
  std::erase_if(entries, [](const tombstone_entry& e) { return e.pending.empty(); });
  return changed || entries.size() != before;
}

}  // namespace

std::unique_ptr<tombstone_zk> tombstone_zk_of(zk_client& zk) { return std::make_unique<zk_client_calls>(zk); }

std::string tombstone_znode(const std::string& name) { return std::string(layout::snapshot_deleted) + "/s_" + name; }

std::string encode_tombstone(const std::vector<tombstone_entry>& entries) {
  std::string out;
  for (const auto& e : entries) {
    out += "pending";
    for (const auto& n : e.pending) out += " " + n;
    const std::string m = detail::encode_manifest(e.m);
    out += "\nmanifest " + std::to_string(m.size()) + "\n" + m;
  }
  return out;
}

result<std::vector<tombstone_entry>> decode_tombstone(std::string_view data) {
  const status bad{code::corruption, "a snapshot tombstone is malformed"};
  std::vector<tombstone_entry> out;
  while (!data.empty()) {
    auto line = [&](std::string& into) {
      const auto eol = data.find('\n');
      if (eol == std::string_view::npos) return false;
      into.assign(data.substr(0, eol));
      data.remove_prefix(eol + 1);
      return true;
    };
    std::string pending, size_line;
    if (!line(pending) || !line(size_line)) return bad;
    tombstone_entry e;
    std::istringstream p(pending);
    std::string word;
    if (!(p >> word) || word != "pending") return bad;
    while (p >> word) e.pending.push_back(word);
    std::istringstream s(size_line);
    std::size_t size = 0;
    if (!(s >> word) || word != "manifest" || !(s >> size) || size > data.size()) return bad;
    auto m = detail::decode_manifest(data.substr(0, size));
    if (!m) return m.error();
    e.m = std::move(*m);
    data.remove_prefix(size);
    std::sort(e.pending.begin(), e.pending.end());
    out.push_back(std::move(e));
  }
  return out;
}

status mark_deleted(tombstone_zk& zk, const snapshot_manifest& m, const std::set<std::string>& pending) {
  const std::string mine = detail::encode_manifest(m);
  return update(zk, tombstone_znode(m.name), [&](std::vector<tombstone_entry>& entries, bool decoded) {
    // A tombstone that cannot be read records nothing any node could match: replaced.
    if (!decoded) entries.clear();
    std::erase_if(entries, [&](const tombstone_entry& e) { return same(e.m, mine); });
    if (!pending.empty()) entries.push_back({{pending.begin(), pending.end()}, m});
    return true;
  });
}

status mark_swept(tombstone_zk& zk, const snapshot_manifest& m, const std::set<std::string>& swept) {
  const std::string mine = detail::encode_manifest(m);
  return update(zk, tombstone_znode(m.name), [&](std::vector<tombstone_entry>& entries, bool decoded) {
    return decoded && take_out(entries, swept, [&](const tombstone_entry& e) { return same(e.m, mine); });
  });
}

namespace {

// The snapshot names under `path` (children "s_<name>"); none when it does not exist.
result<std::set<std::string>> names_under(tombstone_zk& zk, const char* path) {
  auto children = zk.children(path);
  if (!children) {
    if (children.error().code() == code::not_found) return std::set<std::string>{};
    return children.error();
  }
  std::set<std::string> out;
  for (const auto& c : *children)
    if (c.starts_with("s_")) out.insert(c.substr(2));
  return out;
}

// Every tombstone that can be decoded, by snapshot name.
result<std::map<std::string, std::vector<tombstone_entry>>> read_tombstones(tombstone_zk& zk) {
  auto names = names_under(zk, layout::snapshot_deleted);
  if (!names) return names.error();
  std::map<std::string, std::vector<tombstone_entry>> out;
  for (const auto& name : *names) {
    auto z = zk.get(tombstone_znode(name));
    if (!z) {
      if (z.error().code() == code::not_found) continue;  // its last entry went meanwhile
      return z.error();
    }
    auto entries = decode_tombstone(z->data);
    if (!entries) {
      spdlog::warn("cellar: the tombstone of snapshot '{}' cannot be read ({}): no copy is removed by it", name,
                   entries.error().to_string());
      continue;
    }
    out.emplace(name, std::move(*entries));
  }
  return out;
}

}  // namespace

status sweep_snapshot_copies(tombstone_zk& zk, detail::snapshot_repo& repo, const std::string& self) {
  if (auto st = zk.sync("/"); !st) return st;
  auto held = repo.list();
  if (!held) return held.error();
  auto writing = names_under(zk, layout::snapshot_writes);
  if (!writing) return writing.error();
  auto named = names_under(zk, layout::snapshots);
  if (!named) return named.error();
  auto tombstones = read_tombstones(zk);
  if (!tombstones) return tombstones.error();
  // Manifests (encoded) of the copies this node still holds after the sweep.
  std::set<std::string> kept;
  for (const auto& m : *held) {
    const std::string encoded = detail::encode_manifest(m);
    kept.insert(encoded);
    if (named->count(m.name) || writing->count(m.name)) continue;
    // Only a copy of a snapshot the cluster recorded as gone: a copy it has no record of
    // (such as one a store kept before it joined this cluster) is not the cluster's to drop.
    auto t = tombstones->find(m.name);
    const bool gone =
        t != tombstones->end() &&
        std::any_of(t->second.begin(), t->second.end(), [&](const tombstone_entry& e) { return same(e.m, encoded); });
    if (!gone) {
      spdlog::info(
          "cellar: node '{}' keeps its copy of snapshot '{}' (table '{}'), which the cluster does not list "
          "and has no record of deleting",
          self, m.name, m.table);
      continue;
    }
    // A write of the name that began since the claims were read: its copy is kept.
    if (auto claim = zk.exists(claim_znode(m.name)); !claim || *claim) continue;
    if (auto st = repo.remove(m.name); st) {
      kept.erase(encoded);
      spdlog::info(
          "cellar: node '{}' removed its copy of snapshot '{}' (table '{}'): no snapshot of that name "
          "exists in the cluster",
          self, m.name, m.table);
    } else {
      spdlog::warn("cellar: node '{}' could not remove its copy of deleted snapshot '{}': {}", self, m.name,
                   st.to_string());
    }
  }
  // This node is swept for every entry naming it whose copy it does not hold (any more).
  for (const auto& [name, entries] : *tombstones)
    for (const auto& e : entries) {
      if (!std::binary_search(e.pending.begin(), e.pending.end(), self) || kept.count(detail::encode_manifest(e.m)))
        continue;
      if (auto st = mark_swept(zk, e.m, {self}); !st) return st;
    }
  return status::ok();
}

result<std::uint32_t> forget_in_tombstones(tombstone_zk& zk, const std::set<std::string>& gone) {
  std::uint32_t changed = 0;
  if (gone.empty()) return changed;
  auto names = names_under(zk, layout::snapshot_deleted);
  if (!names) return names.error();
  for (const auto& name : *names) {
    bool did = false;
    auto st = update(zk, tombstone_znode(name), [&](std::vector<tombstone_entry>& entries, bool decoded) {
      did = decoded && take_out(entries, gone, [](const tombstone_entry&) { return true; });
      return did;
    });
    if (!st) return st;
    changed += did;
  }
  return changed;
}

result<std::set<std::string>> pending_in_tombstones(tombstone_zk& zk) {
  auto tombstones = read_tombstones(zk);
  if (!tombstones) return tombstones.error();
  std::set<std::string> out;
  for (const auto& [name, entries] : *tombstones)
    for (const auto& e : entries) out.insert(e.pending.begin(), e.pending.end());
  return out;
}

}  // namespace cellar::cluster
