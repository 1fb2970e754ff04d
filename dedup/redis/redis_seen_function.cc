#include "dedup/redis/redis_seen_function.h"

#include "dedup/redis/redis_seen_function_lua.h"

namespace urlsieve {

// The source is redis_seen_function.lua, compiled in by the build (cmake/EmbedFile.cmake).
const std::string& RedisSeenLibrarySource() {
  static const std::string source(kRedisSeenFunctionLua);
  return source;
}

}  // namespace urlsieve
