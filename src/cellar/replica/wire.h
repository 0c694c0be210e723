// replica/wire.h: the bytes of a Raft message and of a Raft configuration.
//
// A replica sends libraft's messages to its peers as bytes (the transport, replica/actor_io.h,
// carries opaque strings, so any link that carries a string serves). The layout is cellar's
// own, fixed-width big-endian (persist/codec.h): u8 message type, u64 sender id, bytes sender address, then the
// fields of the type in the order raft.h declares them, then the lease stamps (u64 sent |
// u64 echo); entries as u64 term | u16 type | bytes; a configuration as u32 count then per
// server u64 id | bytes address | u32 role.
//
// Memory: decode_message allocates what it hands to libraft (the entries array, one batch
// holding the entries' data, a snapshot's configuration and data) with raft_malloc, as
// libraft frees them once it has taken a received message.
#pragma once

#include "replica/raft_c.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace cellar::replica {

// What a message carries after its fields for read leases (replica/group.h,
// replica_group::lease_valid): the sender's steady clock when it sent the message, and the
// `sent` of the newest message the sender accepted from the receiver as its leader (0:
// none). Both u64 nanoseconds.
struct lease_stamps {
  std::uint64_t sent = 0;
  std::uint64_t echo = 0;
};

// The bytes of `m`, sent by server `from` whose address is `from_address`.
std::string encode_message(const raft_message& m, raft_id from, std::string_view from_address,
                           lease_stamps stamps = {});
// Fills `m` from `bytes`; false if they are not a well-formed message (nothing allocated
// is left behind then). The sender's address goes to `from_address`, which
// `m.server_address` points into; its stamps to `*stamps` if given.
bool decode_message(std::string_view bytes, raft_message& m, std::string& from_address, lease_stamps* stamps = nullptr);
// Releases what decode_message allocated, for a message libraft did not take.
void release_message(raft_message& m);

std::string encode_configuration(const raft_configuration& c);
// Fills the empty configuration `c` (raft_configuration_init); false if malformed.
bool decode_configuration(std::string_view bytes, raft_configuration& c);

}  // namespace cellar::replica
