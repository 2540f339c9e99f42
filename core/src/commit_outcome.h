// settle_commit: what one reply of the fenced effect sink means, recorded once in the history.
// Shared by the handler's own commit (HandlerContext::commit) and the commit the engine carries
// in the step after the handler (HandlerResult::commit_with_step, PartitionWorker).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "seqby/core/broker.h"
#include "seqby/core/history.h"
#include "seqby/core/lease.h"

namespace seqby {

// Judges `reply` to the commit of `seq` under `lease` and records it through `record(op,
// detail)` (the caller's record names the seq and event): commit, commit_fenced or
// commit_rejected. A commit whose reply was lost may have been applied: a later try then sees a
// duplicate of the last seq committed by this very token, which is our own commit, recorded once
// and returned as accepted. `recorded_seq_max` (optional) is the highest seq recorded as committed
// under this lease, kept by the engine; without it, `earlier_reply_lost` (an earlier send of this
// commit got no reply) says whether such a duplicate is ours.
CommitReply settle_commit(const Lease& lease, std::int64_t seq, CommitReply reply,
                          bool earlier_reply_lost, std::int64_t* recorded_seq_max,
                          const std::function<void(HistoryOp, std::string)>& record);

}  // namespace seqby
