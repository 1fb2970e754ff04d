// ForkGeneration: how many fork() calls separate this process from the one that first asked — 0
// in that process, and in each child one more than in its parent. An object that holds what a
// child must not share (a database connection, a socket, a state it writes on close) records the
// generation when it is made and compares it before each use: a handle inherited through fork()
// is then a clear error, not two processes writing one state or one socket (SQLite: "do not carry
// an open database connection across a fork()"; hiredis connections are not fork-safe either).
//
// The count is kept by a pthread_atfork child handler, registered on the first call, so a check
// costs one relaxed atomic load (no getpid() system call).
//
// Thread-safety: ForkGeneration() may be called from any thread.
#ifndef URLSIEVE_BASE_FORK_GENERATION_H_
#define URLSIEVE_BASE_FORK_GENERATION_H_

#include <cstdint>

namespace urlsieve {

uint64_t ForkGeneration();

}  // namespace urlsieve

#endif  // URLSIEVE_BASE_FORK_GENERATION_H_
