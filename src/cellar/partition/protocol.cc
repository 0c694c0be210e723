#include "partition/protocol.h"

namespace cellar::detail {

void add_partition_protocol(caf::actor_system_config& cfg) {
  cfg.add_message_type<batch_request>("cellar.batch_request");
  cfg.add_message_type<batch_reply>("cellar.batch_reply");
  cfg.add_message_type<scan_request>("cellar.scan_request");
  cfg.add_message_type<scan_reply>("cellar.scan_reply");
  cfg.add_message_type<adopt_schema_request>("cellar.adopt_schema_request");
  cfg.add_message_type<drop_families_request>("cellar.drop_families_request");
  cfg.add_message_type<reclaim_request>("cellar.reclaim_request");
  cfg.add_message_type<reclaim_reply>("cellar.reclaim_reply");
  cfg.add_message_type<stats_request>("cellar.stats_request");
  cfg.add_message_type<stats_reply>("cellar.stats_reply");
  cfg.add_message_type<cut_request>("cellar.cut_request");
  cfg.add_message_type<cut_reply>("cellar.cut_reply");
  cfg.add_message_type<merge_delta_request>("cellar.merge_delta_request");
  cfg.add_message_type<stop_request>("cellar.stop_request");
  cfg.add_message_type<admin_reply>("cellar.admin_reply");
  cfg.add_message_type<move_request>("cellar.move_request");
  cfg.add_message_type<move_reply>("cellar.move_reply");
  cfg.add_message_type<handoff_request>("cellar.handoff_request");
}

}  // namespace cellar::detail
