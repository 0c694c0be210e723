// replica/caf_loop.h: a replica's loop and in-process transport on CAF actors.
//
// The actor that owns a replica_group (replica/group.h) gives it a caf_loop: a tick is a
// delayed `replica_tick_atom` message to itself, a flush a `replica_flush_atom` message to
// itself, and its behaviour hands both, and a peer's `replica_msg_atom` bytes, to the
// group:
//
//   [=](replica_tick_atom, std::uint64_t gen) { group.on_tick(gen); },
//   [=](replica_flush_atom) { group.on_flush(); },
//   [=](replica_msg_atom, const std::string& bytes) { group.on_receive(bytes); },
//
// local_transport carries messages between replicas that are actors of one process: it
// knows each replica's actor by the replica's id.
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <absl/synchronization/mutex.h>

#include <caf/all.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

#include "replica/actor_io.h"

namespace cellar::replica {

using replica_tick_atom = caf::atom_constant<caf::atom("rtick")>;
using replica_flush_atom = caf::atom_constant<caf::atom("rflush")>;
using replica_msg_atom = caf::atom_constant<caf::atom("rmsg")>;

// The io_loop of a replica owned by the actor `self` (an event-based actor, typed or not,
// whose behaviour has the three handlers above). Only `self` calls it.
template <class Self>
class caf_loop final : public io_loop {
 public:
  explicit caf_loop(Self* self) : self_(self) {}
  // Anonymous sends: a typed actor may not send() to its own untyped handle.
  void post_flush() override { caf::anon_send(caf::actor_cast<caf::actor>(self_), replica_flush_atom::value); }
  void post_tick(std::chrono::milliseconds delay, std::uint64_t generation) override {
    caf::delayed_anon_send(caf::actor_cast<caf::actor>(self_), delay, replica_tick_atom::value, generation);
  }

 private:
  Self* self_;
};

// Replicas in this process, by id. Thread-safe: every replica's actor delivers through it.
class local_transport final : public transport {
 public:
  void add(std::uint64_t id, caf::actor a) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    actors_[id] = std::move(a);
  }
  void remove(std::uint64_t id) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    actors_.erase(id);
  }
  // Drops every message to or from `id` until heal(id): a network partition.
  void isolate(std::uint64_t id) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    isolated_.insert(id);
  }
  void heal(std::uint64_t id) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    isolated_.erase(id);
  }
  // Drops every message between `a` and `b`, both ways, until mend(a, b): one link down.
  void cut(std::uint64_t a, std::uint64_t b) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    cut_.insert(link(a, b));
  }
  void mend(std::uint64_t a, std::uint64_t b) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    cut_.erase(link(a, b));
  }
  // Delivers every later message `d` after it is sent: a network's latency.
  void set_latency(std::chrono::milliseconds d) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    latency_ = d;
  }

  // A transport for the replica `from`, delivering through this one.
  class endpoint final : public transport {
   public:
    endpoint(local_transport& net, std::uint64_t from) : net_(net), from_(from) {}
    bool deliver(raft_id to, const std::string& address, std::string bytes) override {
      return net_.deliver_from(from_, to, address, std::move(bytes));
    }

   private:
    local_transport& net_;
    std::uint64_t from_;
  };

  bool deliver(raft_id to, const std::string& address, std::string bytes) override {
    return deliver_from(0, to, address, std::move(bytes));
  }

 private:
  bool deliver_from(std::uint64_t from, raft_id to, const std::string&, std::string bytes) ABSL_LOCKS_EXCLUDED(mu_) {
    caf::actor dest;
    std::chrono::milliseconds latency;
    {
      absl::MutexLock lock(&mu_);
      if (isolated_.contains(from) || isolated_.contains(to) || cut_.contains(link(from, to))) return false;
      auto it = actors_.find(to);
      if (it == actors_.end()) return false;
      dest = it->second;
      latency = latency_;
    }
    if (latency.count() > 0)
      caf::delayed_anon_send(dest, latency, replica_msg_atom::value, std::move(bytes));
    else
      caf::anon_send(dest, replica_msg_atom::value, std::move(bytes));
    return true;
  }

  static std::pair<std::uint64_t, std::uint64_t> link(std::uint64_t a, std::uint64_t b) {
    return a < b ? std::pair{a, b} : std::pair{b, a};
  }

  absl::Mutex mu_;
  absl::flat_hash_map<std::uint64_t, caf::actor> actors_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::uint64_t> isolated_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::pair<std::uint64_t, std::uint64_t>> cut_ ABSL_GUARDED_BY(mu_);
  std::chrono::milliseconds latency_ ABSL_GUARDED_BY(mu_){0};
};

}  // namespace cellar::replica
