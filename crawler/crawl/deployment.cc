#include "crawler/crawl/deployment.h"

namespace urlsieve {

const std::string& Deployment::node_id() const {
  static const std::string kNone;
  return kNone;
}

}  // namespace urlsieve
