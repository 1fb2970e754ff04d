// StateLock: the lock that keeps two processes from using one state directory at once. Without it
// two `urlsieve filter --state S` runs would both load the Bloom snapshot, both insert, and the
// last one to save would silently drop the other's keys (in exact mode leaving the Bloom filter
// and the SQLite store in disagreement).
//
// It is flock(2) on DIR/LOCK, taken without waiting:
//  - Exclusive (every writable open: filter, crawl, the C API, Python, Scrapy): creates DIR/LOCK if
//    needed and writes the holder's pid into it, so that the process refused can name the holder.
//    The pid is cleared again when the lock is released; a pid left by a process that died is
//    harmless (the kernel released its lock) and is overwritten by the next holder.
//  - Shared (read-only opens: `urlsieve stats`): any number of readers, no writer. Shared rather
//    than none, because a reader that ran beside a writer could read state.db's generation before
//    a checkpoint and bloom.snap after it, and report a healthy state as mixed up; and because
//    it lets the reader open SQLite without creating any file (sqlite_db.h, no_other_writer). So
//    `stats` fails fast, naming the writer's pid, while a filter or crawl runs. A reader only
//    opens DIR/LOCK for reading and writes nothing, so it works on a read-only directory; when
//    there is no DIR/LOCK at all (a state never opened by a writer that locks) there is nothing to
//    lock and the reader goes on without one.
// A flock belongs to an open file description: two StateLocks in one process exclude each other
// too, and the descriptor is close-on-exec, so a child program does not inherit the lock.
//
// Thread-safety: a StateLock is a plain owner of one descriptor; Acquire may be called from any
// thread.
#ifndef URLSIEVE_DEDUP_STATE_STATE_LOCK_H_
#define URLSIEVE_DEDUP_STATE_STATE_LOCK_H_

#include <memory>
#include <string>

#include "base/status.h"

namespace urlsieve {

class StateLock {
 public:
  enum class Mode { kExclusive, kShared };

  // FailedPrecondition "state directory DIR is in use by process PID (DIR/LOCK)" when another
  // holder conflicts; IoError when DIR/LOCK cannot be created or opened. The directory must exist.
  static Result<std::unique_ptr<StateLock>> Acquire(const std::string& dir, Mode mode);
  ~StateLock();
  StateLock(const StateLock&) = delete;
  StateLock& operator=(const StateLock&) = delete;

  // DIR/LOCK.
  static std::string LockPath(const std::string& dir);

 private:
  StateLock(int fd, Mode mode) : fd_(fd), mode_(mode) {}

  int fd_;  // -1: a shared "lock" on a directory without DIR/LOCK
  Mode mode_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_STATE_STATE_LOCK_H_
