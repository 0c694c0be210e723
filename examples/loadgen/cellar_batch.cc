#include "cellar_batch.h"

namespace loadgen {

namespace {

capnp::Data::Reader bytes(const std::string& s) { return {reinterpret_cast<const kj::byte*>(s.data()), s.size()}; }

}  // namespace

batch_writer::batch_writer(const target_options& o)
    : family_(o.family), keys_(o.keys), values_(o.seed, o.field_length), rng_(o.seed * 7919 + 1) {
  for (int i = 0; i < field_count; ++i) fields_.push_back(field_name(i));
}

void batch_writer::fill(capnp::List<cellar::wire::Action>::Builder actions, const slot& s,
                        const std::vector<std::size_t>& idx, bool second) {
  for (unsigned a = 0; a < idx.size(); ++a) {
    const operation& op = s.ops[idx[a]];
    key_ = build_key_name(op.keynum, keys_);
    const bool write = second || op.kind == op_kind::update || op.kind == op_kind::insert;
    if (!write) {
      actions[a].initGet().setRow(bytes(key_));
      continue;
    }
    auto p = actions[a].initPut();
    p.setRow(bytes(key_));
    if (op.kind == op_kind::insert) {
      auto e = p.initEntries(field_count);
      for (unsigned f = 0; f < field_count; ++f) {
        e[f].setFamily(family_);
        e[f].setQualifier(bytes(fields_[f]));
        e[f].setValue(bytes(values_.pick(rng_)));
      }
    } else {
      auto e = p.initEntries(1);
      e[0].setFamily(family_);
      e[0].setQualifier(bytes(fields_[static_cast<std::size_t>(op.field)]));
      e[0].setValue(bytes(values_.pick(rng_)));
    }
  }
}

std::vector<std::size_t> take_batch_answer(slot& s, const std::vector<std::size_t>& idx, bool second, bool call_ok,
                                           capnp::List<cellar::wire::ActionResult>::Reader results) {
  const bool all = call_ok && results.size() == idx.size();
  std::vector<std::size_t> rmw;
  for (unsigned a = 0; a < idx.size(); ++a) {
    const std::size_t i = idx[a];
    bool ok = all && results[a].getError().getCode() == 0;
    const operation& op = s.ops[i];
    if (!ok && s.why.empty()) {
      if (!call_ok)
        s.why = "the call failed";
      else if (results.size() != idx.size())
        s.why = std::to_string(results.size()) + " results for " + std::to_string(idx.size()) + " actions";
      else
        s.why = "code " + std::to_string(results[a].getError().getCode()) + ": " +
                std::string(results[a].getError().getMessage().cStr());
    }
    if (ok && !second && (op.kind == op_kind::read || op.kind == op_kind::rmw)) {
      ok = results[a].getRow().getCells().size() > 0;  // NOT_FOUND otherwise
      if (!ok && s.why.empty()) s.why = "a read found no row";
    }
    if (!ok) s.ok[i] = 0;
    if (!second && op.kind == op_kind::rmw && ok) rmw.push_back(i);
  }
  return rmw;
}

}  // namespace loadgen
