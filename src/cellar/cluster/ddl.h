// cluster/ddl.h: DDL goes through the master, as request znodes.
//
// Any node (or tool) submits a DDL by creating the persistent sequential znode
// /ddl/requests/r_<seq> and waiting for /ddl/results/r_<seq>. The master takes requests
// in sequence order and, for each, in ONE multi(): checks its fence (it is still master),
// writes the catalog with compare-and-set on its version, writes the placement of new
// partitions (or drops a dropped table's), deletes the request and creates the result.
// So a request is applied exactly once, even when the master dies at any point: either
// all of that happened or none, and the next master finds the request still waiting.
//
// Two DDLs that conflict (two CREATE of one table, a DROP racing an ALTER) are applied one
// after the other in sequence order: the first wins, the second gets the same error a
// single store gives (ALREADY_EXISTS, TABLE_NOT_FOUND, ...). A request that names the
// catalog version it was decided on (ddl_request::expected_version) gets CONFLICT when
// another DDL came first.
//
// A submitter that gets no answer within its timeout deletes its request; if that works,
// nothing was applied (UNAVAILABLE, "no master"); if the master took it meanwhile, the
// answer is read. Results nobody collected (the submitter died) are removed by the master
// after ten minutes.
//
// Threads: submit_ddl blocks the calling thread; it must not be called on the zk_client's
// event thread (the answer arrives there), which it refuses with INVALID_ARGUMENT.
// serve_ddl_requests is the master's, called on the event thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cellar/status.h"
#include "cluster/catalog_state.h"
#include "cluster/zk_client.h"

namespace cellar::cluster {

// Submits `r` and waits for the master's answer: the catalog version the DDL produced, or
// its error.
result<std::uint64_t> submit_ddl(zk_client& zk, const ddl_request& r,
                                 std::chrono::milliseconds timeout = std::chrono::seconds(30));

// The master's side: applies every waiting request, in order, fenced by `fence` (the
// master's election znode); `live` gives the nodes new partitions may go to. Returns OK
// when none is left, UNAVAILABLE when the fence broke (no longer master) or ZooKeeper failed.
status serve_ddl_requests(zk_client& zk, const std::string& fence,
                          const std::function<std::vector<std::string>()>& live);

std::string encode_ddl_result(const status& st, std::uint64_t version);
result<std::uint64_t> decode_ddl_result(std::string_view bytes);

}  // namespace cellar::cluster
