// rpc/convert.h: between cellar's request/result values (ops.h, schema.h) and their
// Cap'n Proto form (schemas/cellar.capnp). Used by the server and the client, so both
// ends read and write the same way.
#pragma once

#include "cellar.capnp.h"
#include "cellar/ops.h"
#include "cellar/schema.h"
#include "cellar/status.h"
#include "cellar/store.h"
#include "cellar/summary.h"

namespace cellar::detail {
struct read_cell_view;
}

namespace cellar::rpc {

void to_wire(const status& s, wire::Error::Builder b);

// A filter as its nodes in prefix order (schemas/cellar.capnp, Filter). from_wire refuses
// malformed trees with INVALID_ARGUMENT. In a Get, a Scan or a CheckAndMutate, a filter
// that is malformed, or given as text (`filterText`) that does not parse, arrives as
// filter::invalid(reason): the store's validation then refuses the request with it.
void to_wire(const filter& f, wire::Filter::Builder b);
result<filter> from_wire(wire::Filter::Reader r);
status from_wire(wire::Error::Reader r);

void to_wire(const batch_op& op, wire::Action::Builder b);
result<batch_op> from_wire(wire::Action::Reader r);
// A Get into `out`, whose row keeps its storage (a server decoding get after get into one).
void from_wire(wire::Get::Reader g, get& out);
// A Put into `out`, whose strings and entries keep their storage (likewise, put after put).
void from_wire(wire::Put::Reader p, put& out);

void to_wire(const row_result& r, wire::RowResult::Builder b);
row_result from_wire(wire::RowResult::Reader r);

void to_wire(const op_result& r, wire::ActionResult::Builder b);
// The result of a get read as views (data_path::read_views): the same message as
// to_wire(op_result) of the row_result that read_row gives for it.
void get_views_to_wire(std::string_view row, bool exists, const std::vector<detail::read_cell_view>& cells,
                       wire::ActionResult::Builder b);
std::uint64_t get_views_words(std::string_view row, const std::vector<detail::read_cell_view>& cells);

// An upper bound of the words the Cap'n Proto form of a result takes, to size a reply
// message in one segment.
std::uint64_t wire_words(const row_result& r);
std::uint64_t wire_words(const op_result& r);
op_result from_wire(wire::ActionResult::Reader r);

void to_wire(const scan& s, wire::Scan::Builder b);
scan from_wire(wire::Scan::Reader r);
// Where a filter ended a scan (scanner::filter_end).
void to_wire(const scan_end& e, wire::ScanEnd::Builder b);
scan_end from_wire(wire::ScanEnd::Reader r);

void to_wire(const table_descriptor& d, wire::TableDescriptor::Builder b);
result<table_descriptor> from_wire(wire::TableDescriptor::Reader r);
void to_wire(const family_descriptor& f, wire::FamilyDescriptor::Builder b);
family_descriptor from_wire(wire::FamilyDescriptor::Reader r);
// Attributes of a family or table (schema.h); `b` has one element per attribute.
void to_wire(const std::map<std::string, std::string>& a, capnp::List<wire::Attribute>::Builder b);
std::map<std::string, std::string> from_wire(capnp::List<wire::Attribute>::Reader r);

void to_wire(const store_summary& s, wire::Summary::Builder b);
void to_wire(const snapshot_info& s, wire::SnapshotInfo::Builder b);
snapshot_info from_wire(wire::SnapshotInfo::Reader r);
result<store_summary> from_wire(wire::Summary::Reader r);

}  // namespace cellar::rpc
