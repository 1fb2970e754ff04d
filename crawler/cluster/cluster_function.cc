#include "crawler/cluster/cluster_function.h"

#include "crawler/cluster/cluster_function_lua.h"

namespace urlsieve {

// The source is cluster_function.lua, compiled in by the build (cmake/EmbedFile.cmake).
const std::string& ClusterLibrarySource() {
  static const std::string source(kClusterFunctionLua);
  return source;
}

}  // namespace urlsieve
