// replica/raft_c.h: libraft's header for C++ (raft.h declares its functions without C
// linkage, so C++ code includes it here, inside extern "C").
#pragma once

extern "C" {
#include <raft.h>
}
