#include "redis/redis_connection.h"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include "redis/redis_waits.h"

namespace urlsieve {
namespace {

timeval ToTimeval(double seconds) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(seconds);
  tv.tv_usec = static_cast<suseconds_t>((seconds - std::floor(seconds)) * 1e6);
  return tv;
}

RedisReply Copy(const redisReply& from) {
  RedisReply to;
  switch (from.type) {
    case REDIS_REPLY_STRING:
      to.type = RedisReply::Type::kString;
      to.str.assign(from.str, from.len);
      break;
    case REDIS_REPLY_STATUS:
      to.type = RedisReply::Type::kStatus;
      to.str.assign(from.str, from.len);
      break;
    case REDIS_REPLY_ERROR:
      to.type = RedisReply::Type::kError;
      to.str.assign(from.str, from.len);
      break;
    case REDIS_REPLY_INTEGER:
      to.type = RedisReply::Type::kInteger;
      to.integer = from.integer;
      break;
    case REDIS_REPLY_ARRAY:
      to.type = RedisReply::Type::kArray;
      to.elements.reserve(from.elements);
      for (size_t i = 0; i < from.elements; ++i) to.elements.push_back(Copy(*from.element[i]));
      break;
    default:
      to.type = RedisReply::Type::kNil;
  }
  return to;
}

}  // namespace

Status RedisErrorStatus(std::string_view server, std::string_view what, const RedisReply& reply) {
  std::string message(server);
  message += ": ";
  message += what;
  message += ": ";
  message += reply.is_error() ? reply.str : "unexpected reply";
  for (std::string_view transient :
       {"LOADING", "BUSY", "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN", "READONLY", "MOVED", "ASK"}) {
    if (reply.str.starts_with(transient)) return Status::Unavailable(std::move(message));
  }
  return Status::FailedPrecondition(std::move(message));
}

Result<std::unique_ptr<RedisConnection>> RedisConnection::Open(const RedisAddress& address,
                                                               const RedisTimeouts& timeouts) {
  std::string server = address.ToString();
  redisContext* context =
      redisConnectWithTimeout(address.host.c_str(), address.port, ToTimeval(timeouts.connect_s));
  if (context == nullptr) return Status::Unavailable(server + ": connecting: out of memory");
  std::unique_ptr<RedisConnection> connection(new RedisConnection(context, server));
  if (context->err != 0) return connection->Fail("connecting");
  connection->command_timeout_s_ = timeouts.command_s;
  if (redisSetTimeout(context, ToTimeval(timeouts.command_s)) != REDIS_OK) {
    return connection->Fail("setting the command timeout");
  }
  std::vector<RedisCommand> setup;
  if (!address.password.empty()) {
    if (address.user.empty()) {
      setup.push_back({{"AUTH", address.password}, -1});
    } else {
      setup.push_back({{"AUTH", address.user, address.password}, -1});
    }
  }
  if (address.db != 0) setup.push_back({{"SELECT", std::to_string(address.db)}, -1});
  setup.push_back({{"PING"}, -1});  // a peer that is not Redis fails here, not on first use
  std::vector<RedisReply> replies;
  if (Status s = connection->Pipeline(setup, &replies); !s.ok()) {
    if (s.code() == StatusCode::kFailedPrecondition) return s;
    return Status::Unavailable(s.message());
  }
  for (size_t i = 0; i < setup.size(); ++i) {
    if (!replies[i].is_error()) continue;
    std::string what = setup[i].argv[0] == "AUTH"     ? "authenticating"
                       : setup[i].argv[0] == "SELECT" ? "selecting database " + setup[i].argv[1]
                                                      : "PING";
    return RedisErrorStatus(server, what, replies[i]);
  }
  return connection;
}

RedisConnection::~RedisConnection() {
  if (context_ != nullptr) redisFree(context_);
}

Status RedisConnection::Fail(std::string_view what) {
  broken_ = true;
  std::string message = server_ + ": " + std::string(what) + ": ";
  int err = context_->err;
  if (err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK)) {
    message += "timed out";
    RedisNoAnswer(server_, what, command_timeout_s_);
  } else if (err == REDIS_ERR_EOF) {
    message += "the server closed the connection";
  } else {
    message += context_->errstr;
  }
  if (err == REDIS_ERR_PROTOCOL) {
    message += " (is this a Redis server?)";
    return Status::FailedPrecondition(std::move(message));
  }
  return Status::Unavailable(std::move(message));
}

Status RedisConnection::Pipeline(std::span<const RedisCommand> commands,
                                 std::vector<RedisReply>* replies) {
  replies->clear();
  if (Status s = Send(commands); !s.ok()) return s;
  return Receive(commands, replies);
}

Status RedisConnection::Send(std::span<const RedisCommand> commands) {
  if (broken_) return Status::Unavailable(server_ + ": the connection was lost earlier");
  std::vector<const char*> argv;
  std::vector<size_t> lengths;
  for (const RedisCommand& command : commands) {
    argv.clear();
    lengths.clear();
    for (const std::string& arg : command.argv) {
      argv.push_back(arg.data());
      lengths.push_back(arg.size());
    }
    if (redisAppendCommandArgv(context_, static_cast<int>(argv.size()), argv.data(),
                               lengths.data()) != REDIS_OK) {
      return Fail("sending a command");
    }
  }
  for (int done = 0; !done;) {
    if (redisBufferWrite(context_, &done) != REDIS_OK) {
      return Fail(commands.empty() || commands[0].argv.empty() ? "sending commands"
                                                               : "sending " + commands[0].argv[0]);
    }
  }
  return Status::Ok();
}

Status RedisConnection::Receive(std::span<const RedisCommand> commands,
                                std::vector<RedisReply>* replies) {
  replies->clear();
  if (broken_) return Status::Unavailable(server_ + ": the connection was lost earlier");
  replies->reserve(commands.size());
  for (size_t i = 0; i < commands.size(); ++i) {
    void* raw = nullptr;
    if (redisGetReply(context_, &raw) != REDIS_OK || raw == nullptr) {
      if (raw != nullptr) freeReplyObject(raw);
      const std::vector<std::string>& argv = commands[i].argv;
      return Fail(argv.empty()                            ? std::string("reading a reply")
                  : argv[0] == "FCALL" && argv.size() > 1 ? "running FCALL " + argv[1]
                                                          : "running " + argv[0]);
    }
    replies->push_back(Copy(*static_cast<redisReply*>(raw)));
    freeReplyObject(raw);
  }
  RedisAnswered(server_);
  return Status::Ok();
}

Result<RedisReply> RedisConnection::Run(const RedisCommand& command) {
  std::vector<RedisReply> replies;
  if (Status s = Pipeline(std::span(&command, 1), &replies); !s.ok()) return s;
  return std::move(replies[0]);
}

}  // namespace urlsieve
